"""End to end, as a user sees it: real processes, a real browser.

A module fixture builds the embedded default from scratch in a temporary DATA_DIR (SQLite, the
embedded chunk-index server, local embeddings, the extractive answerer): `migrate`,
`collectstatic`, `demo` over two real papers, then the task worker (`db_worker`) and the web server
(`daphne`) as subprocesses. The system Chromium, headless, drives the UI through Playwright. Every
page's console errors (CSP violations included) fail the test that caused them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PAPERS_DIR
from tests.support.live_server import embedded_env, free_port, manage, start_daphne, stop, wait_for_http
from tests.support.pdfs import make_pdf_bytes

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parent.parent
DEMO_PAPERS = ("raft.pdf", "paxos-made-simple.pdf")
DEMO_USERNAME = "demo"
DEMO_PASSWORD = "annotagent-demo"
# The demo names its project after the folder of PDFs.
DEMO_PROJECT = "Demo: consensus"

# Seconds. Indexing a small PDF in the worker includes loading the embedding model once.
ANSWER_TIMEOUT = 60
INDEXING_TIMEOUT = 90

CROSS_PAPER_QUESTION = "How does Raft elect a leader, and how does Paxos choose a value?"
ZEBRA_TITLE = "The Zebra Consensus Protocol"
ZEBRA_PAGES = [
    "The zebra consensus protocol. The zebra consensus protocol lets a herd of replicas agree on one "
    "ordered log. Each replica in the herd is called a zebra, and every zebra keeps a striped journal "
    "of the commands it has accepted.",
    "Stripe election in the zebra consensus protocol. When the lead zebra stops sending heartbeats, "
    "the zebra with the longest striped journal calls a stripe election. A zebra becomes the lead "
    "zebra when a majority of the herd grants it a stripe vote.",
    # Hostile text inside a paper: it must show up as text and never run.
    "Journal hygiene in the zebra consensus protocol. A zebra journal may record markup such as "
    '<script>window.zebraPwned = true</script> or <img src=x onerror="window.zebraPwned = true"> '
    "verbatim, and the zebra consensus protocol treats such markup as plain bytes.",
]


# --- the system under test ------------------------------------------------------------------------


@dataclass
class Server:
    base_url: str
    data_dir: Path
    env: dict[str, str]
    logs: dict[str, Path] = field(default_factory=dict)

    def url(self, path: str) -> str:
        return self.base_url + path

    def log_tail(self, lines: int = 40) -> str:
        parts = []
        for name, path in self.logs.items():
            text = path.read_text(errors="replace").splitlines()[-lines:] if path.exists() else []
            parts.append(f"--- {name} ({path}) ---\n" + "\n".join(text))
        return "\n".join(parts)


def stop_chunk_index_server(env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "chunk_index_server", "stop"], cwd=ROOT, env=env, capture_output=True, timeout=60
    )


@contextmanager
def served(base: Path, env: dict[str, str], prepare: Callable[[], None]) -> Iterator[Server]:
    """A browser test's own Annotagent: migrate the database of *env* (its DATA_DIR under *base*),
    collect static files, run *prepare* (users, papers, projects through `manage`), then serve with
    Daphne on a free port (no task worker). Daphne and the chunk index server are stopped and *base*
    removed afterwards. Skips when Chromium is missing."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium")
    port = free_port()
    server = Server(base_url=f"http://127.0.0.1:{port}", data_dir=Path(env["DATA_DIR"]), env=env)
    process = None
    try:
        manage(env, "migrate", "--noinput", "-v0")
        manage(env, "collectstatic", "--noinput", "-v0")
        prepare()
        server.logs["daphne"] = base / "daphne.log"
        process = start_daphne(env, port, server.logs["daphne"])
        wait_for_http(server, process)
        yield server
    finally:
        if process is not None:
            stop(process)
        stop_chunk_index_server(env)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} is missing: install Debian's chromium (./run test does, as root, via .ci/browser-deps)"
        )
    sources = [PAPERS_DIR / "consensus" / name for name in DEMO_PAPERS]
    if not all(path.exists() for path in sources):
        pytest.skip(f"the shared papers {', '.join(map(str, sources))} are not on this machine")

    base = tmp_path_factory.mktemp("browser")
    papers = base / "consensus"
    papers.mkdir()
    for path in sources:
        (papers / path.name).symlink_to(path)
    data_dir = base / "data"
    port = free_port()
    env = embedded_env(data_dir, DEMO_USERNAME=DEMO_USERNAME, DEMO_PASSWORD=DEMO_PASSWORD)
    server = Server(base_url=f"http://127.0.0.1:{port}", data_dir=data_dir, env=env)
    processes: list[subprocess.Popen[bytes]] = []
    try:
        manage(env, "migrate", "--noinput", "-v0")
        manage(env, "collectstatic", "--noinput", "-v0")
        manage(env, "demo", "--papers", str(papers))
        for name, command in (
            ("worker", [sys.executable, "manage.py", "db_worker"]),
            ("daphne", [str(Path(sys.executable).with_name("daphne")), "-b", "127.0.0.1", "-p", str(port)]),
        ):
            if name == "daphne":
                command.append("annotagent.asgi:application")
            log = base / f"{name}.log"
            server.logs[name] = log
            with log.open("wb") as out:
                processes.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT))
        wait_for_http(server, processes[-1])
        yield server
    finally:
        for process in reversed(processes):
            stop(process)
        stop_chunk_index_server(env)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def chromium(server) -> Iterator[Any]:
    pytest.importorskip("playwright", reason="the playwright package is not installed")
    from playwright.sync_api import expect, sync_playwright

    # This 2-core machine also indexes while the tests wait; Playwright's 5 s default is too tight.
    expect.set_options(timeout=15_000)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


