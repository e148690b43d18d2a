"""In a real browser, without indexing: the reader highlights a quoted sentence that a line break
splits, and a citation's hover card shows a long quote without hiding it under its title line.

A module fixture migrates a fresh DATA_DIR, puts a generated PDF in a user's library and in a
project, saves one answer citing it, and serves it with Daphne (no task worker, no chat model).
"""

from __future__ import annotations

import dataclasses
import json
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote as url_quote

import pytest

from tests import test_browser
from tests.support.live_server import embedded_env
from tests.support.pdfs import make_pdf_bytes
from tests.test_browser import Server, manage, served

# The browser and visitor fixtures of the main browser test, over this module's server.
chromium = test_browser.chromium
visit = test_browser.visit

USERNAME, PASSWORD = "reader", "a-long-reader-password-2"
PROJECT = "Reader project"
TITLE = "In Search of an Understandable Consensus Algorithm"
# One text line per line of the page (fpdf2 writes each as its own text item, so PDF.js gives each
# its own span): "time-" / "outs" split a word at a line-end hyphen, "election" / "timeout" at a
# line break that is only white space.
PAGE = (
    "Raft uses randomized election timeouts to ensure that split votes are rare and\n"
    "that they are resolved quickly. To prevent split votes in the first place, election time-\n"
    "outs are chosen randomly from a fixed interval (e.g., 150-300ms). This spreads out the\n"
    "servers so that in most cases only a single server will time out.\n"
    "Each candidate restarts its randomized election\n"
    "timeout at the start of an election, and it waits for that timeout to elapse before\n"
    "starting the next election."
)
# The sentences as indexing quotes them: the line-end hyphen dropped, lines joined by a space.
HYPHENATED = (
    "To prevent split votes in the first place, election timeouts are chosen randomly from a fixed "
    "interval (e.g., 150-300ms)."
)
WRAPPED = (
    "Each candidate restarts its randomized election timeout at the start of an election, and it "
    "waits for that timeout to elapse before starting the next election."
)
# A quote longer than the hover card's quote box holds (once 8em, five and a half lines, cut off;
# now twelve lines, then it scrolls).
LONG_QUOTE = " ".join(
    [
        "Raft uses randomized election timeouts to ensure that split votes are rare and that they are",
        "resolved quickly. To prevent split votes in the first place, election timeouts are chosen",
        "randomly from a fixed interval (e.g., 150-300ms). This spreads out the servers so that in most",
        "cases only a single server will time out; it wins the election and sends heartbeats before any",
        "other servers time out. The same mechanism is used to handle split votes: each candidate",
        "restarts its randomized election timeout at the start of an election, and it waits for that",
        "timeout to elapse before starting the next election; this reduces the likelihood of another",
        "split vote in the new election. THE LAST WORDS OF THE QUOTE.",
    ]
)


@dataclass
class ReaderServer(Server):
    paper_id: int = 0


