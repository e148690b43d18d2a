"""The notes copilots against the local OpenAI-compatible stub, scripted per test: the per-paper
chat's single tool turn, the project copilot's loop (read tools, intent follow-up, plain-text
recovery, the 6-call cap), validation of tool calls, and accepting or rejecting suggestions."""

import json
import re
from http import HTTPStatus

import pytest
from asgiref.sync import sync_to_async
from django.urls import reverse

from chat.models import PaperChat
from notes.models import CopilotMessage, Note
from notes.services import (
    create_note,
    paper_item,
    project_item,
    update_note,
)
from projects.services import add_papers_to_project, create_project
from tests.conftest import RAFT_PAGES
from tests.support.sockets import ask, communicator_for

SUGGESTION_ID = re.compile(r"^sug_[0-9a-f]{8}$")
HOSTILE = '<p>Kept</p><script>alert(1)</script><img src=x onerror="alert(2)"><p onclick="x()">Also kept</p>'


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def tools_reply(*calls, content=None) -> dict:
    return {"content": content, "tool_calls": list(calls)}


def assert_clean(html: str) -> None:
    for bad in ("<script", "onerror", "onclick", "<img"):
        assert bad not in html.lower(), html


# --- per-paper chat (single turn, over the WebSocket) ---------------------------------------------


@pytest.fixture
def raft(alice, indexed_paper):
    return indexed_paper(alice, RAFT_PAGES, title="Raft")


async def paper_answer(user, paper, question: str) -> dict:
    socket = communicator_for(user, f"/ws/papers/{paper.pk}/chat/")
    connected, _ = await socket.connect()
    assert connected
    await socket.receive_json_from(timeout=10)
    received = await ask(socket, question)
    await socket.disconnect()
    return received[-1]["message"]


@pytest.mark.django_db(transaction=True)
async def test_paper_chat_sees_the_notes_tree_and_a_text_reply_has_no_suggestions(alice, raft, openai_stub):
    folder = await sync_to_async(create_note)(user=alice, item=paper_item(alice, raft), name="Reading", is_folder=True)
    note = await sync_to_async(create_note)(
        user=alice, item=paper_item(alice, raft), name="Election", parent=folder, content="<p>Timeouts matter.</p>"
    )
    openai_stub.reply = "Leaders win a majority [1]."
    message = await paper_answer(alice, raft, "How is a leader elected?")

    assert message["text"] == "Leaders win a majority [1]."
    assert message["suggestions"] == []
    request = openai_stub.requests[-1]
    assert {tool["function"]["name"] for tool in request["tools"]} == {"suggest_note_edit", "suggest_note_create"}
    notes = request["messages"][2]["content"]
    assert f"[folder] Reading (id {folder.pk})" in notes
    assert f"  [note] Election (id {note.pk})" in notes
    assert "Timeouts matter." in notes


@pytest.mark.django_db(transaction=True)
async def test_paper_chat_tool_calls_only_become_suggestions_with_a_summary_sentence(alice, raft, openai_stub):
    item = paper_item(alice, raft)
    first = await sync_to_async(create_note)(user=alice, item=item, name="One", content="<p>a</p>")
    second = await sync_to_async(create_note)(user=alice, item=item, name="Two", content="<p>b</p>")
    openai_stub.reply = tools_reply(
        call("suggest_note_edit", note_id=first.pk, note_name="One", content="<p>a [1]</p>", description="cite"),
        call("suggest_note_edit", note_id=second.pk, note_name="Two", content="<p>c</p>", description="fix"),
        call("suggest_note_create", note_name="Summary", parent_id=None, content=HOSTILE, description="new"),
    )
    message = await paper_answer(alice, raft, "Tidy my notes")

    assert message["text"] == "Here are my suggestions: 2 edits and 1 new note."
    suggestions = message["suggestions"]
    assert [s["type"] for s in suggestions] == ["edit", "edit", "create"]
    assert all(SUGGESTION_ID.match(s["id"]) and s["status"] == "pending" for s in suggestions)
    assert suggestions[0]["noteId"] == first.pk and suggestions[0]["noteName"] == "One"
    assert f'href="/papers/{raft.pk}/read/?page=1"' in suggestions[0]["content"]
    assert {"op": "-", "text": "a"} in suggestions[0]["diff"] and {"op": "+", "text": "a [1]"} in suggestions[0]["diff"]
    assert "noteId" not in suggestions[2]
    assert_clean(suggestions[2]["content"])
    # Saved with the message: a reload shows them.
    chat = await sync_to_async(PaperChat.objects.get)(user=alice, paper=raft)
    assert chat.messages[-1]["suggestions"] == suggestions
    assert await sync_to_async(Note.objects.count)() == 2