# --- a user at a browser --------------------------------------------------------------------------


@dataclass
class Visitor:
    """One browser context (its own cookies) with one page, recording what the console reports."""

    server: Server
    page: Any
    console_errors: list[str] = field(default_factory=list)
    frames: list[dict[str, Any]] = field(default_factory=list)

    def goto(self, path: str) -> Any:
        return self.page.goto(self.server.url(path))

    def sign_in(self, username: str, password: str) -> None:
        from playwright.sync_api import expect

        self.goto("/accounts/login/")
        self.page.get_by_label("Username").fill(username)
        self.page.get_by_label("Password").fill(password)
        self.page.get_by_role("button", name="Sign in").click()
        expect(self.page.get_by_role("button", name="Sign out")).to_be_visible()

    def open_demo_project(self) -> None:
        from playwright.sync_api import expect

        self.goto("/")
        self.page.get_by_role("link", name=DEMO_PROJECT).click()
        expect(self.page.get_by_role("heading", level=1)).to_have_text(DEMO_PROJECT)
        self.wait_for_chat()

    def wait_for_chat(self) -> None:
        from playwright.sync_api import expect

        expect(self.page.locator("#chat")).to_have_attribute("data-socket", "open")

    def ask(self, question: str) -> Any:
        """Ask *question* in the project chat and return the finished assistant bubble."""
        from playwright.sync_api import expect

        before = self.page.locator("#chat-messages > .message-assistant").count()
        self.page.get_by_label("Question").fill(question)
        self.page.get_by_role("button", name="Ask").click()
        answer = self.page.locator("#chat-messages > .message-assistant").nth(before)
        expect(answer).to_have_attribute("data-state", "complete", timeout=ANSWER_TIMEOUT * 1000)
        return answer

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [frame for frame in self.frames if frame.get("type") == kind]

    def check_console(self, *, expected: tuple[str, ...] = ()) -> None:
        """No console errors but those matching one of the *expected* regular expressions."""
        unexpected = [e for e in self.console_errors if not any(re.search(p, e) for p in expected)]
        assert not unexpected, "browser console errors:\n" + "\n".join(unexpected)