SETUP = """
from django.contrib.auth.models import User
from chat.models import ChatMessage
from chat.services import get_or_create_chat
from papers.services import add_paper_to_library
from projects.services import add_papers_to_project, create_project

user = User.objects.create_user({username!r}, "", {password!r})
paper = add_paper_to_library(user=user, data=open({pdf!r}, "rb").read(), filename="raft.pdf").paper
paper.title = {title!r}
paper.save(update_fields=["title"])
project = create_project(owner=user, name={project!r})
add_papers_to_project(project=project, papers=[paper], user=user)
citation = {{
    "paper_id": paper.pk, "title": {title!r}, "page": 1, "text": {quote!r}, "quote": {quote!r},
    "cite": "Ongaro and Ousterhout 2014", "author": "Ongaro", "year": 2014,
}}
chat = get_or_create_chat(project)
ChatMessage.objects.create(chat=chat, role="user", text="How are election timeouts chosen?")
answer = "They are chosen randomly [1]."
ChatMessage.objects.create(chat=chat, role="assistant", text=answer, citations={{"1": citation}})
print(paper.pk)
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[ReaderServer]:
    base = tmp_path_factory.mktemp("reader-browser")
    pdf = base / "raft.pdf"
    pdf.write_bytes(make_pdf_bytes([PAGE], title=TITLE))
    env = embedded_env(base / "data")
    paper_id = 0

    def prepare() -> None:
        nonlocal paper_id
        code = SETUP.format(
            username=USERNAME, password=PASSWORD, pdf=str(pdf), title=TITLE, project=PROJECT, quote=LONG_QUOTE
        )
        paper_id = int(manage(env, "shell", "-c", code).strip().splitlines()[-1])

    with served(base, env, prepare) as up:
        yield ReaderServer(**dataclasses.asdict(up), paper_id=paper_id)


def letters(text: str) -> str:
    """Lower-case letters and digits only, ligatures unfolded: how a sentence reads whatever the
    lines and hyphens."""
    return re.sub(r"[^a-z0-9]", "", unicodedata.normalize("NFKC", text).lower())


@pytest.mark.browser
@pytest.mark.parametrize(
    ("quote", "last_line"),
    [
        (HYPHENATED, "outs are chosen randomly"),
        (HYPHENATED.replace("fixed", "\ufb01xed"), "outs are chosen randomly"),
        (WRAPPED, "timeout at the start"),
    ],
    ids=["line-end hyphen", "line-end hyphen and a ligature", "white-space line break"],
)
def test_the_reader_highlights_the_whole_quoted_sentence_across_a_line_break(visit, server, quote, last_line):
    from playwright.sync_api import expect

    user = visit()
    page = user.page
    user.sign_in(USERNAME, PASSWORD)
    user.goto(f"/papers/{server.paper_id}/read/?page=1&quote={url_quote(quote)}")
    viewer = page.locator("#pdf-viewer")
    expect(viewer).to_have_attribute("data-shown-page", "1", timeout=30_000)
    expect(viewer).to_have_attribute("data-highlighted", "true")

    marked = page.locator(".pdf-page .textLayer .cited")
    expect(page.locator(".pdf-page .textLayer span", has_text=last_line)).to_have_class(re.compile(r"\bcited\b"))
    # Every word of the quote, the ones after the line break included, is in a highlighted span.
    assert letters(quote) in letters("".join(marked.all_text_contents())), marked.all_text_contents()
    user.check_console()


@pytest.mark.browser
def test_a_long_quote_in_a_hover_card_is_never_cut_off_under_its_title_line(visit):
    from playwright.sync_api import expect

    user = visit()
    page = user.page
    user.sign_in(USERNAME, PASSWORD)
    user.goto("/")
    page.get_by_role("link", name=PROJECT).click()
    user.wait_for_chat()
    link = page.locator("#chat-messages a.citation").first
    link.scroll_into_view_if_needed()
    link.hover()
    popup = link.locator(".citation-popup")
    expect(popup).to_be_visible()
    expect(popup).to_contain_text(f"{TITLE}, page 1")

    # Scrolled to its end (a quote taller than the card may scroll inside it), the quote's last
    # line is inside the quote's box, and the box ends above the title line.
    geometry = popup.evaluate(
        """(card) => {
            const quote = card.querySelector(".citation-quote");
            quote.scrollTop = quote.scrollHeight;
            const text = quote.firstChild;
            const range = document.createRange();
            range.setStart(text, text.length - 1);
            range.setEnd(text, text.length);
            const rects = range.getClientRects();
            return {
                last: rects[rects.length - 1].toJSON(),
                box: quote.getBoundingClientRect().toJSON(),
                title: card.querySelector(".citation-title").getBoundingClientRect().toJSON(),
                hidden: quote.scrollHeight - quote.clientHeight,
                overflow: getComputedStyle(quote).overflowY,
            };
        }"""
    )
    detail = json.dumps(geometry)
    assert geometry["hidden"] <= 1 or geometry["overflow"] in ("auto", "scroll"), f"the quote is cut off: {detail}"
    assert geometry["last"]["top"] >= geometry["box"]["top"] - 1, detail
    assert geometry["last"]["bottom"] <= geometry["box"]["bottom"] + 1, f"the last line is clipped: {detail}"
    assert geometry["box"]["bottom"] <= geometry["title"]["top"] + 1, f"the quote runs under the title: {detail}"
    user.check_console()
