"""Library basics: Retry on failed papers, sorting, page count and abstract on the cards (issue 14)."""

from http import HTTPStatus

import pytest
from django.test import Client
from django.urls import reverse

from papers.models import Paper

pytestmark = pytest.mark.django_db


def test_a_failed_paper_has_a_retry_button_that_clears_the_failure_and_queues_indexing(
    alice, add_paper, client_for, index_queue, django_capture_on_commit_callbacks
):
    paper = add_paper(alice, title="Broken Scan", index_status="failed", index_error="The service timed out.")
    client = client_for(alice)
    retry_url = reverse("papers:retry", args=[paper.pk])
    assert retry_url in client.get(reverse("papers:library")).content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(retry_url)

    assert response.status_code == HTTPStatus.FOUND
    paper.refresh_from_db()
    assert paper.index_status == Paper.IndexStatus.PENDING and paper.index_error == ""
    assert paper.pk in index_queue()


def test_a_ready_paper_has_no_retry_button(alice, add_paper, client_for):
    paper = add_paper(alice, title="Fine Paper", index_status="ready")
    page = client_for(alice).get(reverse("papers:library")).content.decode()
    assert reverse("papers:retry", args=[paper.pk]) not in page


def test_retry_needs_a_post_with_a_csrf_token(alice, add_paper):
    paper = add_paper(alice, title="Broken Scan", index_status="failed", index_error="Timed out.")
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    url = reverse("papers:retry", args=[paper.pk])

    assert client.get(url).status_code == HTTPStatus.METHOD_NOT_ALLOWED
    assert client.post(url).status_code == HTTPStatus.FORBIDDEN
    paper.refresh_from_db()
    assert paper.index_status == Paper.IndexStatus.FAILED


def test_only_the_owner_of_the_library_entry_may_retry(
    alice, mallory, add_paper, client_for, index_queue, django_capture_on_commit_callbacks
):
    paper = add_paper(alice, title="Broken Scan", index_status="failed", index_error="Timed out.")

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(mallory).post(reverse("papers:retry", args=[paper.pk]))

    assert response.status_code == HTTPStatus.NOT_FOUND
    paper.refresh_from_db()
    assert paper.index_status == Paper.IndexStatus.FAILED and index_queue() == []


@pytest.fixture
def three_papers(alice, add_paper):
    """Added in this order: "beta" 2010, "Alpha" undated, "gamma" 2020."""
    beta = add_paper(alice, title="beta systems", year=2010)
    alpha = add_paper(alice, title="Alpha consensus", year=None)
    gamma = add_paper(alice, title="gamma storage", year=2020)
    return alpha, beta, gamma


def card_order(page: str, titles: list[str]) -> list[str]:
    return sorted(titles, key=page.index)


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("", ["gamma storage", "Alpha consensus", "beta systems"]),
        ("added", ["gamma storage", "Alpha consensus", "beta systems"]),
        ("year", ["gamma storage", "beta systems", "Alpha consensus"]),
        ("title", ["Alpha consensus", "beta systems", "gamma storage"]),
    ],
)
def test_the_library_page_sorts_by_added_year_or_title(alice, three_papers, client_for, sort, expected):
    page = client_for(alice).get(reverse("papers:library"), {"sort": sort}).content.decode()
    assert card_order(page, expected) == expected


def test_the_library_api_sorts_by_the_corrected_year_next_to_the_filters(alice, three_papers, api_client_for):
    alpha, beta, gamma = three_papers
    client = api_client_for(alice)
    client.patch(f"/api/library/{alpha.pk}/", {"year": 2030}, format="json")

    by_year = client.get("/api/library/", {"sort": "year"}).json()
    assert [paper["id"] for paper in by_year] == [alpha.pk, gamma.pk, beta.pk]
    filtered = client.get("/api/library/", {"sort": "title", "after": 2015}).json()
    assert [paper["id"] for paper in filtered] == [alpha.pk, gamma.pk]
    assert client.get("/api/library/", {"sort": "size"}).status_code == HTTPStatus.BAD_REQUEST


def test_a_library_card_shows_the_page_count_and_the_start_of_the_abstract(alice, add_paper, client_for):
    abstract = "We describe a lock service. " + " ".join(f"word{n}" for n in range(100))
    add_paper(alice, title="Chubby", page_count=14, abstract=abstract)

    page = client_for(alice).get(reverse("papers:library")).content.decode()

    assert "14 pages" in page
    assert "We describe a lock service." in page
    assert "word30" in page and "word90" not in page
