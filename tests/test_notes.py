"""Notes: a tree of folders and notes per paper (per user), project and library; sanitised HTML on
every write; the REST API with the same access checks; saving a cited answer into a note."""

from http import HTTPStatus

import pytest
from django.contrib.admin.sites import site
from django.urls import reverse

from notes.models import Note
from notes.sanitize import sanitize_html
from notes.services import (
    NoteError,
    NoteRole,
    create_note,
    library_item,
    notes_role,
    paper_item,
    project_item,
    update_note,
)
from projects.services import create_project

pytestmark = pytest.mark.django_db

HOSTILE = (
    '<p onclick="steal()" style="color:red">Hi<script>alert(1)</script>'
    '<img src=x onerror="alert(2)"><a href="javascript:alert(3)">js</a>'
    '<a href="https://example.org/">ok</a></p><style>p{}</style><iframe src="/"></iframe>'
)


@pytest.fixture
def paper(alice, add_paper):
    return add_paper(alice, title="Raft")


@pytest.fixture
def project(alice):
    return create_project(owner=alice, name="Consensus")


def tree_url(kind: str, item_id=None) -> str:
    query = f"?item_type={kind}" + (f"&item_id={item_id}" if item_id is not None else "")
    return reverse("api:notes-tree") + query


def assert_clean(html: str) -> None:
    lowered = html.lower()
    for bad in ("<script", "onerror", "onclick", "style", "javascript:", "<iframe", "<img"):
        assert bad not in lowered, f"{bad!r} survived: {html}"


# --- the sanitiser --------------------------------------------------------------------------------


def test_the_sanitiser_keeps_text_and_safe_markup_and_drops_scripts_styles_and_handlers():
    cleaned = sanitize_html(HOSTILE)
    assert_clean(cleaned)
    assert "Hi" in cleaned
    assert '<a href="https://example.org/" rel="noopener">ok</a>' in cleaned
    assert sanitize_html(cleaned) == cleaned


# --- the tree through the API ---------------------------------------------------------------------


def test_alice_builds_a_tree_on_her_paper_and_reads_it_back(alice, paper, api_client_for):
    api = api_client_for(alice)
    folder = api.post(
        reverse("api:notes"), {"item_type": "paper", "item_id": paper.pk, "name": "Methods", "is_folder": True}
    )
    assert folder.status_code == HTTPStatus.CREATED, folder.json()
    note = api.post(
        reverse("api:notes"),
        {
            "item_type": "paper",
            "item_id": paper.pk,
            "name": "Election",
            "parent_id": folder.json()["id"],
            "content": HOSTILE,
        },
        format="json",
    )
    assert note.status_code == HTTPStatus.CREATED
    assert_clean(note.json()["content"])

    tree = api.get(tree_url("paper", paper.pk)).json()
    assert tree["role"] == "writer"
    assert [(n["name"], n["isFolder"]) for n in tree["tree"]] == [("Methods", True)]
    assert [c["name"] for c in tree["tree"][0]["children"]] == ["Election"]


def test_update_sanitises_renames_moves_and_counts_versions(alice, paper, api_client_for):
    api = api_client_for(alice)
    item = paper_item(alice, paper)
    folder = create_note(user=alice, item=item, name="Folder", is_folder=True)
    note = create_note(user=alice, item=item, name="Draft", content="<p>one</p>")
    response = api.patch(
        reverse("api:note", args=[note.pk]),
        {"name": "Final", "content": HOSTILE, "parent_id": folder.pk},
        format="json",
    )
    assert response.status_code == HTTPStatus.OK
    body = response.json()
    assert (body["name"], body["parentId"], body["version"]) == ("Final", folder.pk, 2)
    assert_clean(body["content"])
    moved_back = api.patch(reverse("api:note", args=[note.pk]), {"parent_id": None}, format="json")
    assert moved_back.json()["parentId"] is None


def test_a_folder_cannot_move_into_itself_or_under_a_note(alice, paper):
    item = paper_item(alice, paper)
    outer = create_note(user=alice, item=item, name="Outer", is_folder=True)
    inner = create_note(user=alice, item=item, name="Inner", is_folder=True, parent=outer)
    note = create_note(user=alice, item=item, name="Note")
    with pytest.raises(NoteError, match="inside itself"):
        update_note(user=alice, note=outer, parent=inner)
    with pytest.raises(NoteError, match="folder of the same"):
        update_note(user=alice, note=outer, parent=note)