@pytest.mark.django_db(transaction=True)
async def test_paper_chat_refuses_malformed_unknown_and_foreign_tool_calls_in_words(
    alice, bob, raft, add_paper, openai_stub
):
    bobs_paper = await sync_to_async(add_paper)(bob, title="Bob's paper")
    bobs_note = await sync_to_async(create_note)(
        user=bob, item=paper_item(bob, bobs_paper), name="Bob's", content="<p>mine</p>"
    )
    openai_stub.reply = tools_reply(
        {"name": "suggest_note_edit", "arguments": "{not json"},
        call("delete_note", note_id=bobs_note.pk),
        call("suggest_note_edit", note_id=bobs_note.pk, note_name="Bob's", content="<p>hacked</p>", description="x"),
        content="Here is what I can do.",
    )
    message = await paper_answer(alice, raft, "Edit everything")

    assert message["suggestions"] == []
    assert "(Not done: The arguments of suggest_note_edit were not valid JSON.)" in message["text"]
    assert "(Not done: There is no tool named 'delete_note'.)" in message["text"]
    assert f"(Not done: Note {bobs_note.pk} is not one of the notes this chat can see" in message["text"]
    await sync_to_async(bobs_note.refresh_from_db)()
    assert bobs_note.content == "<p>mine</p>"


@pytest.mark.django_db(transaction=True)
async def test_a_paper_chat_suggestion_is_accepted_into_the_papers_notes(alice, raft, openai_stub, api_client_for):
    openai_stub.reply = tools_reply(
        call("suggest_note_create", note_name="Election summary", parent_id=None, content=HOSTILE, description="d")
    )
    message = await paper_answer(alice, raft, "Summarise section 1 into a new note")
    suggestion = message["suggestions"][0]
    api = await sync_to_async(api_client_for)(alice)
    url = reverse("api:paper-suggestion", args=[raft.pk, message["id"], suggestion["id"], "accept"])
    response = await sync_to_async(api.post)(url)
    assert response.status_code == HTTPStatus.OK, response.json()
    note = await sync_to_async(Note.objects.get)(name="Election summary")
    assert (note.scope, note.paper_id, note.user_id) == ("paper", raft.pk, alice.pk)
    assert_clean(note.content)
    chat = await sync_to_async(PaperChat.objects.get)(user=alice, paper=raft)
    assert chat.messages[-1]["suggestions"][0]["status"] == "accepted"


# --- the project copilot ---------------------------------------------------------------------------


@pytest.fixture
def project(alice):
    return create_project(owner=alice, name="Consensus")


@pytest.fixture
def draft(alice, project):
    return create_note(user=alice, item=project_item(project), name="Draft", content="<p>Line one</p><p>Line two</p>")


def ask_copilot(api, project, text="Improve my draft"):
    return api.post(reverse("api:project-copilot", args=[project.pk]), {"text": text}, format="json")


def tool_names(request) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}


@pytest.mark.django_db
def test_without_a_chat_model_the_copilot_says_how_to_configure_one(alice, project, api_client_for):
    response = ask_copilot(api_client_for(alice), project)
    assert response.status_code == HTTPStatus.SERVICE_UNAVAILABLE
    error = response.json()["error"]
    assert error["code"] == "chat_model_missing"
    assert "OPENAI_API_KEY" in error["message"] and "OPENAI_BASE_URL" in error["message"]


