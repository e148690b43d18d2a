"""Staff: the Django admin for every model, with search, filters and the re-index action."""

from http import HTTPStatus

import pytest
from django.contrib.admin.sites import site
from django.urls import reverse

from chat.models import ChatMessage, PaperChat, ProjectChat
from indexing.models import ContextualBlurb
from papers.models import Figure, Paper, UserPaper
from projects.models import Project, ProjectPaper
from projects.services import add_papers_to_project, create_project

pytestmark = pytest.mark.django_db

MODELS = [Paper, UserPaper, Figure, Project, ProjectPaper, ProjectChat, ChatMessage, PaperChat, ContextualBlurb]


@pytest.fixture
def content(alice, add_paper):
    """One row of every model."""
    paper = add_paper(alice, title="Admin Paper", authors="Ada Lovelace", doi="10.1000/xyz")
    project = create_project(owner=alice, name="Admin Project")
    add_papers_to_project(project=project, papers=[paper], user=alice)
    chat = ProjectChat.objects.create(project=project)
    ChatMessage.objects.create(chat=chat, role="user", text="hello")
    PaperChat.objects.create(user=alice, paper=paper)
    ContextualBlurb.objects.create(paper=paper, model="m", text_sha256="0" * 64, blurb="A blurb.")
    Figure.objects.create(
        paper=paper, kind="figure", label="Figure 1", page_number=1, bbox=[0, 0, 9, 9], image="f.png", width=1, height=1
    )
    return paper


def admin_url(model, view: str = "changelist", *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def test_every_model_is_registered_in_the_admin():
    assert all(site.is_registered(model) for model in MODELS)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_staff_can_list_and_open_every_model(staff, content, client_for, model):
    client = client_for(staff)

    assert client.get(admin_url(model)).status_code == HTTPStatus.OK
    row = model.objects.first()
    assert client.get(admin_url(model, "change", row.pk)).status_code == HTTPStatus.OK


def test_the_paper_list_shows_status_failure_reason_and_counts(staff, content, client_for):
    Paper.objects.filter(pk=content.pk).update(
        index_status="failed", index_error="The PDF needs a password.", page_count=9, chunk_count=0
    )

    page = client_for(staff).get(admin_url(Paper)).content.decode()

    assert "Admin Paper" in page
    assert "The PDF needs a password." in page
    assert "Failed" in page


@pytest.mark.parametrize("query", ["Admin Paper", "Lovelace", "10.1000/xyz"])
def test_staff_can_search_papers_by_title_authors_or_doi(staff, content, add_paper, alice, client_for, query):
    add_paper(alice, title="Unrelated")

    response = client_for(staff).get(admin_url(Paper), {"q": query})

    assert list(response.context["cl"].result_list) == [content]


def test_staff_can_filter_papers_by_status(staff, content, add_paper, alice, client_for):
    ready = add_paper(alice, title="Done")
    Paper.objects.filter(pk=ready.pk).update(index_status="ready")

    response = client_for(staff).get(admin_url(Paper), {"index_status__exact": "ready"})

    assert list(response.context["cl"].result_list) == [ready]


def test_the_reindex_action_queues_the_selected_papers(
    staff, content, client_for, index_queue, django_capture_on_commit_callbacks
):
    Paper.objects.filter(pk=content.pk).update(index_status="failed", index_error="Timed out.")

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(staff).post(
            admin_url(Paper), {"action": "reindex", "_selected_action": [content.pk]}, follow=True
        )

    content.refresh_from_db()
    assert (content.index_status, content.index_error) == ("pending", "")
    assert index_queue() == [content.pk]
    assert "Queued 1 paper(s) for indexing." in response.content.decode()


def test_a_researcher_is_not_let_into_the_admin(alice, client_for):
    response = client_for(alice).get(admin_url(Paper))

    assert response.status_code == HTTPStatus.FOUND
    assert "/admin/login/" in response.url