def test_a_parent_from_another_item_is_refused(alice, paper, project, api_client_for):
    folder = create_note(user=alice, item=project_item(project), name="Project folder", is_folder=True)
    response = api_client_for(alice).post(
        reverse("api:notes"),
        {"item_type": "paper", "item_id": paper.pk, "name": "Stray", "parent_id": folder.pk},
        format="json",
    )
    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json()["error"]["code"] == "invalid_note"
    assert not Note.objects.filter(name="Stray").exists()


def test_bad_input_gets_clear_errors(alice, paper, api_client_for):
    api = api_client_for(alice)
    blank = api.post(reverse("api:notes"), {"item_type": "paper", "item_id": paper.pk, "name": "  "}, format="json")
    assert blank.status_code == HTTPStatus.BAD_REQUEST
    unknown = api.post(reverse("api:notes"), {"item_type": "shelf", "name": "x"}, format="json")
    assert unknown.status_code == HTTPStatus.BAD_REQUEST
    folder = create_note(user=alice, item=paper_item(alice, paper), name="F", is_folder=True)
    content = api.patch(reverse("api:note", args=[folder.pk]), {"content": "<p>x</p>"}, format="json")
    assert content.json()["error"]["message"] == "Folders have no content."


def test_deleting_a_folder_deletes_what_it_holds(alice, project, api_client_for):
    item = project_item(project)
    folder = create_note(user=alice, item=item, name="F", is_folder=True)
    create_note(user=alice, item=item, name="inside", parent=folder)
    response = api_client_for(alice).delete(reverse("api:note", args=[folder.pk]))
    assert response.status_code == HTTPStatus.NO_CONTENT
    assert not item.notes().exists()


# --- access ---------------------------------------------------------------------------------------


def test_paper_notes_are_per_user_even_on_a_shared_paper(alice, bob, paper, api_client_for):
    from papers.models import UserPaper

    UserPaper.objects.create(user=bob, paper=paper)
    create_note(user=alice, item=paper_item(alice, paper), name="Alice's thoughts")
    bobs = api_client_for(bob).get(tree_url("paper", paper.pk)).json()
    assert bobs["tree"] == []


def test_an_outsider_gets_404_for_every_note_paper_and_project_of_alice(alice, mallory, paper, project, api_client_for):
    notes = [
        create_note(user=alice, item=paper_item(alice, paper), name="p"),
        create_note(user=alice, item=project_item(project), name="q"),
        create_note(user=alice, item=library_item(alice), name="r"),
    ]
    api = api_client_for(mallory)
    for note in notes:
        assert api.get(reverse("api:note", args=[note.pk])).status_code == HTTPStatus.NOT_FOUND
        assert api.patch(reverse("api:note", args=[note.pk]), {"name": "x"}, format="json").status_code == 404
        assert api.delete(reverse("api:note", args=[note.pk])).status_code == HTTPStatus.NOT_FOUND
    assert api.get(tree_url("paper", paper.pk)).status_code == HTTPStatus.NOT_FOUND
    assert api.get(tree_url("project", project.pk)).status_code == HTTPStatus.NOT_FOUND
    created = api.post(reverse("api:notes"), {"item_type": "project", "item_id": project.pk, "name": "x"})
    assert created.status_code == HTTPStatus.NOT_FOUND
    assert api.get(tree_url("library")).json()["tree"] == []
    assert Note.objects.filter(name="x").count() == 0


def test_the_project_owner_writes_project_notes_and_outsiders_have_no_role(alice, mallory, project):
    assert notes_role(alice, project_item(project)) is NoteRole.WRITER
    assert notes_role(mallory, project_item(project)) is None


def test_anonymous_visitors_get_no_notes(client, paper):
    assert client.get(tree_url("paper", paper.pk)).status_code == HTTPStatus.UNAUTHORIZED


# --- save to notes --------------------------------------------------------------------------------


