"""Notes pages: the tree on the reader and project page, the note page with its editor, creating,
renaming, moving, editing and deleting (with confirmation) through forms that work without JS."""

from http import HTTPStatus

import pytest
from django.urls import reverse

from notes.models import Note
from notes.services import create_note, paper_item, project_item
from projects.services import create_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def paper(alice, add_paper):
    return add_paper(alice, title="Raft")


def test_the_reader_shows_the_papers_notes_tree_and_a_form_to_add_to_it(alice, paper, client_for):
    create_note(user=alice, item=paper_item(alice, paper), name="My reading")
    html = client_for(alice).get(reverse("papers:reader", args=[paper.pk])).content.decode()
    assert 'id="notes-panel"' in html and 'data-item-type="paper"' in html
    assert "My reading" in html
    assert 'action="/notes/new/"' in html
    assert "notes/copilot.js" in html
    assert "The copilot needs a chat model: set OPENAI_API_KEY" in html


def test_the_project_page_has_notes_and_a_copilot_that_says_it_needs_a_model(alice, client_for):
    project = create_project(owner=alice, name="Consensus")
    create_note(user=alice, item=project_item(project), name="Plan", is_folder=True)
    html = client_for(alice).get(reverse("projects:detail", args=[project.pk])).content.decode()
    assert "Plan" in html
    assert "The copilot needs a chat model: set OPENAI_API_KEY" in html
    assert 'id="copilot-form"' not in html


def test_with_a_model_the_copilot_panel_has_its_form(alice, client_for, settings):
    settings.OPENAI_API_KEY = "configured"
    project = create_project(owner=alice, name="Consensus")
    html = client_for(alice).get(reverse("projects:detail", args=[project.pk])).content.decode()
    assert 'id="copilot-form"' in html


def test_creating_a_note_by_form_opens_it_in_the_editor(alice, paper, client_for):
    client = client_for(alice)
    response = client.post(
        reverse("notes:create"), {"item_type": "paper", "item_id": paper.pk, "name": "Election", "is_folder": "0"}
    )
    note = Note.objects.get(name="Election")
    assert response.url == reverse("notes:detail", args=[note.pk])
    html = client.get(response.url).content.decode()
    assert "quill-2.0.3/quill.js" in html and 'id="note-editor"' in html
    assert 'name="content"' in html


def test_saving_by_form_sanitises_renames_and_moves(alice, paper, client_for):
    item = paper_item(alice, paper)
    folder = create_note(user=alice, item=item, name="Folder", is_folder=True)
    note = create_note(user=alice, item=item, name="Draft")
    response = client_for(alice).post(
        reverse("notes:detail", args=[note.pk]),
        {
            "name": "Final",
            "parent": str(folder.pk),
            "content": '<p>ok</p><script>x()</script><b onmouseover="y()">b</b>',
        },
    )
    assert response.status_code == HTTPStatus.FOUND
    note.refresh_from_db()
    assert (note.name, note.parent_id, note.content) == ("Final", folder.pk, "<p>ok</p><b>b</b>")


def test_deleting_asks_first_and_says_what_goes_with_a_folder(alice, paper, client_for):
    item = paper_item(alice, paper)
    folder = create_note(user=alice, item=item, name="Folder", is_folder=True)
    create_note(user=alice, item=item, name="Inside", parent=folder)
    client = client_for(alice)
    confirm = client.get(reverse("notes:delete", args=[folder.pk])).content.decode()
    assert "Delete “Folder”?" in confirm and "1 note" in confirm
    assert Note.objects.count() == 2
    response = client.post(reverse("notes:delete", args=[folder.pk]))
    assert response.url == reverse("papers:reader", args=[paper.pk])
    assert Note.objects.count() == 0


def test_an_outsider_gets_404_for_note_pages_and_forms(alice, mallory, paper, client_for):
    note = create_note(user=alice, item=paper_item(alice, paper), name="Private", content="<p>secret</p>")
    client = client_for(mallory)
    assert client.get(reverse("notes:detail", args=[note.pk])).status_code == HTTPStatus.NOT_FOUND
    assert client.post(reverse("notes:detail", args=[note.pk]), {"name": "x"}).status_code == HTTPStatus.NOT_FOUND
    assert client.post(reverse("notes:delete", args=[note.pk])).status_code == HTTPStatus.NOT_FOUND
    created = client.post(reverse("notes:create"), {"item_type": "paper", "item_id": paper.pk, "name": "x"})
    assert created.status_code == HTTPStatus.NOT_FOUND
    note.refresh_from_db()
    assert note.name == "Private"


def test_the_library_notes_page_lists_library_notes(alice, client_for):
    from notes.services import library_item

    create_note(user=alice, item=library_item(alice), name="Reading list")
    html = client_for(alice).get(reverse("notes:library")).content.decode()
    assert "Reading list" in html and "Library copilot" in html


def test_the_notes_path_leads_to_the_library_notes(alice, client_for):
    response = client_for(alice).get("/notes/", follow=True)

    assert response.redirect_chain == [(reverse("notes:library"), HTTPStatus.FOUND)]
    assert response.status_code == HTTPStatus.OK
