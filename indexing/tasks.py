"""Background tasks (django-tasks; worker: `manage.py db_worker`)."""

from django_tasks import task

from indexing import services


@task()
def index_paper(paper_id: int) -> None:
    """Index one paper in the worker; see `indexing.services.index_paper`."""
    services.index_paper(paper_id=paper_id)