@pytest.mark.django_db
def test_the_copilot_reads_a_note_then_suggests_an_edit(alice, project, draft, openai_stub, api_client_for):
    openai_stub.script = [
        tools_reply(call("read_note", note_id=draft.pk)),
        tools_reply(
            call(
                "suggest_note_edit",
                note_id=draft.pk,
                note_name="Draft",
                content="<p>Line one</p><p>Line 2, clearer</p>",
                description="Clarify line two",
            )
        ),
        "I suggested a clearer second line.",
    ]
    response = ask_copilot(api_client_for(alice), project)
    assert response.status_code == HTTPStatus.CREATED, response.json()
    body = response.json()
    assert body["text"] == "I suggested a clearer second line."
    [suggestion] = body["suggestions"]
    assert (suggestion["type"], suggestion["noteId"], suggestion["baseVersion"]) == ("edit", draft.pk, 1)
    assert suggestion["diff"] == [
        {"op": " ", "text": "Line one"},
        {"op": "-", "text": "Line two"},
        {"op": "+", "text": "Line 2, clearer"},
    ]
    requests = openai_stub.requests
    assert len(requests) == 3
    assert tool_names(requests[0]) == {"suggest_note_edit", "suggest_note_create", "read_note", "list_item_notes"}
    read_result = requests[1]["messages"][-1]
    assert read_result["role"] == "tool" and "<p>Line two</p>" in read_result["content"]
    assert "recorded" in requests[2]["messages"][-1]["content"]
    draft.refresh_from_db()
    assert draft.content == "<p>Line one</p><p>Line two</p>", "the model never writes a note itself"


@pytest.mark.django_db
def test_an_announced_note_without_a_tool_call_gets_one_follow_up(alice, project, openai_stub, api_client_for):
    openai_stub.script = [
        "I'll create a note summarising leader election.",
        tools_reply(
            call("suggest_note_create", note_name="Election", parent_id=None, content="<p>x</p>", description="d")
        ),
    ]
    body = ask_copilot(api_client_for(alice), project).json()
    assert len(openai_stub.requests) == 2
    assert "did not call a tool" in openai_stub.requests[1]["messages"][-1]["content"]
    assert [s["noteName"] for s in body["suggestions"]] == ["Election"]
    assert body["text"] == "I'll create a note summarising leader election."


@pytest.mark.django_db
def test_the_follow_up_fires_only_once(alice, project, openai_stub, api_client_for):
    openai_stub.reply = "I will write a note about it."
    body = ask_copilot(api_client_for(alice), project).json()
    assert len(openai_stub.requests) == 2
    assert body["suggestions"] == []


@pytest.mark.django_db
def test_an_empty_first_turn_gets_a_plain_text_recovery_call(alice, project, openai_stub, api_client_for):
    openai_stub.script = [""]
    openai_stub.reply = "A plain answer."
    body = ask_copilot(api_client_for(alice), project).json()
    assert body["text"] == "A plain answer."
    assert len(openai_stub.requests) == 2
    assert "tools" not in openai_stub.requests[-1]


@pytest.mark.django_db
def test_a_model_that_keeps_calling_tools_is_stopped_after_six_calls(alice, project, openai_stub, api_client_for):
    openai_stub.reply = tools_reply(call("list_item_notes", item_type="project", item_id=project.pk))
    body = ask_copilot(api_client_for(alice), project).json()
    requests = openai_stub.requests
    assert [bool(r.get("tools")) for r in requests] == [True] * 6 + [False]
    assert body["text"] == "The copilot did not come to an answer; try asking in other words."


@pytest.mark.django_db
def test_malformed_arguments_and_unknown_tools_are_explained_to_the_model(alice, project, openai_stub, api_client_for):
    openai_stub.script = [
        tools_reply({"name": "suggest_note_create", "arguments": "[1, 2"}, call("rm_rf", path="/")),
        "Sorry, done.",
    ]
    response = ask_copilot(api_client_for(alice), project)
    assert response.status_code == HTTPStatus.CREATED
    answers = [m for m in openai_stub.requests[1]["messages"] if m["role"] == "tool"]
    assert [a["content"] for a in answers] == [
        "Error: The arguments of suggest_note_create were not valid JSON.",
        "Error: There is no tool named 'rm_rf'.",
    ]
    assert response.json()["suggestions"] == []