@pytest.fixture
def visit(server, chromium) -> Iterator[Any]:
    """`visit()`: a new Visitor (fresh cookies). WebSocket frames from the server are recorded."""
    import json

    contexts = []

    def make() -> Visitor:
        context = chromium.new_context()
        context.set_default_timeout(15_000)
        contexts.append(context)
        visitor = Visitor(server=server, page=context.new_page())

        def on_console(message: Any) -> None:
            if message.type == "error":
                visitor.console_errors.append(f"{message.text} ({message.location.get('url', '')})")

        def on_websocket(ws: Any) -> None:
            def on_frame(payload: str | bytes) -> None:
                try:
                    visitor.frames.append(json.loads(payload))
                except ValueError:
                    visitor.frames.append({"type": "<not json>", "payload": payload})

            ws.on("framereceived", on_frame)

        visitor.page.on("console", on_console)
        visitor.page.on("pageerror", lambda error: visitor.console_errors.append(f"uncaught: {error}"))
        visitor.page.on("websocket", on_websocket)
        return visitor

    yield make
    for context in contexts:
        context.close()


def citation_data(link: Any) -> dict[str, Any]:
    n = re.match(r"\[(\d+)\]", link.text_content()).group(1)
    return {
        "n": n,
        "href": link.get_attribute("href"),
        "title": link.get_attribute("data-title"),
        "page": int(link.get_attribute("data-page")),
    }


def reader_path(citation: dict[str, Any]) -> str:
    return f"/papers/{citation['paper_id']}/read/?page={citation['page']}"


# --- scenarios ------------------------------------------------------------------------------------


@pytest.mark.browser
def test_cross_paper_answer_cites_pages_that_open_and_survive_a_reload(visit):
    from playwright.sync_api import expect

    user = visit()
    page = user.page
    user.sign_in(DEMO_USERNAME, DEMO_PASSWORD)
    user.open_demo_project()
    response = page.request.get(page.url)
    assert response.headers.get("content-security-policy"), "the project page has no Content-Security-Policy"
    assert page.locator("script:not([src])").count() == 0, "inline script on the project page"

    answer = user.ask(CROSS_PAPER_QUESTION)

    # It streamed: the text came in several deltas between answer.start and answer.done.
    kinds = [frame["type"] for frame in user.frames if frame["type"].startswith("answer.")]
    assert "answer.start" in kinds and kinds[-1] == "answer.done", kinds
    assert kinds.count("answer.delta") > 1, "the answer arrived in one piece, not streamed"
    assert page.locator("#chat-messages > .message[data-state='streaming']").count() == 0
    expect(page.get_by_role("button", name="Stop")).to_be_disabled()

    links = answer.locator("a.citation")
    assert links.count() >= 1, f"no citation in the answer: {answer.inner_text()}"
    citations = [citation_data(links.nth(i)) for i in range(links.count())]
    assert len({c["title"] for c in citations}) >= 2, f"the answer cites one paper only: {citations}"
    # Every link agrees with the server's citation event for its number.
    sent = {str(event["n"]): event for event in user.events("answer.citation")}
    for citation in citations:
        event = sent[citation["n"]]
        assert citation["href"] == reader_path(event) == event["url"]
        assert (citation["title"], citation["page"]) == (event["title"], event["page"])

    # Hover [1] (or the first citation when the answer does not cite reference 1).
    index = next((i for i, c in enumerate(citations) if c["n"] == "1"), 0)
    link, cited = links.nth(index), citations[index]
    popup = link.locator(".citation-popup")
    expect(popup).to_be_hidden()
    link.hover()
    expect(popup).to_be_visible()
    expect(popup).to_contain_text(cited["title"])
    expect(popup).to_contain_text(f"page {cited['page']}")
    assert popup_is_on_top(page, popup), "the citation popup is covered or clipped"

    link.click()
    page.wait_for_url(re.compile(re.escape(cited["href"]) + "$"))
    expect(page.get_by_role("heading", level=1)).to_have_text(cited["title"])
    expect(page.locator("#reader-page")).to_contain_text(f"Page {cited['page']}")
    viewer = page.locator("#pdf-viewer")
    expect(viewer).to_have_attribute("data-shown-page", str(cited["page"]), timeout=30_000)
    pdf = page.request.get(user.server.url(viewer.get_attribute("data-file-url")))
    assert pdf.ok and pdf.headers["content-type"] == "application/pdf"
    assert pdf.body().startswith(b"%PDF")

    page.go_back()
    page.reload()
    user.wait_for_chat()
    message_id = user.events("answer.done")[-1]["message"]["id"]
    reloaded = page.locator(f"#chat-messages > .message[data-message-id='{message_id}']")
    expect(reloaded).to_have_attribute("data-state", "complete")
    again = reloaded.locator("a.citation")
    assert [citation_data(again.nth(i)) for i in range(again.count())] == citations
    link = again.nth(index)
    link.hover()
    expect(link.locator(".citation-popup")).to_be_visible()
    expect(link.locator(".citation-popup")).to_contain_text(f"{cited['title']}, page {cited['page']}")
    expect(link.locator(".citation-popup .copy-citation").first).to_have_text("Copy citation")

    # The same links are in the server-rendered page itself, from the saved citation map.
    html = page.request.get(page.url).text()
    item = re.search(rf'<li class="message message-assistant" data-message-id="{message_id}".*?</li>', html, re.S)
    assert item, "the saved answer is not in the server-rendered page"
    for citation in citations:
        assert f'href="{citation["href"]}"' in item.group(0)
    user.check_console()


