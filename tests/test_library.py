"""The library: cards, uploads, removal, "Add to project", the reader and the PDF file (issue 3)."""

import re
from http import HTTPStatus

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from chat.models import ChatMessage, ProjectChat
from indexing import store
from papers.models import Paper, UserPaper
from projects.models import Project, ProjectPaper
from projects.services import add_papers_to_project, create_project

pytestmark = pytest.mark.django_db


def pdf_upload(data: bytes, name: str = "paper.pdf") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/pdf")


def messages_of(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_library_shows_my_papers_as_cards_with_metadata_and_status(alice, add_paper, client_for):
    add_paper(alice, title="Attention Is All You Need", authors="Vaswani et al.", year=2017)
    add_paper(alice, title="Broken Scan", index_status="failed", index_error="The PDF has no text layer.")

    page = client_for(alice).get(reverse("papers:library")).content.decode()

    assert "Attention Is All You Need" in page
    assert "Vaswani et al." in page
    assert "2017" in page
    assert ">queued<" in page
    assert ">failed<" in page
    assert "The PDF has no text layer." in page


def test_library_does_not_show_other_users_papers(alice, mallory, add_paper, client_for):
    add_paper(mallory, title="Mallory's Secret Draft")

    page = client_for(alice).get(reverse("papers:library")).content.decode()

    assert "Mallory&#x27;s Secret Draft" not in page
    assert "Mallory's Secret Draft" not in page


def test_uploading_a_pdf_adds_it_to_my_library_and_queues_indexing(
    alice, make_pdf, client_for, index_queue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(alice).post(
            reverse("papers:upload"), {"file": pdf_upload(make_pdf(["Hello page one"]))}, follow=True
        )

    paper = Paper.objects.in_library_of(alice).get()
    assert paper.index_status == Paper.IndexStatus.PENDING
    assert paper.file.read().startswith(b"%PDF-")
    assert any("Added" in text for text in messages_of(response))
    assert index_queue() == [paper.pk]


def test_uploading_a_file_already_in_my_library_says_so_and_reuses_the_paper(alice, make_pdf, client_for):
    data = make_pdf(["The same bytes twice"])
    client = client_for(alice)
    client.post(reverse("papers:upload"), {"file": pdf_upload(data)})

    response = client.post(reverse("papers:upload"), {"file": pdf_upload(data, "renamed.pdf")}, follow=True)

    assert Paper.objects.count() == 1
    assert UserPaper.objects.filter(user=alice).count() == 1
    assert any("already in your library" in text for text in messages_of(response))


def test_a_file_another_user_uploaded_is_stored_once_and_joins_my_library(alice, bob, make_pdf, client_for):
    data = make_pdf(["A popular paper"])
    client_for(bob).post(reverse("papers:upload"), {"file": pdf_upload(data)})

    client_for(alice).post(reverse("papers:upload"), {"file": pdf_upload(data)})

    assert Paper.objects.count() == 1
    assert set(UserPaper.objects.values_list("user__username", flat=True)) == {"alice", "bob"}


def test_adding_a_file_that_is_already_indexed_says_it_is_ready_not_queued(alice, bob, make_pdf, client_for):
    data = make_pdf(["A popular paper"])
    client_for(bob).post(reverse("papers:upload"), {"file": pdf_upload(data)})
    Paper.objects.update(index_status=Paper.IndexStatus.READY)

    response = client_for(alice).post(reverse("papers:upload"), {"file": pdf_upload(data)}, follow=True)

    [message] = messages_of(response)
    assert message.endswith("it is ready to search.") and "queued" not in message


def test_a_file_that_is_not_a_pdf_is_refused_whatever_its_name(alice, client_for):
    fake = SimpleUploadedFile("paper.pdf", b"<html>not a pdf</html>", content_type="application/pdf")

    response = client_for(alice).post(reverse("papers:upload"), {"file": fake}, follow=True)

    assert Paper.objects.count() == 0
    assert "The file is not a PDF." in messages_of(response)


def test_an_empty_file_is_refused_as_empty(alice, client_for):
    empty = SimpleUploadedFile("paper.pdf", b"", content_type="application/pdf")

    response = client_for(alice).post(reverse("papers:upload"), {"file": empty}, follow=True)

    assert Paper.objects.count() == 0
    assert "The file is empty." in messages_of(response)


def test_an_upload_over_the_size_cap_is_refused_before_anything_is_stored(alice, make_pdf, client_for, settings):
    settings.UPLOAD_MAX_BYTES = 100

    response = client_for(alice).post(
        reverse("papers:upload"), {"file": pdf_upload(make_pdf(["x" * 500]))}, follow=True
    )

    assert Paper.objects.count() == 0
    [message] = messages_of(response)
    assert re.fullmatch(r"The file is \d+ (?:bytes|KB); uploads may be at most 100 bytes\.", message), message


def test_a_limit_under_one_megabyte_is_stated_in_kilobytes_not_as_0_mb(alice, client_for, settings):
    settings.UPLOAD_MAX_BYTES = 100_000
    large = SimpleUploadedFile("large.pdf", b"%PDF-1.4\n" + b"0" * 2_200_000, content_type="application/pdf")

    response = client_for(alice).post(reverse("papers:upload"), {"file": large}, follow=True)

    assert Paper.objects.count() == 0
    assert messages_of(response) == ["The file is 2.1 MB; uploads may be at most 98 KB."]


def test_removing_a_paper_asks_for_confirmation_first(alice, add_paper, client_for):
    paper = add_paper(alice, title="Keep Me For Now")

    response = client_for(alice).get(reverse("papers:remove", args=[paper.pk]))

    assert response.status_code == HTTPStatus.OK
    assert "Remove “Keep Me For Now” from your library?" in response.content.decode()
    assert UserPaper.objects.filter(user=alice, paper=paper).exists()


def test_removing_a_paper_from_my_library_removes_it_from_all_my_projects_only(alice, bob, add_paper, client_for):
    paper = add_paper(alice, title="Shared Interest")
    add_papers_to_project(project=create_project(owner=bob, name="Bob's"), papers=[paper], user=bob)
    mine = [create_project(owner=alice, name=name) for name in ("One", "Two")]
    for project in mine:
        add_papers_to_project(project=project, papers=[paper], user=alice)

    client_for(alice).post(reverse("papers:remove", args=[paper.pk]))

    assert not UserPaper.objects.filter(user=alice, paper=paper).exists()
    assert not ProjectPaper.objects.filter(project__owner=alice).exists()
    assert UserPaper.objects.filter(user=bob, paper=paper).exists()
    assert ProjectPaper.objects.filter(project__owner=bob, paper=paper).exists()
    assert Paper.objects.filter(pk=paper.pk).exists()
    assert Project.objects.filter(owner=alice, is_default=False).count() == 2


def test_removing_the_last_library_link_deletes_the_paper_row(alice, add_paper, client_for):
    paper = add_paper(alice, title="Only Mine")

    client_for(alice).post(reverse("papers:remove", args=[paper.pk]))

    assert not Paper.objects.filter(pk=paper.pk).exists()


@pytest.fixture
def chunks(request):
    """The embedded chunk store, once the core's `chunk_store` fixture exists."""
    try:
        return request.getfixturevalue("chunk_store")
    except pytest.FixtureLookupError:
        pytest.skip("needs the chunk_store fixture (embedded MongoDB-wire server) from tests/conftest.py")


def write_fake_chunks(paper: Paper, count: int = 2) -> None:
    import numpy as np

    store.write_chunks(
        [
            store.ChunkRecord(
                paper_id=paper.pk,
                paper_sha256=paper.sha256,
                chunk_index=i,
                page_number=1,
                text=f"chunk {i}",
                contextual_blurb="",
                embedding=np.ones(4, dtype=np.float32),
                embedding_model="test",
                index_version=paper.index_version,
            )
            for i in range(count)
        ]
    )


def test_a_papers_file_and_chunks_go_only_when_no_library_holds_it(
    alice, bob, add_paper, client_for, chunks, django_capture_on_commit_callbacks
):
    paper = add_paper(alice, title="Shared File")
    UserPaper.objects.create(user=bob, paper=paper)
    write_fake_chunks(paper)
    file_path = paper.file.path

    with django_capture_on_commit_callbacks(execute=True):
        client_for(alice).post(reverse("papers:remove", args=[paper.pk]))
    assert store.count_chunks(paper.pk) == 2
    assert Paper.file.field.storage.exists(paper.file.name)

    with django_capture_on_commit_callbacks(execute=True):
        client_for(bob).post(reverse("papers:remove", args=[paper.pk]))
    assert store.count_chunks(paper.pk) == 0
    assert not Paper.file.field.storage.exists(file_path)


def test_add_to_project_puts_the_paper_in_an_existing_project(alice, add_paper, client_for):
    paper = add_paper(alice)
    project = create_project(owner=alice, name="Reading group")

    response = client_for(alice).post(reverse("papers:add_to_project", args=[paper.pk]), {"project": project.pk})

    assert response.status_code == HTTPStatus.FOUND
    assert response.url == reverse("projects:detail", args=[project.pk])
    assert ProjectPaper.objects.filter(project=project, paper=paper).exists()


def test_add_to_project_can_create_a_new_project_in_place(alice, add_paper, client_for):
    paper = add_paper(alice)

    client_for(alice).post(reverse("papers:add_to_project", args=[paper.pk]), {"new_project_name": "Fresh idea"})

    project = Project.objects.get(owner=alice, name="Fresh idea")
    assert list(project.papers.all()) == [paper]


def test_add_to_project_offers_only_my_projects(alice, mallory, add_paper, client_for):
    add_paper(alice)
    create_project(owner=alice, name="Alice's project")
    create_project(owner=mallory, name="Mallory's project")

    page = client_for(alice).get(reverse("papers:library")).content.decode()

    assert "Alice&#x27;s project" in page
    assert "Mallory&#x27;s project" not in page


def test_add_to_project_refuses_a_full_project_with_the_cap_in_the_message(alice, add_paper, client_for, settings):
    settings.PROJECT_MAX_PAPERS = 1
    project = create_project(owner=alice, name="Tiny")
    add_papers_to_project(project=project, papers=[add_paper(alice, title="First")], user=alice)
    second = add_paper(alice, title="Second")

    response = client_for(alice).post(
        reverse("papers:add_to_project", args=[second.pk]), {"project": project.pk}, follow=True
    )

    assert project.project_papers.count() == 1
    assert any("at most 1 papers; this one has 1" in text for text in messages_of(response))


def test_the_reader_shows_the_paper_at_the_requested_page(alice, add_paper, client_for):
    paper = add_paper(alice, title="Deep Residual Learning", authors="He, Zhang, Ren, Sun", year=2016, page_count=12)

    response = client_for(alice).get(reverse("papers:reader", args=[paper.pk]), {"page": 7})

    page = response.content.decode()
    assert "Deep Residual Learning" in page
    assert "He, Zhang, Ren, Sun" in page
    assert "2016" in page
    # PDF.js (papers/reader.js) renders the file's page 7; "Open PDF" links the file itself.
    assert f'data-file-url="{reverse("papers:file", args=[paper.pk])}" data-page="7"' in page
    assert f'href="{reverse("papers:file", args=[paper.pk])}#page=7"' in page
    assert '<span id="reader-page">Page 7 of 12</span>' in page


def test_the_reader_keeps_the_page_within_the_paper_and_says_so(alice, add_paper, client_for):
    paper = add_paper(alice, page_count=12)
    client = client_for(alice)

    page = client.get(reverse("papers:reader", args=[paper.pk]), {"page": 99}).content.decode()

    assert "#page=12" in page
    assert "Page 12 of 12" in page
    assert "This paper has 12 pages; showing page 12." in page
    assert "This paper has" not in client.get(reverse("papers:reader", args=[paper.pk]), {"page": 12}).content.decode()


def test_the_pdf_file_is_served_inline_as_a_pdf(alice, add_paper, client_for):
    paper = add_paper(alice)

    response = client_for(alice).get(reverse("papers:file", args=[paper.pk]))

    assert response.status_code == HTTPStatus.OK
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"].startswith("inline")
    assert b"".join(response.streaming_content).startswith(b"%PDF-")


def test_library_removal_leaves_other_projects_chats_alone(alice, add_paper, client_for):
    paper = add_paper(alice)
    project = create_project(owner=alice, name="With chat")
    add_papers_to_project(project=project, papers=[paper], user=alice)
    chat = ProjectChat.objects.create(project=project)
    ChatMessage.objects.create(chat=chat, role="user", text="hello")

    client_for(alice).post(reverse("papers:remove", args=[paper.pk]))

    assert ChatMessage.objects.filter(chat=chat).count() == 1
