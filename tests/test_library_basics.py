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