@pytest.mark.browser
def test_uploaded_paper_becomes_ready_live_and_is_cited(visit):
    from playwright.sync_api import expect

    user = visit()
    page = user.page
    user.sign_in(DEMO_USERNAME, DEMO_PASSWORD)
    user.open_demo_project()

    pdf = make_pdf_bytes(ZEBRA_PAGES, title=ZEBRA_TITLE, author="A. Zebra")
    page.get_by_label("PDF file").set_input_files(
        files=[{"name": "zebra.pdf", "mimeType": "application/pdf", "buffer": pdf}]
    )
    page.get_by_role("button", name="Upload").click()
    expect(page.locator(".flash")).to_contain_text("zebra.pdf")
    user.wait_for_chat()

    # Until indexing reads its metadata, the paper goes by its file name.
    item = page.locator(".paper-item").filter(has=page.get_by_role("link", name="zebra.pdf"))
    paper_id = item.locator(".paper-status").get_attribute("data-paper-id")
    status = page.locator(f".paper-status[data-paper-id='{paper_id}']")
    item = page.locator(".paper-item").filter(has=status)
    first = status.get_attribute("data-status")
    assert first in ("pending", "indexing"), f"the new paper starts {first!r}"
    # A marker that a reload would wipe: the chip must change in this very page.
    page.evaluate("() => { window.sameDocument = true; }")

    # Asked while it is indexing, the chat says which papers it could not search yet.
    user.ask("What is the zebra consensus protocol?")
    indexing = user.events("answer.start")[-1]["indexing"]
    notice = page.locator("#chat-notice")
    if indexing:
        expect(notice).to_be_visible()
        for title in indexing:
            expect(notice).to_contain_text(title)
    else:
        expect(notice).to_be_hidden()

    expect(status).to_have_attribute("data-status", "ready", timeout=INDEXING_TIMEOUT * 1000)
    expect(status.locator(".chip")).to_have_text("ready")
    expect(item.locator(".paper-title")).to_have_text(ZEBRA_TITLE)
    assert page.evaluate("() => window.sameDocument === true"), "the page reloaded"
    assert any(e.get("status") == "ready" for e in user.events("paper.status"))

    answer = user.ask("How does a zebra become the lead zebra in the zebra consensus protocol?")
    titles = [
        answer.locator("a.citation").nth(i).get_attribute("data-title")
        for i in range(answer.locator("a.citation").count())
    ]
    assert ZEBRA_TITLE in titles, f"the uploaded paper is not cited: {titles}\n{answer.inner_text()}"

    # Paper text with markup is shown as text and never runs.
    markup = user.ask("What markup may a zebra journal record, such as script or img onerror?")
    assert page.evaluate("() => window.zebraPwned === undefined")
    # The only images are figure thumbnails of hover cards, served by this site.
    assert page.locator("#chat-messages img:not(.citation-figure), #chat-messages script").count() == 0
    for source in page.locator("#chat-messages img.citation-figure").evaluate_all("images => images.map(i => i.src)"):
        assert source.startswith(page.url.split("/projects/")[0] + "/papers/"), source
    expect(markup.locator(".message-text")).to_contain_text("<script>window.zebraPwned = true</script>")
    expect(markup.locator(".message-text")).to_contain_text('<img src=x onerror="window.zebraPwned = true">')
    user.check_console()


