"""The signal hooks that run indexing: the domain apps announce what happened to papers and
projects, and indexing reacts here. Connected in `IndexingConfig.ready()`.

- A paper row is created (`post_save`; `papers_bulk_created` for `bulk_create`): queue its first
  indexing after commit.
- A paper joins a project (`post_save` of ProjectPaper; `links_bulk_created` for `bulk_create`,
  which `project.papers.add` goes through too): after commit, queue it when it has no chunks.
- A paper row is deleted (`post_delete`, sent per row by `QuerySet.delete()` too, since a listener
  keeps Django off its fast delete path): delete its chunks after commit.
- Reprocess is asked for (`reprocess_requested`): queue a rebuild after commit.

A receiver only reacts; the rules (who may add what, the cap, when a paper row goes) stay in the
domain services. Unlinking a paper from a project or deleting a project leaves papers and chunks
alone: the paper is still in a library.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models.signals import post_delete, post_save

from indexing import services
from papers.models import Paper
from papers.signals import papers_bulk_created
from projects.models import ProjectPaper
from projects.signals import links_bulk_created, reprocess_requested


def paper_saved(sender: type[Paper], instance: Paper, created: bool, raw: bool = False, **kwargs: Any) -> None:
    if created and not raw:  # raw: a fixture being loaded, whose chunks come with it or not at all
        services.queue_new_paper(paper_id=instance.pk)


def papers_created(sender: type[Paper], objs: Sequence[Paper], **kwargs: Any) -> None:
    for paper in objs:
        if paper.pk is not None:
            services.queue_new_paper(paper_id=paper.pk)


def link_saved(
    sender: type[ProjectPaper], instance: ProjectPaper, created: bool, raw: bool = False, **kwargs: Any
) -> None:
    if created and not raw:
        services.queue_unindexed(paper_ids=[instance.paper_id])


def links_created(sender: type[ProjectPaper], objs: Sequence[ProjectPaper], **kwargs: Any) -> None:
    services.queue_unindexed(paper_ids=[link.paper_id for link in objs])


def paper_deleted(sender: type[Paper], instance: Paper, **kwargs: Any) -> None:
    services.delete_chunks_after_commit(paper_id=instance.pk)


def reprocess(sender: object, paper: Paper, **kwargs: Any) -> None:
    services.mark_for_reindex(paper=paper)


def connect() -> None:
    """Subscribe the hooks (idempotent: each has a dispatch_uid)."""
    post_save.connect(paper_saved, sender=Paper, dispatch_uid="indexing.paper_saved")
    papers_bulk_created.connect(papers_created, sender=Paper, dispatch_uid="indexing.papers_created")
    post_save.connect(link_saved, sender=ProjectPaper, dispatch_uid="indexing.link_saved")
    links_bulk_created.connect(links_created, sender=ProjectPaper, dispatch_uid="indexing.links_created")
    post_delete.connect(paper_deleted, sender=Paper, dispatch_uid="indexing.paper_deleted")
    reprocess_requested.connect(reprocess, dispatch_uid="indexing.reprocess")