def test_an_answer_saved_to_notes_keeps_its_citations_as_paper_and_page_links(alice, paper, project, api_client_for):
    api = api_client_for(alice)
    citations = {"1": {"paper_id": paper.pk, "title": "Raft", "page": 2, "text": "..."}}
    text = "Raft elects a leader [1].\nUnknown markers stay [7]. <b>not bold</b>"
    created = api.post(
        reverse("api:notes-save-answer"),
        {"item_type": "project", "item_id": project.pk, "text": text, "citations": citations},
        format="json",
    )
    assert created.status_code == HTTPStatus.CREATED, created.json()
    content = created.json()["content"]
    assert f'href="/papers/{paper.pk}/read/?page=2"' in content
    assert "[7]" in content and "&lt;b&gt;not bold&lt;/b&gt;" in content
    assert created.json()["name"].startswith("Raft elects a leader")

    appended = api.post(
        reverse("api:notes-save-answer"),
        {
            "item_type": "project",
            "item_id": project.pk,
            "text": "More [1].",
            "citations": citations,
            "note_id": created.json()["id"],
        },
        format="json",
    )
    assert appended.status_code == HTTPStatus.OK
    assert appended.json()["content"].startswith(content)
    assert appended.json()["content"].count("citation") == 2


def test_saving_the_same_answer_again_gives_the_note_it_is_already_in(
    alice, bob, carol, paper, team_project, api_client_for
):
    url = reverse("api:notes-save-answer")
    answer = {"item_type": "project", "item_id": team_project.pk, "text": "Raft elects a leader [1].", "citations": {}}
    first = api_client_for(alice).post(url, answer, format="json")

    again = api_client_for(alice).post(url, answer, format="json")

    assert first.status_code == HTTPStatus.CREATED
    assert again.status_code == HTTPStatus.OK and again.json()["id"] == first.json()["id"]
    shared = api_client_for(bob).post(url, answer, format="json")  # a writer of the same project's notes
    assert shared.status_code == HTTPStatus.OK and shared.json()["id"] == first.json()["id"]
    assert api_client_for(carol).post(url, answer, format="json").status_code == HTTPStatus.FORBIDDEN
    assert project_item(team_project).notes().count() == 1
    longer = api_client_for(alice).post(url, {**answer, "text": "Raft elects a leader [1]. It logs."}, format="json")
    assert longer.status_code == HTTPStatus.CREATED and project_item(team_project).notes().count() == 2
    # The same answer in another tree is a note of that tree: alice's notes on the paper.
    mine = api_client_for(alice).post(url, {**answer, "item_type": "paper", "item_id": paper.pk}, format="json")
    assert mine.status_code == HTTPStatus.CREATED and paper_item(alice, paper).notes().count() == 1


def test_a_saved_extractive_answer_is_named_by_its_first_quote_not_its_heading(alice, project, api_client_for):
    text = (
        "Extractive answer (sentences quoted from the papers; no chat model is configured):\n"
        "- Raft: \u201cRaft elects a single leader per term.\u201d [1]"
    )
    created = api_client_for(alice).post(
        reverse("api:notes-save-answer"),
        {"item_type": "project", "item_id": project.pk, "text": text, "citations": {}},
        format="json",
    )
    assert created.json()["name"] == "Raft: Raft elects a single leader per term."


def test_an_answer_cannot_be_appended_to_a_note_of_another_item(alice, paper, project, api_client_for):
    other = create_note(user=alice, item=paper_item(alice, paper), name="Paper note")
    response = api_client_for(alice).post(
        reverse("api:notes-save-answer"),
        {"item_type": "project", "item_id": project.pk, "text": "x", "note_id": other.pk},
        format="json",
    )
    assert response.status_code == HTTPStatus.BAD_REQUEST


# --- admin ----------------------------------------------------------------------------------------


def test_notes_are_in_the_admin(staff, alice, paper, client_for):
    from notes.models import CopilotMessage

    note = create_note(user=alice, item=paper_item(alice, paper), name="Admin note", content="<p>x</p>")
    assert site.is_registered(Note) and site.is_registered(CopilotMessage)
    client = client_for(staff)
    assert client.get(reverse("admin:notes_note_changelist") + "?q=Admin").status_code == HTTPStatus.OK
    assert client.get(reverse("admin:notes_note_change", args=[note.pk])).status_code == HTTPStatus.OK
    assert client.get(reverse("admin:notes_copilotmessage_changelist")).status_code == HTTPStatus.OK