@pytest.mark.browser
def test_stop_leaves_no_stuck_or_duplicate_turns(visit):
    from playwright.sync_api import expect

    user = visit()
    page = user.page
    user.sign_in(DEMO_USERNAME, DEMO_PASSWORD)
    user.open_demo_project()
    question = "What happens to a Raft follower whose election timeout elapses? (stop test)"
    messages = page.locator("#chat-messages > .message")
    before = messages.count()

    page.get_by_label("Question").fill(question)
    page.get_by_role("button", name="Ask").click()
    stop = page.get_by_role("button", name="Stop")
    expect(stop).to_be_enabled()
    # The answer may finish while the page still scrolls; a dispatched click does not wait for the
    # button to hold still, and a click that arrives after the end changes nothing (both are allowed).
    stop.dispatch_event("click")

    answer = page.locator("#chat-messages > .message-assistant").last
    expect(answer).to_have_attribute("data-state", re.compile("^(stopped|complete)$"), timeout=ANSWER_TIMEOUT * 1000)
    expect(page.locator("#chat-messages > .message[data-state='streaming']")).to_have_count(0)
    expect(stop).to_be_disabled()
    expect(page.get_by_role("button", name="Ask")).to_be_enabled()
    state = answer.get_attribute("data-state")
    if state == "stopped":
        expect(answer.locator(".label-stopped")).to_have_text("stopped")
    expect(messages).to_have_count(before + 2)

    page.reload()
    user.wait_for_chat()
    expect(messages).to_have_count(before + 2)
    expect(page.locator("#chat-messages > .message-user").filter(has_text=question)).to_have_count(1)
    expect(page.locator("#chat-messages > .message[data-state='streaming']")).to_have_count(0)
    expect(messages.last).to_have_attribute("data-state", state)
    user.check_console()


@pytest.mark.browser
def test_the_reader_chats_about_one_paper_and_cites_its_pages(visit):
    from playwright.sync_api import expect

    user = visit()
    page = user.page
    user.sign_in(DEMO_USERNAME, DEMO_PASSWORD)
    user.open_demo_project()
    page.locator(".papers-column a", has_text="Understandable Consensus").first.click()
    expect(page.locator("#reader-page")).to_contain_text("Page 1")
    user.wait_for_chat()

    answer = user.ask("How does Raft elect a leader?")

    links = answer.locator("a.citation")
    assert links.count() >= 1, f"no citation in the answer: {answer.inner_text()}"
    citation = citation_data(links.first)
    assert "Understandable Consensus" in citation["title"]
    assert citation["href"].endswith(f"?page={citation['page']}")
    # Another paper's reader starts with a chat of its own (keyed by paper).
    page.go_back()
    page.locator(".papers-column a", has_text="Paxos Made Simple").first.click()
    user.wait_for_chat()
    expect(page.locator("#chat-messages > .message")).to_have_count(0)
    user.check_console()


@pytest.mark.browser
def test_figures_show_in_the_reader_and_in_the_hover_card_of_a_passage_that_mentions_one(visit):
    from playwright.sync_api import expect

    user = visit()
    page = user.page
    user.sign_in(DEMO_USERNAME, DEMO_PASSWORD)
    user.open_demo_project()

    # Raft's passage on terms says "as shown in Figure 5": its card shows that figure.
    answer = user.ask("How is time divided into terms in Raft?")
    with_figure = [event for event in user.events("answer.citation") if event.get("figure")]
    assert with_figure, f"no citation carries a figure: {user.events('answer.citation')}"
    event = with_figure[0]
    link = answer.locator("a.citation", has_text=f"[{event['n']}]").first
    link.hover()
    thumbnail = link.locator(".citation-popup img.citation-figure")
    expect(thumbnail).to_be_visible()
    expect(thumbnail).to_have_attribute("src", event["figure"]["url"])
    expect(thumbnail).to_have_attribute("alt", event["figure"]["label"])
    page.wait_for_function("(image) => image.complete && image.naturalWidth > 0", arg=thumbnail.element_handle())

    # The reader lists the paper's figures, each image loaded and linking to its page.
    page.goto(user.server.url(reader_path(event)))
    figures = page.locator("details.figure-list")
    expect(figures.locator("summary")).to_contain_text("Figures and tables")
    figures.locator("summary").click()
    first = figures.locator("img").first
    expect(first).to_be_visible()
    page.wait_for_function("(image) => image.complete && image.naturalWidth > 0", arg=first.element_handle())
    assert re.search(r"\?page=\d+$", figures.locator("a").first.get_attribute("href"))
    user.check_console()