@pytest.mark.django_db
def test_notes_of_another_users_paper_or_another_project_are_refused(
    alice, bob, project, draft, add_paper, openai_stub, api_client_for
):
    bobs_note = create_note(user=bob, item=paper_item(bob, add_paper(bob, title="B")), name="B", content="<p>b</p>")
    other = create_project(owner=alice, name="Other")
    other_note = create_note(user=alice, item=project_item(other), name="O", content="<p>o</p>")
    other_folder = create_note(user=alice, item=project_item(other), name="OF", is_folder=True)
    openai_stub.script = [
        tools_reply(
            call("read_note", note_id=bobs_note.pk),
            call("suggest_note_edit", note_id=bobs_note.pk, note_name="B", content="<p>x</p>", description="x"),
            call("suggest_note_edit", note_id=other_note.pk, note_name="O", content="<p>x</p>", description="x"),
            call("suggest_note_create", note_name="N", parent_id=other_folder.pk, content="<p>x</p>", description="x"),
            call("suggest_note_create", note_name="N", parent_id=draft.pk, content="<p>x</p>", description="x"),
            call("list_item_notes", item_type="project", item_id=other.pk),
        ),
        "Done.",
    ]
    body = ask_copilot(api_client_for(alice), project).json()
    answers = [m["content"] for m in openai_stub.requests[1]["messages"] if m["role"] == "tool"]
    assert all(answer.startswith("Error:") for answer in answers), answers
    assert "<p>b</p>" not in json.dumps(openai_stub.requests[1]["messages"])
    assert body["suggestions"] == []
    bobs_note.refresh_from_db()
    other_note.refresh_from_db()
    assert (bobs_note.content, other_note.content) == ("<p>b</p>", "<p>o</p>")


@pytest.mark.django_db
def test_suggested_html_is_sanitised_when_stored_and_again_when_applied(
    alice, project, draft, openai_stub, api_client_for
):
    openai_stub.script = [
        tools_reply(call("suggest_note_edit", note_id=draft.pk, note_name="Draft", content=HOSTILE, description="d")),
        "Done.",
    ]
    api = api_client_for(alice)
    body = ask_copilot(api, project).json()
    stored = CopilotMessage.objects.get(pk=body["id"])
    assert_clean(stored.suggestions[0]["content"])
    # Whatever the stored suggestion holds by the time it is applied, the note gets clean HTML.
    stored.suggestions[0]["content"] = HOSTILE
    stored.save()
    url = reverse("api:copilot-suggestion", args=[stored.pk, stored.suggestions[0]["id"], "accept"])
    assert api.post(url).status_code == HTTPStatus.OK
    draft.refresh_from_db()
    assert_clean(draft.content)
    assert "Kept" in draft.content and "Also kept" in draft.content


@pytest.fixture
def pending_edit(alice, project, draft, openai_stub, api_client_for):
    openai_stub.script = [
        tools_reply(
            call("suggest_note_edit", note_id=draft.pk, note_name="Draft", content="<p>New text</p>", description="d")
        ),
        "Done.",
    ]
    body = ask_copilot(api_client_for(alice), project).json()
    return body["id"], body["suggestions"][0]["id"]


def decide(api, message_id, sid, action):
    return api.post(reverse("api:copilot-suggestion", args=[message_id, sid, action]))


@pytest.mark.django_db
def test_accepting_after_the_note_changed_reports_a_conflict_with_the_new_diff(
    alice, draft, pending_edit, api_client_for
):
    api = api_client_for(alice)
    update_note(user=alice, note=draft, content="<p>Edited meanwhile</p>")
    conflict = decide(api, *pending_edit, "accept")
    assert conflict.status_code == HTTPStatus.CONFLICT
    body = conflict.json()
    assert body["error"]["code"] == "suggestion_conflict"
    assert {"op": "-", "text": "Edited meanwhile"} in body["suggestion"]["diff"]
    assert body["suggestion"]["status"] == "pending"
    draft.refresh_from_db()
    assert draft.content == "<p>Edited meanwhile</p>"
    # Having seen the new diff, accepting again applies it.
    assert decide(api, *pending_edit, "accept").status_code == HTTPStatus.OK
    draft.refresh_from_db()
    assert draft.content == "<p>New text</p>"


