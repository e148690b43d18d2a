"""Projects: the list, the project page, adding and removing papers, the cap, the chat panel (issue 3)."""

from http import HTTPStatus

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.template import Context, Template
from django.urls import reverse

from chat.models import ChatMessage, ProjectChat
from papers.models import Paper, UserPaper
from projects.models import Project, ProjectPaper
from projects.services import add_papers_to_project, create_project

pytestmark = pytest.mark.django_db


def pdf_upload(data: bytes, name: str = "paper.pdf") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/pdf")


def messages_of(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


@pytest.fixture
def project(alice):
    return create_project(owner=alice, name="Transformers", description="Attention papers")


# --- story 1: create, list, open, rename, describe, delete ----------------------------------------


def test_creating_a_project_with_a_name_and_description_opens_it(alice, client_for):
    response = client_for(alice).post(reverse("projects:create"), {"name": "Sleep", "description": "REM studies"})

    project = Project.objects.get(owner=alice, is_default=False)
    assert (project.name, project.description) == ("Sleep", "REM studies")
    assert response.url == reverse("projects:detail", args=[project.pk])


def test_creating_a_project_without_a_name_is_refused(alice, client_for):
    response = client_for(alice).post(reverse("projects:create"), {"name": "   "}, follow=True)

    assert not Project.objects.filter(is_default=False).exists()
    assert any("name" in text for text in messages_of(response))


def test_a_second_project_with_a_name_i_already_use_is_refused_but_others_may_use_it(alice, mallory, client_for):
    create_project(owner=alice, name="Sleep")
    response = client_for(alice).post(reverse("projects:create"), {"name": " sleep "}, follow=True)

    assert Project.objects.filter(owner=alice, is_default=False).count() == 1
    assert any("already have a project named" in text for text in messages_of(response))
    assert create_project(owner=mallory, name="Sleep").owner == mallory


def test_renaming_a_project_to_a_name_i_already_use_is_refused(alice):
    from projects.services import ProjectNameTakenError, update_project

    create_project(owner=alice, name="Sleep")
    dreams = create_project(owner=alice, name="Dreams")
    with pytest.raises(ProjectNameTakenError):
        update_project(project=dreams, name="SLEEP")
    assert update_project(project=dreams, name="Dreams").name == "Dreams"


def test_the_project_list_shows_all_my_projects_as_cards_and_no_one_elses(alice, mallory, client_for):
    create_project(owner=alice, name="First of mine")
    create_project(owner=alice, name="Second of mine", description="With a description")
    create_project(owner=mallory, name="Not yours")

    page = client_for(alice).get(reverse("projects:list")).content.decode()

    assert "First of mine" in page
    assert "Second of mine" in page
    assert "With a description" in page
    assert "Not yours" not in page


def test_the_projects_path_leads_to_the_project_list(alice, client_for):
    response = client_for(alice).get("/projects/", follow=True)

    assert response.redirect_chain == [(reverse("projects:list"), HTTPStatus.FOUND)]
    assert response.status_code == HTTPStatus.OK


def test_opening_a_project_shows_its_papers_with_status_chips(alice, project, add_paper, client_for):
    ready, failed, indexing = (add_paper(alice, title=t) for t in ("Ready Paper", "Failed Paper", "Busy Paper"))
    add_papers_to_project(project=project, papers=[ready, failed, indexing], user=alice)
    # Statuses as the indexer leaves them (adding a paper queues it, so set them afterwards).
    Paper.objects.filter(pk=ready.pk).update(index_status="ready")
    Paper.objects.filter(pk=failed.pk).update(index_status="failed", index_error="The PDF is encrypted.")
    Paper.objects.filter(pk=indexing.pk).update(index_status="indexing")

    page = client_for(alice).get(reverse("projects:detail", args=[project.pk])).content.decode()

    assert "Ready Paper" in page and "Failed Paper" in page and "Busy Paper" in page
    assert f'data-paper-id="{failed.pk}" data-status="failed"' in page
    assert "The PDF is encrypted." in page
    assert ">indexing…<" in page
    assert reverse("projects:reprocess", args=[project.pk, failed.pk]) in page
    assert reverse("projects:reprocess", args=[project.pk, ready.pk]) not in page


def test_renaming_and_describing_a_project(alice, project, client_for):
    client_for(alice).post(
        reverse("projects:update", args=[project.pk]), {"name": "Renamed", "description": "New words"}
    )

    project.refresh_from_db()
    assert (project.name, project.description) == ("Renamed", "New words")


def test_deleting_a_project_asks_for_confirmation_first(alice, project, client_for):
    response = client_for(alice).get(reverse("projects:delete", args=[project.pk]))

    assert response.status_code == HTTPStatus.OK
    assert Project.objects.filter(pk=project.pk).exists()


def test_deleting_a_project_keeps_its_papers_and_their_chunks(
    alice, project, add_paper, client_for, django_capture_on_commit_callbacks
):
    paper = add_paper(alice, index_status="ready", chunk_count=12)
    other = create_project(owner=alice, name="Other")
    add_papers_to_project(project=project, papers=[paper], user=alice)
    add_papers_to_project(project=other, papers=[paper], user=alice)
    chat = ProjectChat.objects.create(project=project)
    ChatMessage.objects.create(chat=chat, role="user", text="hello")

    with django_capture_on_commit_callbacks() as callbacks:
        response = client_for(alice).post(reverse("projects:delete", args=[project.pk]))

    assert response.url == reverse("projects:list")
    assert not Project.objects.filter(pk=project.pk).exists()
    assert not ProjectPaper.objects.filter(project_id=project.pk).exists()
    assert not ChatMessage.objects.filter(chat_id=chat.pk).exists()
    paper.refresh_from_db()
    assert paper.chunk_count == 12
    assert UserPaper.objects.filter(user=alice, paper=paper).exists()
    assert ProjectPaper.objects.filter(project=other, paper=paper).exists()
    assert callbacks == []  # nothing scheduled: no file or chunk deletion


# --- story 2: add from the library, several projects, remove non-destructively --------------------


def test_adding_papers_from_my_library_with_the_picker(alice, project, add_paper, client_for):
    first, second = add_paper(alice, title="One"), add_paper(alice, title="Two")

    client_for(alice).post(reverse("projects:add_papers", args=[project.pk]), {"papers": [first.pk, second.pk]})

    assert set(project.papers.all()) == {first, second}


def test_the_same_paper_can_be_in_several_projects(alice, project, add_paper, client_for):
    paper = add_paper(alice)
    other = create_project(owner=alice, name="Other")
    client = client_for(alice)

    for target in (project, other):
        client.post(reverse("projects:add_papers", args=[target.pk]), {"papers": [paper.pk]})

    assert ProjectPaper.objects.filter(paper=paper).count() == 2


def test_the_picker_offers_only_my_library_papers_not_already_in_the_project(
    alice, mallory, project, add_paper, client_for
):
    inside = add_paper(alice, title="Already Inside")
    add_papers_to_project(project=project, papers=[inside], user=alice)
    add_paper(alice, title="Waiting Outside")
    add_paper(mallory, title="Mallory Only")

    page = client_for(alice).get(reverse("projects:detail", args=[project.pk])).content.decode()
    picker = page[page.index('id="paper-picker"') : page.index("</form>", page.index('id="paper-picker"'))]

    assert "Waiting Outside" in picker
    assert "Already Inside" not in picker
    assert "Mallory Only" not in page


def test_removing_a_paper_from_a_project_leaves_library_other_projects_and_index_alone(
    alice, project, add_paper, client_for, django_capture_on_commit_callbacks
):
    paper = add_paper(alice, index_status="ready", chunk_count=5)
    other = create_project(owner=alice, name="Other")
    add_papers_to_project(project=project, papers=[paper], user=alice)
    add_papers_to_project(project=other, papers=[paper], user=alice)

    with django_capture_on_commit_callbacks() as callbacks:
        client_for(alice).post(reverse("projects:remove_paper", args=[project.pk, paper.pk]))

    assert not ProjectPaper.objects.filter(project=project, paper=paper).exists()
    assert ProjectPaper.objects.filter(project=other, paper=paper).exists()
    assert UserPaper.objects.filter(user=alice, paper=paper).exists()
    paper.refresh_from_db()
    assert paper.chunk_count == 5
    assert callbacks == []


# --- story 3: upload from the project page joins the library in the same transaction -------------


def test_uploading_on_the_project_page_adds_the_paper_to_library_and_project(
    alice, project, make_pdf, client_for, index_queue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(alice).post(
            reverse("projects:upload", args=[project.pk]), {"file": pdf_upload(make_pdf(["Fresh upload"]))}, follow=True
        )

    paper = Paper.objects.get()
    assert UserPaper.objects.filter(user=alice, paper=paper).exists()
    assert ProjectPaper.objects.filter(project=project, paper=paper).exists()
    assert index_queue() == [paper.pk]
    assert any("your library and this project" in text for text in messages_of(response))


def test_uploading_a_file_already_in_my_library_to_a_project_says_so(alice, project, make_pdf, client_for):
    data = make_pdf(["Known bytes"])
    client = client_for(alice)
    client.post(reverse("papers:upload"), {"file": pdf_upload(data)})

    response = client.post(reverse("projects:upload", args=[project.pk]), {"file": pdf_upload(data)}, follow=True)

    assert Paper.objects.count() == 1
    assert project.papers.count() == 1
    assert any("already in your library" in text for text in messages_of(response))


def test_an_upload_to_a_full_project_leaves_nothing_behind(alice, project, add_paper, make_pdf, client_for, settings):
    settings.PROJECT_MAX_PAPERS = 1
    add_papers_to_project(project=project, papers=[add_paper(alice, title="Holds The Slot")], user=alice)

    response = client_for(alice).post(
        reverse("projects:upload", args=[project.pk]), {"file": pdf_upload(make_pdf(["One too many"]))}, follow=True
    )

    # One transaction: the refused project link takes the library link and the paper row with it.
    assert Paper.objects.count() == 1
    assert UserPaper.objects.filter(user=alice).count() == 1
    assert any("at most 1 papers" in text for text in messages_of(response))
    stored = [str(path) for path in (settings.MEDIA_ROOT / "papers").rglob("*.pdf")]
    assert stored == [Paper.objects.get().file.path]  # the refused upload's file was removed again


def test_adding_a_paper_that_is_not_in_my_library_puts_it_there_first(alice, bob, project, add_paper):
    paper = add_paper(bob, title="Bob's Upload")

    add_papers_to_project(project=project, papers=[paper], user=alice)

    assert UserPaper.objects.filter(user=alice, paper=paper).exists()
    assert ProjectPaper.objects.filter(project=project, paper=paper).exists()


# --- story 5: the cap ---------------------------------------------------------------------------------


def test_adding_past_the_cap_is_refused_with_cap_and_count_and_nothing_is_half_added(
    alice, project, add_paper, client_for, settings
):
    settings.PROJECT_MAX_PAPERS = 3
    add_papers_to_project(
        project=project, papers=[add_paper(alice, title="P1"), add_paper(alice, title="P2")], user=alice
    )
    candidates = [add_paper(alice, title="P3"), add_paper(alice, title="P4")]

    response = client_for(alice).post(
        reverse("projects:add_papers", args=[project.pk]), {"papers": [p.pk for p in candidates]}, follow=True
    )

    assert project.project_papers.count() == 2
    assert "A project holds at most 3 papers; this one has 2, so there is room for 1 more." in messages_of(response)


def test_the_picker_shows_the_room_left(alice, project, add_paper, client_for, settings):
    settings.PROJECT_MAX_PAPERS = 4
    add_papers_to_project(project=project, papers=[add_paper(alice, title="In")], user=alice)
    add_paper(alice, title="Out")

    page = client_for(alice).get(reverse("projects:detail", args=[project.pk])).content.decode()

    assert 'data-room="3"' in page
    assert "Room for 3 more papers." in page


def test_a_full_project_offers_no_picker_and_no_upload(alice, project, add_paper, client_for, settings):
    settings.PROJECT_MAX_PAPERS = 1
    add_papers_to_project(project=project, papers=[add_paper(alice, title="In")], user=alice)
    add_paper(alice, title="Out")

    page = client_for(alice).get(reverse("projects:detail", args=[project.pk])).content.decode()

    assert 'id="paper-picker"' not in page
    assert "This project is full: it holds 1 of 1 papers." in page
    assert 'name="file" accept="application/pdf,.pdf" multiple required disabled' in page


# --- retry a failed paper ------------------------------------------------------------------------------


def test_retrying_a_failed_paper_queues_it_again(
    alice, project, add_paper, client_for, index_queue, django_capture_on_commit_callbacks
):
    paper = add_paper(alice)
    add_papers_to_project(project=project, papers=[paper], user=alice)
    Paper.objects.filter(pk=paper.pk).update(index_status="failed", index_error="Parsing timed out.")

    with django_capture_on_commit_callbacks(execute=True):
        client_for(alice).post(reverse("projects:reprocess", args=[project.pk, paper.pk]))

    paper.refresh_from_db()
    assert (paper.index_status, paper.index_error) == ("pending", "")
    assert index_queue() == [paper.pk]


# --- the chat panel -----------------------------------------------------------------------------------


def test_an_empty_chat_suggests_prompts_built_from_paper_titles(alice, project, add_paper, client_for):
    add_papers_to_project(
        project=project,
        papers=[add_paper(alice, title="Paper Alpha"), add_paper(alice, title="Paper Beta")],
        user=alice,
    )

    page = client_for(alice).get(reverse("projects:detail", args=[project.pk])).content.decode()

    assert page.count('class="suggestion"') == 3
    assert "Compare how “Paper Alpha” and “Paper Beta”" in page
    assert "What are the main contributions of “Paper Alpha”?" in page


def test_the_project_page_shows_saved_chat_with_citation_links(alice, project, client_for):
    chat = ProjectChat.objects.create(project=project)
    ChatMessage.objects.create(chat=chat, role="user", text="What is attention?")
    ChatMessage.objects.create(
        chat=chat,
        role="assistant",
        text="It weighs tokens [1].",
        citations={"1": {"paper_id": 42, "title": "Attention", "page": 3, "text": "..."}},
        extractive=True,
        state="stopped",
    )

    page = client_for(alice).get(reverse("projects:detail", args=[project.pk])).content.decode()

    assert "What is attention?" in page
    assert 'href="/papers/42/read/?page=3"' in page
    assert "extractive answer" in page
    assert ">stopped<" in page
    assert 'class="suggestion"' not in page
    assert f'data-project-id="{project.pk}"' in page
    assert "chat/chat.js" in page


def test_asking_without_javascript_explains_that_it_is_needed(alice, project, client_for):
    response = client_for(alice).post(reverse("projects:chat_ask", args=[project.pk]), {"text": "hi"}, follow=True)

    assert any("Enable JavaScript to chat" in text for text in messages_of(response))


def test_clearing_the_chat_asks_for_confirmation_then_empties_it(alice, project, client_for):
    chat = ProjectChat.objects.create(project=project)
    ChatMessage.objects.create(chat=chat, role="user", text="hello")
    client = client_for(alice)

    assert client.get(reverse("projects:chat_clear", args=[project.pk])).status_code == HTTPStatus.OK
    assert ChatMessage.objects.filter(chat=chat).count() == 1

    client.post(reverse("projects:chat_clear", args=[project.pk]))
    assert ChatMessage.objects.filter(chat=chat).count() == 0


def test_pages_carry_no_inline_scripts_or_styles(alice, project, client_for):
    page = client_for(alice).get(reverse("projects:detail", args=[project.pk])).content.decode()

    assert "<script>" not in page
    assert "style=" not in page
    assert "<style" not in page


# --- citation rendering (chat/templatetags/chat_tags.py) ---------------------------------------------


def render_message(text: str, citations: dict) -> str:
    template = Template("{% load chat_tags %}{{ text|with_citations:citations }}")
    return template.render(Context({"text": text, "citations": citations}))


CITATIONS = {"1": {"paper_id": 7, "title": "Sleep & Memory", "page": 4, "text": "passage"}}


def test_a_known_marker_becomes_a_link_to_the_reader_with_a_popup():
    html = render_message("REM helps [1].", CITATIONS)

    assert 'href="/papers/7/read/?page=4"' in html
    assert 'class="citation"' in html
    assert 'data-page="4"' in html
    assert 'title="Sleep &amp; Memory, page 4"' in html
    assert (
        '<span class="citation-popup" role="tooltip"><span class="citation-title">Sleep &amp; Memory</span>, page 4'
        in html
    )


def test_an_unknown_marker_stays_plain_text():
    html = render_message("Nothing here [2].", CITATIONS)

    assert html == "Nothing here [2]."


def test_message_text_and_titles_are_escaped():
    evil = {"1": {"paper_id": 1, "title": '"><script>alert(1)</script>', "page": 1, "text": ""}}

    html = render_message('<script>alert("x")</script><img src=x onerror=alert(1)> [1]', evil)

    assert "<script>" not in html
    assert "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
