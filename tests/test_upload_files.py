"""Stored files and what an upload may cost: refused uploads, rolled-back uploads and cap-refused
batch files never stay in storage; `check_index` finds files no paper holds and `--fix` removes
them; junk behind a PDF header is refused at upload by a fast structural check; a library has a
quota; failed papers do not count against the project cap, and a batch that overflows it says so
up front and puts the rest in the library only."""

from __future__ import annotations

import io
import os
import re
import time
from http import HTTPStatus
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from papers.models import Paper, UserPaper
from papers.services import LibraryQuotaError, add_paper_to_library
from projects.models import ProjectPaper
from projects.services import ProjectFullError, add_papers_to_project, create_project, upload_paper_to_project
from tests.support.indexing import indexed_paper, new_paper, use_stub_embeddings
from tests.test_check_index import check

pytestmark = pytest.mark.django_db


def stored(media_root: Path) -> list[str]:
    return sorted(str(path.relative_to(media_root)) for path in media_root.rglob("*") if path.is_file())


def pdf_upload(data: bytes, name: str = "upload.pdf") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/pdf")


# --- refused and rolled-back uploads leave nothing behind -----------------------------------------


def test_junk_behind_a_pdf_header_is_refused_at_upload_before_any_parse(
    alice, api_client_for, media_root, index_queue, django_capture_on_commit_callbacks
):
    junk = b"%PDF-1.7\n" + os.urandom(49 * 1024 * 1024)

    with django_capture_on_commit_callbacks(execute=True):
        response = api_client_for(alice).post("/api/library/", {"file": pdf_upload(junk)}, format="multipart")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json()["error"]["code"] == "unreadable_pdf"
    assert "damaged or not a PDF" in response.json()["error"]["message"]
    assert Paper.objects.count() == 0 and index_queue() == [] and stored(media_root) == []


def test_a_pdf_with_more_pages_than_allowed_is_refused_with_the_count(
    alice, client_for, settings, make_pdf, media_root
):
    settings.PDF_MAX_PAGES = 2

    page = client_for(alice).post(
        "/papers/upload/", {"file": pdf_upload(make_pdf(["one", "two", "three"]))}, follow=True
    )

    assert "The PDF has 3 pages; at most 2 are accepted." in page.content.decode()
    assert Paper.objects.count() == 0 and stored(media_root) == []


def test_an_encrypted_pdf_is_refused_at_upload_asking_for_the_password(alice, make_pdf, media_root):
    from papers.pdfium import UnreadablePdfError

    with pytest.raises(UnreadablePdfError, match="encrypted and needs a password"):
        add_paper_to_library(user=alice, data=make_pdf(["secret"], user_password="pw"), filename="locked.pdf")
    assert stored(media_root) == []


def test_an_upload_past_the_library_quota_is_refused_and_stores_nothing(alice, bob, settings, make_pdf, media_root):
    first, second = make_pdf(["The first paper of the library."]), make_pdf(["One paper too many."])
    settings.LIBRARY_QUOTA_BYTES = len(first) + len(second) - 1
    add_paper_to_library(user=alice, data=first, filename="first.pdf")
    add_paper_to_library(user=bob, data=second, filename="bobs.pdf")

    with pytest.raises(LibraryQuotaError, match="does not fit"):
        add_paper_to_library(user=alice, data=second, filename="second.pdf")

    assert not UserPaper.objects.filter(user=alice, paper__sha256=Paper.objects.get(library_links__user=bob).sha256)
    assert len(stored(media_root)) == 2


def test_a_small_quota_is_stated_in_kilobytes_not_as_0_mb(alice, settings, make_pdf, media_root):
    first, second = make_pdf(["The first paper of the library."]), make_pdf(["One paper too many."])
    settings.LIBRARY_QUOTA_BYTES = len(first) + len(second) - 1
    add_paper_to_library(user=alice, data=first, filename="first.pdf")

    with pytest.raises(LibraryQuotaError) as refused:
        add_paper_to_library(user=alice, data=second, filename="second.pdf")

    size = r"\d+ (?:bytes|KB)"
    assert re.fullmatch(
        rf"Your library holds {size} of its {size}; this {size} file does not fit\. Remove papers you no longer need\.",
        refused.value.message,
    )