@pytest.mark.django_db
def test_rejected_suggestions_stay_rejected_and_cannot_be_accepted(alice, draft, pending_edit, api_client_for):
    api = api_client_for(alice)
    assert decide(api, *pending_edit, "reject").json()["suggestion"]["status"] == "rejected"
    again = decide(api, *pending_edit, "accept")
    assert again.status_code == HTTPStatus.CONFLICT
    assert again.json()["error"]["code"] == "suggestion_not_pending"
    assert CopilotMessage.objects.get(pk=pending_edit[0]).suggestions[0]["status"] == "rejected"
    draft.refresh_from_db()
    assert draft.version == 1


@pytest.mark.django_db
def test_an_outsider_cannot_accept_or_reject_alices_suggestions(mallory, pending_edit, api_client_for):
    api = api_client_for(mallory)
    assert decide(api, *pending_edit, "accept").status_code == HTTPStatus.NOT_FOUND
    assert decide(api, *pending_edit, "reject").status_code == HTTPStatus.NOT_FOUND


@pytest.mark.django_db
def test_a_reader_of_a_shared_project_sees_suggestions_but_cannot_accept_them(
    alice, carol, team_project, openai_stub, api_client_for
):
    draft = create_note(user=alice, item=project_item(team_project), name="Draft", content="<p>Old</p>")
    openai_stub.script = [
        tools_reply(
            call("suggest_note_edit", note_id=draft.pk, note_name="Draft", content="<p>New</p>", description="d"),
            call("suggest_note_create", note_name="Extra", parent_id=None, content="<p>More</p>", description="d"),
        ),
        "Done.",
    ]
    api = api_client_for(carol)
    body = ask_copilot(api, team_project).json()
    assert [s["type"] for s in body["suggestions"]] == ["edit", "create"]

    for suggestion in body["suggestions"]:
        refused = decide(api, body["id"], suggestion["id"], "accept")
        assert refused.status_code == HTTPStatus.FORBIDDEN, refused.json()
        assert refused.json()["error"]["code"] == "notes_read_only"
    draft.refresh_from_db()
    assert (draft.content, draft.version) == ("<p>Old</p>", 1)
    assert not Note.objects.filter(name="Extra").exists()
    assert CopilotMessage.objects.get(pk=body["id"]).suggestions[0]["status"] == "pending"


@pytest.mark.django_db
def test_project_copilot_suggestions_keep_passage_citations_as_links(
    alice, indexed_project, openai_stub, api_client_for
):
    openai_stub.script = [
        tools_reply(
            call(
                "suggest_note_create",
                note_name="Elections",
                parent_id=None,
                content="<p>A candidate needs a majority [1].</p>",
                description="d",
            )
        ),
        "Suggested a note [1].",
    ]
    api = api_client_for(alice)
    body = ask_copilot(api, indexed_project, "How does Raft elect a leader?").json()
    passages = openai_stub.requests[0]["messages"][1]["content"]
    assert '<passage n="1"' in passages
    [suggestion] = body["suggestions"]
    assert body["citations"]["1"]["paper_id"] == int(re.search(r"/papers/(\d+)/", suggestion["content"]).group(1))
    assert decide(api, body["id"], suggestion["id"], "accept").status_code == HTTPStatus.OK
    note = Note.objects.get(name="Elections")
    assert 'class="citation"' in note.content and "/read/?page=" in note.content
    assert note.project_id == indexed_project.pk