@pytest.mark.browser
def test_a_citation_opens_pdfjs_at_its_page_with_the_quoted_passage_highlighted(visit):
    from playwright.sync_api import expect

    user = visit()
    user.sign_in(DEMO_USERNAME, DEMO_PASSWORD)
    user.open_demo_project()
    link = user.ask("How does Raft elect a leader?").locator("a.citation").first
    page = user.page
    cited = citation_data(link)
    quote = link.get_attribute("data-quote")
    assert quote, "the citation carries no passage to highlight"

    link.click()
    page.wait_for_url(re.compile(re.escape(cited["href"]) + "$"))
    viewer = page.locator("#pdf-viewer")
    expect(viewer).to_have_attribute("data-shown-page", str(cited["page"]), timeout=30_000)
    expect(viewer).to_have_attribute("data-highlighted", "true")
    expect(page.locator(".pdf-toolbar .pdf-title")).to_have_text(cited["title"])
    marked = page.locator(".pdf-page .textLayer .cited")
    assert marked.count() >= 1
    first = marked.first
    expect(first).to_be_in_viewport()

    def fold(text: str) -> str:
        return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())

    spans = fold(" ".join(marked.all_text_contents()))
    assert fold(quote)[:40] in spans or spans in fold(quote), (spans, quote)
    assert page.locator("iframe").count() == 0, "the browser's own PDF viewer is still used"

    # Next turns the page in place; the header and the address follow, Back returns.
    page.locator(".reader-nav a[data-step='1']").click()
    expect(viewer).to_have_attribute("data-shown-page", str(cited["page"] + 1))
    expect(page.locator("#reader-page")).to_contain_text(f"Page {cited['page'] + 1}")
    assert page.url.endswith(f"?page={cited['page'] + 1}")
    page.go_back()
    expect(viewer).to_have_attribute("data-shown-page", str(cited["page"]))
    expect(page.locator("#reader-page")).to_contain_text(f"Page {cited['page']}")
    user.check_console()


@pytest.mark.browser
def test_outsider_gets_404_for_the_demo_project(visit):
    owner = visit()
    owner.sign_in(DEMO_USERNAME, DEMO_PASSWORD)
    owner.open_demo_project()
    project_path = owner.page.url.removeprefix(owner.server.base_url)
    paper_path = owner.page.locator(".paper-title").first.get_attribute("href")

    mallory = visit()
    page = mallory.page
    mallory.goto("/accounts/signup/")
    page.get_by_label("Username").fill("mallory")
    page.locator("#id_password1").fill("a-long-outsider-password-7")
    page.locator("#id_password2").fill("a-long-outsider-password-7")
    page.get_by_role("button", name="Sign up").click()
    page.get_by_role("button", name="Sign out").wait_for()
    assert DEMO_PROJECT not in page.content()

    for path in (project_path, paper_path, paper_path.replace("/read/", "/file/")):
        response = mallory.goto(path)
        assert response.status == 404, f"{path}: {response.status}"
    assert DEMO_PROJECT not in page.content()
    closed = page.evaluate(
        """(path) => new Promise((resolve) => {
            const ws = new WebSocket(`ws://${location.host}${path}`);
            ws.onopen = () => resolve("open");
            ws.onclose = () => resolve("refused");
        })""",
        f"/ws{project_path}chat/",
    )
    assert closed == "refused"
    mallory.check_console(expected=(r"status of 404", r"WebSocket connection to .* failed"))
    owner.check_console()


