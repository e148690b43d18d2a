"""Several files per upload (issue 14, item 7): the library page, the project page and the API take
many PDFs at once; each goes through the one upload service (rate limit, quota, PDF checks) on its
own, so a bad file refuses itself and nothing else; one message sums the batch up."""

from __future__ import annotations

import re
from http import HTTPStatus
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from papers.models import Paper, UserPaper
from papers.services import add_paper_to_library
from projects.services import create_project

pytestmark = pytest.mark.django_db


def upload(data: bytes, name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/pdf")


def stored(media_root: Path) -> list[Path]:
    return [path for path in media_root.rglob("*") if path.is_file()]


def messages_of(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def library_files(user) -> set[str]:
    return set(UserPaper.objects.filter(user=user).values_list("filename", flat=True))


def test_five_files_at_once_are_summed_up_in_one_message(alice, make_pdf, client_for, media_root):
    kept = make_pdf(["Already here."])
    add_paper_to_library(user=alice, data=kept, filename="kept.pdf")
    files = [
        upload(make_pdf(["First."]), "first.pdf"),
        upload(b"plain text, no PDF", "notes.pdf"),
        upload(make_pdf(["Second."]), "second.pdf"),
        upload(kept, "kept-again.pdf"),
        upload(make_pdf(["Third."]), "third.pdf"),
    ]

    response = client_for(alice).post(reverse("papers:upload"), {"file": files}, follow=True)

    assert messages_of(response) == [
        "3 added, 1 already in your library, 1 refused: “notes.pdf”: The file is not a PDF."
    ]
    assert library_files(alice) == {"kept.pdf", "first.pdf", "second.pdf", "third.pdf"}
    assert len(stored(media_root)) == 4  # nothing of the refused file


def test_a_bad_file_between_good_ones_loses_nothing_else(alice, make_pdf, client_for, media_root):
    files = [
        upload(make_pdf(["Good one."]), "a.pdf"),
        upload(b"", "empty.pdf"),
        upload(b"plain text", "notes.pdf"),
        upload(make_pdf(["Good two."]), "b.pdf"),
    ]

    response = client_for(alice).post(reverse("papers:upload"), {"file": files}, follow=True)

    assert messages_of(response) == [
        "2 added, 2 refused: “empty.pdf”: The file is empty. “notes.pdf”: The file is not a PDF."
    ]
    assert library_files(alice) == {"a.pdf", "b.pdf"}
    assert Paper.objects.count() == 2 and len(stored(media_root)) == 2


def test_the_rate_limit_and_the_quota_refuse_the_files_past_them(alice, make_pdf, client_for, settings):
    settings.USER_UPLOADS_PER_MINUTE = 2
    client = client_for(alice)
    files = [upload(make_pdf([f"Rate {n}."]), f"rate-{n}.pdf") for n in range(3)]

    response = client.post(reverse("papers:upload"), {"file": files}, follow=True)

    [message] = messages_of(response)
    assert re.fullmatch(r"2 added, 1 refused: “rate-2\.pdf”: Slow down: at most 2 uploads a minute\. .*", message)
    assert library_files(alice) == {"rate-0.pdf", "rate-1.pdf"}

    settings.USER_UPLOADS_PER_MINUTE = 0
    small, large = make_pdf(["Small."]), make_pdf(["Large " * 400])
    used = sum(Paper.objects.filter(library_links__user=alice).values_list("file_size", flat=True))
    settings.LIBRARY_QUOTA_BYTES = used + len(small) + 10
    files = [upload(large, "large.pdf"), upload(small, "small.pdf")]
    [message] = messages_of(client.post(reverse("papers:upload"), {"file": files}, follow=True))
    assert message.startswith("1 added, 1 refused: “large.pdf”: Your library holds ")
    assert library_files(alice) == {"rate-0.pdf", "rate-1.pdf", "small.pdf"}


def test_one_file_keeps_the_single_upload_messages(alice, make_pdf, client_for):
    response = client_for(alice).post(reverse("papers:upload"), {"file": upload(b"nope", "x.pdf")}, follow=True)
    assert messages_of(response) == ["The file is not a PDF."]
    response = client_for(alice).post(reverse("papers:upload"), {"file": []}, follow=True)
    assert messages_of(response) == ["Choose one or more PDF files to upload."]


def test_the_library_form_is_a_plain_multi_file_input_and_the_drop_zone_a_module(alice, client_for):
    page = client_for(alice).get(reverse("papers:library")).content.decode()

    form = re.search(r'<form class="upload-form"[^>]*>.*?</form>', page, re.DOTALL)
    assert form and 'enctype="multipart/form-data"' in form.group(0) and "data-drop-zone" in form.group(0)
    assert re.search(r'<input id="library-upload" type="file" name="file"[^>]* multiple required>', form.group(0))
    scripts = re.findall(r"<script\b[^>]*>", page)
    assert '<script type="module" src="/static/papers/upload.js">' in scripts
    assert all(" src=" in tag for tag in scripts)  # no inline script: the CSP forbids them
    assert Path("papers/static/papers/upload.js").exists()


def test_the_api_takes_several_files_and_answers_for_each(alice, make_pdf, api_client_for):
    kept = make_pdf(["Kept."])
    add_paper_to_library(user=alice, data=kept, filename="kept.pdf")
    files = [upload(make_pdf(["New."]), "new.pdf"), upload(b"junk", "junk.pdf"), upload(kept, "again.pdf")]

    response = api_client_for(alice).post(reverse("api:library"), {"files": files}, format="multipart")

    assert response.status_code == HTTPStatus.CREATED
    body = response.json()
    assert (body["added"], body["already_in_library"], body["refused"]) == (1, 1, 1)
    assert [(r["filename"], r["status"]) for r in body["results"]] == [
        ("new.pdf", "added"),
        ("junk.pdf", "refused"),
        ("again.pdf", "already_in_library"),
    ]
    assert body["results"][0]["paper"]["id"] and body["results"][0]["error"] is None
    assert body["results"][1] == {
        "filename": "junk.pdf",
        "status": "refused",
        "paper": None,
        "error": {"code": "not_a_pdf", "message": "The file is not a PDF."},
    }
    assert library_files(alice) == {"kept.pdf", "new.pdf"}


def test_the_api_batch_with_nothing_added_is_200_and_file_with_files_is_refused(alice, make_pdf, api_client_for):
    client = api_client_for(alice)
    refused = client.post(reverse("api:library"), {"files": [upload(b"junk", "j.pdf")]}, format="multipart")
    assert refused.status_code == HTTPStatus.OK and refused.json()["refused"] == 1

    both = {"file": upload(make_pdf(["A."]), "a.pdf"), "files": [upload(make_pdf(["B."]), "b.pdf")]}
    response = client.post(reverse("api:library"), both, format="multipart")
    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert UserPaper.objects.filter(user=alice).count() == 0


def test_the_project_page_takes_several_files_and_refuses_those_past_its_room(
    alice, make_pdf, client_for, settings, media_root
):
    settings.PROJECT_MAX_PAPERS = 2
    project = create_project(owner=alice, name="Small")
    files = [upload(make_pdf([f"Paper {n}."]), f"p{n}.pdf") for n in range(3)]

    response = client_for(alice).post(reverse("projects:upload", args=[project.pk]), {"file": files}, follow=True)

    [message] = messages_of(response)
    assert message == (
        "2 added, 1 refused: “p2.pdf”: A project holds at most 2 papers; this one has 2, so there is room for 0 more."
    )
    assert set(project.papers.values_list("pk", flat=True)) == set(Paper.objects.values_list("pk", flat=True))
    assert library_files(alice) == {"p0.pdf", "p1.pdf"} and len(stored(media_root)) == 2
    again = client_for(alice).post(
        reverse("projects:upload", args=[project.pk]),
        {"file": [upload(make_pdf(["Paper 0."]), "p0.pdf"), upload(b"x", "x.pdf")]},
        follow=True,
    )
    assert messages_of(again) == ["1 already in this project, 1 refused: “x.pdf”: The file is not a PDF."]


def test_an_outsider_cannot_batch_upload_into_a_project(alice, mallory, make_pdf, client_for):
    project = create_project(owner=alice, name="Private")
    files = [upload(make_pdf(["Sneaky."]), "s.pdf"), upload(make_pdf(["Sneakier."]), "t.pdf")]

    response = client_for(mallory).post(reverse("projects:upload", args=[project.pk]), {"file": files})

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert Paper.objects.count() == 0