# --- the library copilot ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_library_copilot_reads_mentioned_items_with_their_notes(alice, add_paper, openai_stub, api_client_for):
    paper = add_paper(alice, title="Paxos", abstract="Choosing values.")
    create_note(user=alice, item=paper_item(alice, paper), name="Quorums", content="<p>Majorities intersect.</p>")
    project = create_project(owner=alice, name="Consensus")
    add_papers_to_project(project=project, papers=[paper], user=alice)
    openai_stub.reply = "They intersect."
    response = api_client_for(alice).post(
        reverse("api:library-copilot"),
        {"text": "Why?", "mentions": [{"type": "paper", "id": paper.pk}, {"type": "project", "id": project.pk}]},
        format="json",
    )
    assert response.status_code == HTTPStatus.CREATED, response.json()
    context = openai_stub.requests[-1]["messages"][1]["content"]
    assert 'title="Paxos"' in context and "Majorities intersect." in context and 'name="Consensus"' in context


@pytest.mark.django_db
def test_the_library_copilot_refuses_mentions_of_other_users_items(
    alice, mallory, add_paper, openai_stub, api_client_for
):
    paper = add_paper(alice, title="Private")
    response = api_client_for(mallory).post(
        reverse("api:library-copilot"),
        {"text": "Summarise it.", "mentions": [{"type": "paper", "id": paper.pk}]},
        format="json",
    )
    assert response.status_code == HTTPStatus.NOT_FOUND
    assert openai_stub.requests == []


# --- pure pieces -----------------------------------------------------------------------------------


def test_the_summary_sentence_counts_edits_and_new_notes():
    from notes.suggestions import summary_sentence

    assert summary_sentence([{"type": "edit"}, {"type": "edit"}, {"type": "create"}]) == (
        "Here are my suggestions: 2 edits and 1 new note."
    )
    assert summary_sentence([{"type": "create"}, {"type": "create"}]) == "Here are my suggestions: 2 new notes."
    assert summary_sentence([]) == ""


@pytest.mark.parametrize(
    ("text", "announces"),
    [
        ("I'll create a note summarising the methods.", True),
        ("Let me update your Election note with the new findings.", True),
        ("I will add these points to the notes.", True),
        ("Raft elects a leader by majority vote [1].", False),
        ("The notes already cover this.", False),
    ],
)
def test_an_announced_note_change_is_recognised(text, announces):
    from notes.copilot import announces_note_change

    assert announces_note_change(text) is announces


def test_the_line_diff_compares_note_text_line_by_line():
    from notes.sanitize import html_to_text
    from notes.suggestions import line_diff

    before = html_to_text("<h2>Title</h2><p>same&nbsp;line</p><p>old</p>")
    after = html_to_text("<h2>Title</h2><p>same line</p><ul><li>new</li></ul>")
    assert line_diff(before, after) == [
        {"op": " ", "text": "Title"},
        {"op": " ", "text": "same line"},
        {"op": "-", "text": "old"},
        {"op": "+", "text": "new"},
    ]


@pytest.mark.django_db
def test_a_mentioned_papers_full_text_is_cut_at_15000_characters_and_says_so(alice, indexed_paper):
    from notes.copilot import Mention, mention_block

    pages = [" ".join(f"Sentence {i} of page {p} about replicated logs." for i in range(200)) for p in (1, 2)]
    paper = indexed_paper(alice, pages, title="Long paper")
    block, items = mention_block(alice, Mention(kind="paper", id=paper.pk, full_text=True))
    assert "Full text (truncated at 15,000 characters):" in block
    text = block.split("Full text (truncated at 15,000 characters):\n", 1)[1].removesuffix("\n</paper>")
    assert len(text) == 15_000
    assert items == [paper_item(alice, paper)]
    short, _ = mention_block(alice, Mention(kind="paper", id=paper.pk))
    assert "Full text" not in short


@pytest.mark.django_db
def test_the_copilot_thread_keeps_its_newest_messages(alice, project, openai_stub, api_client_for, settings):
    settings.PROJECT_CHAT_MAX_MESSAGES = 4
    openai_stub.reply = "An answer."
    api = api_client_for(alice)
    for number in range(3):
        assert ask_copilot(api, project, f"Question {number}").status_code == HTTPStatus.CREATED
    history = api.get(reverse("api:project-copilot", args=[project.pk])).json()["messages"]
    assert [m["text"] for m in history] == ["Question 1", "An answer.", "Question 2", "An answer."]