def popup_is_on_top(page: Any, popup: Any) -> bool:
    """Whether the popup's centre is the popup itself, not something covering or clipping it."""
    box = popup.bounding_box()
    if box is None:
        return False
    viewport = page.viewport_size
    inside = box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= viewport["width"]
    hit = page.evaluate(
        "([x, y]) => { const el = document.elementFromPoint(x, y); return !!el && !!el.closest('.citation-popup'); }",
        [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2],
    )
    return inside and hit


@pytest.mark.browser
def test_the_api_docs_render_offline_without_csp_errors(visit):
    from playwright.sync_api import expect

    reader = visit()
    reader.sign_in(DEMO_USERNAME, DEMO_PASSWORD)
    reader.goto("/api/docs/")
    expect(reader.page.locator(".swagger-ui .title")).to_contain_text("Annotagent API")
    expect(reader.page.locator(".opblock-summary-path", has_text="/api/projects/{id}/chat/").first).to_be_visible()
    reader.check_console()


@pytest.mark.browser
def test_a_long_thread_shows_its_newest_page_and_earlier_pages_on_request(visit, server):
    from playwright.sync_api import expect

    manage(
        server.env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User\n"
        "from chat.models import ChatMessage\n"
        "from chat.services import get_or_create_chat\n"
        "from projects.services import create_project\n"
        f"project = create_project(owner=User.objects.get(username={DEMO_USERNAME!r}), name='Long thread')\n"
        "chat = get_or_create_chat(project)\n"
        "for i in range(60): ChatMessage.objects.create(chat=chat, role='user', text=f'Question number {i}')\n",
    )
    reader = visit()
    reader.sign_in(DEMO_USERNAME, DEMO_PASSWORD)
    reader.goto("/")
    reader.page.get_by_role("link", name="Long thread").click()
    reader.wait_for_chat()
    messages = reader.page.locator("#chat-messages > .message")
    expect(messages).to_have_count(50)
    expect(messages.first).to_contain_text("Question number 10")
    earlier = reader.page.get_by_role("button", name="Show earlier messages")
    earlier.click()
    expect(messages).to_have_count(60)
    expect(messages.first).to_contain_text("Question number 0")
    expect(earlier).to_be_hidden()
    reader.check_console()


@pytest.mark.browser
def test_a_corrected_year_answers_a_metadata_question(visit):
    from playwright.sync_api import expect

    user = visit()
    page = user.page
    user.sign_in(DEMO_USERNAME, DEMO_PASSWORD)
    user.goto("/papers/")
    card = page.locator(".paper-card", has_text="Paxos Made Simple").first
    card.get_by_role("link", name="Correct metadata…").click()
    page.get_by_label("Year").fill("2006")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".paper-card", has_text="Paxos Made Simple").first).to_contain_text("2006")

    user.open_demo_project()
    answer = user.ask("Which papers are from 2006?")

    expect(answer).to_contain_text("From paper metadata")
    expect(answer).to_contain_text("Paxos Made Simple (2006)")
    link = answer.locator("a.citation").first
    assert citation_data(link)["page"] == 1
    assert "Understandable Consensus" not in answer.inner_text()
    user.check_console()


