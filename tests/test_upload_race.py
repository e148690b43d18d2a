"""The same new file uploaded at the same moment, by one user twice or by two users: both succeed,
one paper row, one stored file, both library entries; and what an upload tells about other users
(nothing: neither their file names nor whether they hold the bytes).

The race is made deterministic on PostgreSQL: the first upload's transaction stays open after its
insert until the second upload is seen waiting on the row lock (`pg_stat_activity`), exactly the
moment two requests collide on the unique SHA-256.
"""

from __future__ import annotations

import threading
import time
from http import HTTPStatus
from pathlib import Path

import pytest
from django.db import connection, connections, transaction

from papers.models import Paper, UserPaper
from papers.services import add_paper_to_library
from tests.conftest import PAPERS_DIR

CASES_DIR = PAPERS_DIR.parent / "cases"


@pytest.fixture
def race_pdf(make_pdf) -> bytes:
    """/work/shared/cases/race.pdf where present, else a generated PDF."""
    path = CASES_DIR / "race.pdf"
    return path.read_bytes() if path.exists() else make_pdf(["A small paper uploaded twice at once."])


def stored_files(media_root: Path) -> list[Path]:
    return sorted(path for path in media_root.rglob("*") if path.is_file())


def wait_until_a_backend_waits_on_a_lock(timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    with connections["default"].cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.05)
    raise AssertionError("the second upload never waited for the first one's row")


def upload_at_once(first_user, second_user, data: bytes) -> tuple[list, list[BaseException]]:
    """Upload *data* as *first_user* and, while that transaction is still open after its insert,
    as *second_user*; return both results and any errors."""
    results: list = []
    errors: list[BaseException] = []
    inserted, release = threading.Event(), threading.Event()

    def first() -> None:
        try:
            with transaction.atomic():
                results.append(add_paper_to_library(user=first_user, data=data, filename="first-upload.pdf"))
                inserted.set()
                release.wait(30)
        except BaseException as exc:
            errors.append(exc)
        finally:
            inserted.set()
            connection.close()

    def second() -> None:
        inserted.wait(30)
        try:
            results.append(add_paper_to_library(user=second_user, data=data, filename="second-upload.pdf"))
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    try:
        inserted.wait(30)
        wait_until_a_backend_waits_on_a_lock()
    finally:
        release.set()
        for thread in threads:
            thread.join(60)
    return results, errors


@pytest.fixture
def postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("concurrent writers race only on PostgreSQL; SQLite runs IMMEDIATE transactions one at a time")


@pytest.mark.django_db(transaction=True)
def test_two_users_uploading_the_same_new_file_at_once_share_one_paper_and_one_file(
    postgresql_only, alice, bob, race_pdf, media_root
):
    results, errors = upload_at_once(alice, bob, race_pdf)

    assert errors == []
    assert len(results) == 2
    paper = Paper.objects.get()
    assert {link.user for link in UserPaper.objects.filter(paper=paper)} == {alice, bob}
    assert stored_files(media_root) == [media_root / paper.file.name]
    assert (media_root / paper.file.name).read_bytes() == race_pdf


@pytest.mark.django_db(transaction=True)
def test_one_user_uploading_the_same_new_file_twice_at_once_gets_it_once(postgresql_only, alice, race_pdf, media_root):
    results, errors = upload_at_once(alice, alice, race_pdf)

    assert errors == []
    assert sorted(added.already_in_library for added in results) == [False, True]
    paper = Paper.objects.get()
    assert UserPaper.objects.get().user == alice
    assert stored_files(media_root) == [media_root / paper.file.name]


# --- what an upload tells about other users -------------------------------------------------------


@pytest.mark.django_db
def test_an_upload_answers_the_same_whether_or_not_someone_else_stored_the_bytes(alice, bob, api_client_for, make_pdf):
    known, fresh = make_pdf(["Stored by alice first."]), make_pdf(["Never seen before."])
    api_client_for(alice).post("/api/library/", {"file": _file(known, "a.pdf")}, format="multipart")

    bob_api = api_client_for(bob)
    of_known = bob_api.post("/api/library/", {"file": _file(known, "k.pdf")}, format="multipart")
    of_fresh = bob_api.post("/api/library/", {"file": _file(fresh, "f.pdf")}, format="multipart")

    assert of_known.status_code == of_fresh.status_code == HTTPStatus.CREATED
    assert set(of_known.json()) == set(of_fresh.json()) == {"paper", "already_in_library"}
    assert of_known.json()["already_in_library"] is of_fresh.json()["already_in_library"] is False
    assert set(of_known.json()["paper"]) == set(of_fresh.json()["paper"])


@pytest.mark.django_db
def test_a_file_name_is_shown_only_to_the_user_who_uploaded_it(alice, bob, client_for, api_client_for, make_pdf):
    from projects.services import add_papers_to_project, create_project

    data = make_pdf(["Dear diary, the consensus protocol failed again."])
    api_client_for(alice).post(
        "/api/library/", {"file": _file(data, "alice-private-diary-2026.pdf")}, format="multipart"
    )
    upload = api_client_for(bob).post("/api/library/", {"file": _file(data, "scan.pdf")}, format="multipart")
    paper = Paper.objects.get()
    add_papers_to_project(project=create_project(owner=bob, name="Bob's"), papers=[paper], user=bob)

    bob_pages = [
        client_for(bob).get(url).content.decode()
        for url in ("/papers/", f"/papers/{paper.pk}/read/", f"/projects/{paper.project_links.get().project_id}/")
    ]
    bob_api = [api_client_for(bob).get(url).content.decode() for url in ("/api/library/", f"/api/papers/{paper.pk}/")]
    bob_file = client_for(bob).get(f"/papers/{paper.pk}/file/")

    assert upload.json()["paper"]["title"] == "scan.pdf"
    for text in [*bob_pages, *bob_api, bob_file["Content-Disposition"], upload.content.decode()]:
        assert "private-diary" not in text
    assert "scan.pdf" in bob_pages[0]
    assert "alice-private-diary-2026.pdf" in client_for(alice).get("/papers/").content.decode()


def _file(data: bytes, name: str):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data, content_type="application/pdf")