def test_the_quota_error_reaches_the_api_with_its_code(alice, settings, api_client_for, make_pdf):
    settings.LIBRARY_QUOTA_BYTES = 10
    response = api_client_for(alice).post("/api/library/", {"file": pdf_upload(make_pdf(["x"]))}, format="multipart")
    assert (response.status_code, response.json()["error"]["code"]) == (
        HTTPStatus.BAD_REQUEST,
        "library_quota_exceeded",
    )


def test_an_upload_refused_by_a_full_project_leaves_no_file(alice, settings, make_pdf, media_root):
    settings.PROJECT_MAX_PAPERS = 1
    project = create_project(owner=alice, name="Full")
    add_papers_to_project(project=project, papers=[new_paper(alice, ["Already here."])], user=alice)
    before = stored(media_root)

    with pytest.raises(ProjectFullError):
        upload_paper_to_project(project=project, user=alice, data=make_pdf(["Does not fit."]), filename="extra.pdf")

    assert stored(media_root) == before
    assert Paper.objects.count() == 1


# --- check_index finds and removes files no paper holds -------------------------------------------


def plant_file(media_root: Path, name: str, *, age_seconds: float) -> Path:
    path = media_root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"%PDF-1.4 left behind")
    then = time.time() - age_seconds
    os.utime(path, (then, then))
    return path


def test_check_index_reports_files_no_paper_holds_and_fix_removes_only_those(
    alice, settings, openai_stub, chunk_store, media_root
):
    use_stub_embeddings(settings, openai_stub)
    paper = indexed_paper(alice, ["Paxos reaches agreement among unreliable processors."])
    orphan = plant_file(media_root, "papers/ab/" + "ab" * 32 + ".pdf", age_seconds=3600)
    committing = plant_file(media_root, "papers/cd/" + "cd" * 32 + ".pdf", age_seconds=5)

    output, code = check()
    assert code == 1
    assert "orphan_files: 1 stored file(s) belong to no paper." in output
    assert str(orphan.relative_to(media_root)) in output

    output, code = check(fix=True)
    assert code == 0 and "[fixed] orphan_files" in output
    assert not orphan.exists()
    assert committing.exists() and Path(paper.file.path).exists()
    assert check() == (check()[0], 0)


# --- the project cap and batches ------------------------------------------------------------------


def test_failed_papers_do_not_count_against_the_project_cap(alice, settings, api_client_for):
    settings.PROJECT_MAX_PAPERS = 2
    project = create_project(owner=alice, name="Capped")
    good, broken = new_paper(alice, ["A good paper."]), new_paper(alice, ["A broken paper."])
    add_papers_to_project(project=project, papers=[good, broken], user=alice)
    Paper.objects.filter(pk=broken.pk).update(index_status=Paper.IndexStatus.FAILED, index_error="Unreadable.")

    assert api_client_for(alice).get(f"/api/projects/{project.pk}/").json()["room"] == 1
    add_papers_to_project(project=project, papers=[new_paper(alice, ["A third paper."])], user=alice)
    assert ProjectPaper.objects.filter(project=project).count() == 3
    with pytest.raises(ProjectFullError) as refused:
        add_papers_to_project(project=project, papers=[new_paper(alice, ["A fourth paper."])], user=alice)
    assert str(refused.value) == (
        "A project holds at most 2 papers; this one has 2 (and 1 that could not be indexed, which do not count), "
        "so there is room for 0 more."
    )


def test_a_batch_over_the_cap_says_so_up_front_and_puts_the_rest_in_the_library_only(
    alice, settings, openai_stub, chunk_store, make_pdf, tmp_path, media_root
):
    use_stub_embeddings(settings, openai_stub)
    settings.PROJECT_MAX_PAPERS = 3
    folder = tmp_path / "batch"
    folder.mkdir()
    for n in range(5):
        (folder / f"paper-{n}.pdf").write_bytes(make_pdf([f"Paper {n} on quorum systems and their load."]))
    out = io.StringIO()

    call_command("ingest_papers", str(folder), user="alice", project="Quorums", stdout=out)

    lines = out.getvalue().splitlines()
    assert lines[0] == "5 files, room for 3 in Quorums: the other 2 go to your library only."
    assert lines[1].startswith("[1/5] ")
    assert "in the library only 2" in lines[-1]
    assert UserPaper.objects.filter(user=alice).count() == 5
    assert ProjectPaper.objects.filter(project__name="Quorums").count() == 3
    assert len(stored(media_root)) == 5