@pytest.mark.browser
def test_a_member_sees_anothers_question_and_its_answer_stream_in_live(visit):
    from playwright.sync_api import expect

    owner = visit()
    owner.sign_in(DEMO_USERNAME, DEMO_PASSWORD)

    bob = visit()
    bob.goto("/accounts/signup/")
    bob.page.get_by_label("Username").fill("bob-lab")
    bob.page.locator("#id_password1").fill("a-long-member-password-8")
    bob.page.locator("#id_password2").fill("a-long-member-password-8")
    bob.page.get_by_role("button", name="Sign up").click()
    bob.page.get_by_role("button", name="Sign out").wait_for()
    assert DEMO_PROJECT not in bob.page.content()

    # The owner shares the project with bob on its Members page.
    owner.open_demo_project()
    owner.page.locator("#members-link").click()
    owner.page.get_by_label("Username or e-mail").fill("bob-lab")
    owner.page.locator("#member-role").select_option("writer")
    owner.page.get_by_role("button", name="Add member").click()
    expect(owner.page.locator('#members tr[data-username="bob-lab"]')).to_be_visible()

    # bob, in his own browser context, now sees the shared project and opens it.
    bob.goto("/")
    expect(bob.page.locator(".project-card", has_text=DEMO_PROJECT).locator(".badge.shared")).to_be_visible()
    bob.open_demo_project()
    owner.open_demo_project()

    question = "How does Raft elect a leader? (seen live by another member)"  # unique in the demo's shared chat
    owner.ask(question)

    asked = bob.page.locator("#chat-messages > .message-user", has_text=question)
    expect(asked).to_be_visible(timeout=ANSWER_TIMEOUT * 1000)
    expect(asked.locator(".message-role")).to_have_text(DEMO_USERNAME)
    answer = bob.page.locator("#chat-messages > .message-assistant").last
    expect(answer).to_have_attribute("data-state", "complete", timeout=ANSWER_TIMEOUT * 1000)
    # Streamed: bob's socket received the deltas live, not only the finished turn.
    assert bob.events("chat.question") and bob.events("answer.delta") and bob.events("answer.done")
    assert answer.locator("a.citation").count() >= 1
    bob.check_console()
    owner.check_console()


@pytest.mark.browser
def test_a_refused_question_goes_back_into_the_box(visit):
    from playwright.sync_api import expect

    visitor = visit()
    visitor.sign_in(DEMO_USERNAME, DEMO_PASSWORD)
    visitor.open_demo_project()
    page = visitor.page
    box = page.get_by_label("Question")
    assert box.get_attribute("maxlength") == "4000"
    too_long = "Why? " * 1000  # past the limit: set by script, as a paste around maxlength would be
    box.evaluate("(box, text) => { box.value = text; }", too_long)
    before = page.locator("#chat-messages > .message-user").count()
    page.get_by_role("button", name="Ask").click()
    expect(page.locator("#chat-notice")).to_contain_text("4000")
    expect(page.locator("#chat-messages > .message-user")).to_have_count(before)
    assert box.input_value() == too_long.strip()
    visitor.check_console()


@pytest.mark.browser
def test_pdfs_dropped_on_the_library_upload_and_full_text_search_opens_the_page(visit):
    from playwright.sync_api import expect

    user = visit()
    page = user.page
    user.sign_in(DEMO_USERNAME, DEMO_PASSWORD)
    user.goto("/papers/")
    expect(page.locator(".drop-hint")).to_be_visible()  # the module enhanced the plain input

    pdf = make_pdf_bytes(["The okapi replication protocol keeps every okapi in step."], title="Okapi Replication")
    dropped = page.evaluate_handle(
        """(pdf) => {
            const files = new DataTransfer();
            files.items.add(new File([new Uint8Array(pdf)], "okapi.pdf", { type: "application/pdf" }));
            files.items.add(new File(["not a pdf"], "notes.txt", { type: "text/plain" }));
            return files;
        }""",
        list(pdf),
    )
    page.dispatch_event("h1", "dragenter", {"dataTransfer": dropped})
    expect(page.locator(".upload-form")).to_have_class(re.compile(r"\bdrop-active\b"))
    page.dispatch_event("h1", "dragover", {"dataTransfer": dropped})
    page.dispatch_event("h1", "drop", {"dataTransfer": dropped})

    expect(page.locator(".flash")).to_have_text("1 added, 1 refused: “notes.txt”: The file is not a PDF.")
    # The card names the file until the paper's title is read, then the title: which one shows
    # depends on how fast the worker got to it.
    expect(page.locator(".paper-card", has_text=re.compile(r"okapi\.pdf|Okapi Replication"))).to_be_visible()

    page.get_by_label("Search").fill("randomized election timeouts")
    page.get_by_role("button", name="Filter").click()
    card = page.locator(".paper-card")
    expect(card).to_have_count(1)
    expect(card.locator(".card-title")).to_contain_text("Understandable Consensus")
    expect(card.locator(".text-match mark")).to_have_text(re.compile("randomized election timeouts", re.IGNORECASE))
    card.locator(".text-match a").click()
    expect(page).to_have_url(re.compile(r"/read/\?page=\d+&quote=randomized"))
    user.check_console()
