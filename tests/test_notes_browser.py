"""End to end in a real browser: the reader's paper chat with notes, against the local
OpenAI-compatible stub (the web server runs as a subprocess pointed at it).

Open a paper, ask to summarise a section into a new note, see the card with its preview, accept
it, see the note in the tree; ask for an edit, see the diff, reject it, reload: the card stays
rejected. The note page's editor (Quill) loads under the Content Security Policy.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests import test_browser
from tests.support.live_server import embedded_env
from tests.support.openai_stub import OpenAIStub
from tests.support.pdfs import make_pdf_bytes
from tests.test_browser import ANSWER_TIMEOUT, Server, manage, served

# The browser and visitor fixtures of the main browser test, over this module's server.
chromium = test_browser.chromium
visit = test_browser.visit

USERNAME, PASSWORD = "reader", "a-long-reader-password-1"
PROJECT = "Notes project"
PAGES = [
    "Leader election. A follower that hears no heartbeat becomes a candidate and asks for votes. "
    "A candidate with votes from a majority becomes the leader.",
    "Log replication. The leader appends commands to its log and replicates them to the followers.",
]
SUMMARY_HTML = (
    "<h2>Leader election</h2><p>A candidate needs a majority of votes [1].</p><p>Heartbeats stop elections.</p>"
)


def stub_reply(messages: list[dict[str, Any]]) -> Any:
    """The scripted model: a new note for "summarise", an edit of that note for "edit"."""
    if messages and messages[-1]["role"] == "tool":
        return "I suggested a project note."
    question = messages[-1]["content"] if messages else ""
    if "Draft a project note" in question:
        return {
            "content": None,
            "tool_calls": [
                {
                    "name": "suggest_note_create",
                    "arguments": {
                        "note_name": "Project plan",
                        "parent_id": None,
                        "content": "<p>Compare elections.</p>",
                        "description": "A plan",
                    },
                }
            ],
        }
    if "library" in question:
        context = messages[1]["content"]
        return "The mentioned paper is here." if "Raft Notes Paper" in context else "Nothing was mentioned."
    if "Summarise" in question:
        return {
            "content": None,
            "tool_calls": [
                {
                    "name": "suggest_note_create",
                    "arguments": {
                        "note_name": "Election summary",
                        "parent_id": None,
                        "content": SUMMARY_HTML,
                        "description": "Section 1 in three lines",
                    },
                }
            ],
        }
    if "Edit" in question:
        notes = messages[2]["content"]
        note_id = int(re.search(r"\[note\] Election summary \(id (\d+)\)", notes).group(1))
        return {
            "content": "I suggest a shorter summary.",
            "tool_calls": [
                {
                    "name": "suggest_note_edit",
                    "arguments": {
                        "note_id": note_id,
                        "note_name": "Election summary",
                        "content": "<h2>Leader election</h2><p>Majority vote [1].</p>",
                        "description": "Shorter",
                    },
                }
            ],
        }
    return "A plain answer [1]."


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("notes-browser")
    pdf = base / "raft-notes.pdf"
    pdf.write_bytes(make_pdf_bytes(PAGES, title="Raft Notes Paper"))
    with OpenAIStub() as stub:
        stub.reply = stub_reply
        env = embedded_env(
            base / "data",
            OPENAI_API_KEY="test-key",
            OPENAI_BASE_URL=stub.base_url,
            OPENAI_CHAT_MODEL="stub-chat",
            CONTEXTUAL_BLURBS="heuristic",
        )

        def prepare() -> None:
            create = f"User.objects.create_user({USERNAME!r}, '', {PASSWORD!r})"
            manage(env, "shell", "-c", f"from django.contrib.auth.models import User; {create}")
            manage(env, "ingest_papers", str(pdf), "--user", USERNAME, "--project", PROJECT)

        with served(base, env, prepare) as up:
            yield up


@pytest.mark.browser
def test_a_suggested_note_is_accepted_and_a_rejected_edit_stays_rejected(visit):
    from playwright.sync_api import expect

    user = visit()
    page = user.page
    user.sign_in(USERNAME, PASSWORD)
    user.goto("/papers/")
    page.locator(".card-title a").first.click()
    user.wait_for_chat()
    tree = page.locator("#note-tree")
    expect(tree).to_contain_text("No notes yet.")

    answer = user.ask("Summarise section 1 into a new note")
    expect(answer.locator(".message-text")).to_have_text("Here are my suggestions: 1 new note.")
    card = answer.locator(".suggestion-card")
    expect(card.locator(".badge")).to_have_text("New note")
    expect(card.locator(".suggestion-name")).to_have_text("Election summary")
    expect(card.locator(".suggestion-description")).to_have_text("Section 1 in three lines")
    expect(card.locator(".suggestion-preview")).to_contain_text("A candidate needs a majority of votes [1].")
    card.get_by_role("button", name="Accept").click()
    expect(card).to_have_attribute("data-status", "accepted")
    expect(tree.locator(".note-link", has_text="Election summary")).to_be_visible()

    edit = user.ask("Edit the election summary to be shorter")
    edit_card = edit.locator(".suggestion-card")
    expect(edit_card.locator(".badge")).to_have_text("Edit")
    expect(edit_card.locator(".diff-del").first).to_contain_text("A candidate needs a majority of votes [1].")
    expect(edit_card.locator(".diff-add").first).to_contain_text("Majority vote [1].")
    edit_card.get_by_role("button", name="Reject").click()
    expect(edit_card).to_have_attribute("data-status", "rejected")

    # "Save to notes" on a plain answer: a new note, its citation kept as a link.
    plain = user.ask("What does page 1 say?")
    plain.locator(".save-to-notes summary").click()
    plain.get_by_role("button", name="Save").click()
    saved = plain.locator(".save-state a")
    expect(saved).to_have_text("“A plain answer.”")  # named without its citation marker
    expect(tree.locator(".note-link", has_text="A plain answer.")).to_be_visible()
    plain.get_by_role("button", name="Save").click()  # the same answer again: the note it is in
    expect(plain.locator(".save-state")).to_have_text("Already saved in “A plain answer.”.")
    expect(tree.locator(".note-link", has_text="A plain answer.")).to_have_count(1)

    page.reload()
    user.wait_for_chat()
    cards = page.locator("#chat-messages .suggestion-card")
    expect(cards).to_have_count(2)
    expect(cards.nth(0)).to_have_attribute("data-status", "accepted")
    expect(cards.nth(1)).to_have_attribute("data-status", "rejected")
    expect(cards.nth(1).get_by_role("button", name="Accept")).to_be_hidden()

    # The accepted note keeps its citation as a link to the paper's page, in the editor too.
    tree.locator(".note-link", has_text="Election summary").click()
    editor = page.locator(".ql-editor")
    expect(editor).to_contain_text("A candidate needs a majority of votes")
    link = editor.locator("a", has_text="[1]")
    assert re.search(r"/papers/\d+/read/\?page=1$", link.get_attribute("href") or "")
    editor.locator("p", has_text="Heartbeats stop elections.").click()
    page.keyboard.press("End")
    page.keyboard.type(" Typed in the editor.")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".flash")).to_contain_text("Saved")
    expect(page.locator(".ql-editor")).to_contain_text("Heartbeats stop elections. Typed in the editor.")
    expect(page.locator(".ql-editor a", has_text="[1]")).to_have_count(1)
    assert page.locator("script:not([src])").count() == 0
    user.check_console()


@pytest.mark.browser
def test_the_project_copilot_and_the_library_copilot_answer_with_cards_and_mentions(visit):
    from playwright.sync_api import expect

    user = visit()
    page = user.page
    user.sign_in(USERNAME, PASSWORD)
    user.goto("/")
    page.get_by_role("link", name=PROJECT).click()
    copilot = page.locator("#copilot")
    expect(copilot).to_have_attribute("data-ready", "true")
    copilot.get_by_label("Ask the notes copilot").fill("Draft a project note")
    copilot.get_by_role("button", name="Ask the copilot").click()
    # The copilot retrieves passages first: the server's first question loads the embedding model.
    answer = copilot.locator(".message-assistant:not(.streaming)").last
    expect(answer.locator(".message-text")).to_have_text("I suggested a project note.", timeout=ANSWER_TIMEOUT * 1000)
    card = answer.locator(".suggestion-card")
    expect(card.locator(".suggestion-preview")).to_have_text("Compare elections.")
    card.get_by_role("button", name="Accept").click()
    expect(card).to_have_attribute("data-status", "accepted")
    expect(page.locator("#note-tree .note-link", has_text="Project plan")).to_be_visible()
    page.reload()
    expect(copilot).to_have_attribute("data-ready", "true")
    expect(page.locator("#copilot .suggestion-card")).to_have_attribute("data-status", "accepted")

    user.goto("/notes/library/")
    expect(page.locator("#copilot")).to_have_attribute("data-ready", "true")
    question = page.get_by_label("Ask the library copilot")
    question.press_sequentially("What does @Raft")
    page.locator(".mention-option", has_text="Raft Notes Paper").click()
    expect(page.locator("#copilot-mentions")).to_contain_text("paper: Raft Notes Paper")
    question.press_sequentially("say, library?")
    page.get_by_role("button", name="Ask the copilot").click()
    expect(page.locator("#copilot .message-assistant").last).to_have_text(re.compile("The mentioned paper is here."))
    user.check_console()
