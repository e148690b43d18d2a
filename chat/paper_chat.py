"""Per-paper chat: a focused conversation with one paper, private to one user, expiring after a day.

The paper's full text (rebuilt page by page from its chunks in the chunk index) goes into the prompt,
cut to `PAPER_CHAT_MAX_CHARS`; when it is cut the answer starts by saying so. Citations are pages:
`[N]` cites page N of the paper, so hover cards and links work as in project chat. With a chat
model the chat also sees the user's notes on the paper and may suggest note edits and new notes
(`notes.copilot.paper_turn`: one completion with tools); the suggestions are saved on the message. Without a chat
model, the answer is extractive: sentences quoted from the paper's chunks most similar to the
question, each cited with its page.

The transcript lives in `PaperChat.messages` (a list of Message objects, the shape of
`chat.events`), keyed by user and paper; one not touched for `PAPER_CHAT_EXPIRY` starts over.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotagent import llm
from chat import events
from chat.models import ChatMessage, PaperChat
from chat.pool import in_answer_pool
from chat.prompts import PageText, Turn, answered_turns, trim_history
from chat.services import StreamedAnswer, best_sentence_cosines, extractive_answer, figure_cards, words
from indexing import store
from indexing.chunking import count_tokens
from indexing.retrieval import Reference, paper_versions, retrieve_passages
from notes.copilot import paper_messages, paper_tool_calls
from notes.suggestions import OUTPUT_TOOL_SCHEMAS
from papers.models import Paper

PAPER_CHAT_EXPIRY = timedelta(hours=24)
# What a page citation's hover card quotes from the page when the model cited the whole page.
CITATION_EXCERPT_CHARS = 300
NOT_READY = "This paper is not indexed yet, so its text cannot be read; ask again once it is ready."
PAPER_REFUSAL = (
    "This paper doesn't cover this question: no passage in it was relevant enough to answer from. "
    "Try rephrasing the question."
)


# --- pure core ------------------------------------------------------------------------------------


def join_overlapping(head: str, tail: str) -> str:
    """*head* followed by *tail* without the text they share: chunks of one page overlap, the end
    of one being the start of the next. Joined with a space when they share nothing."""
    probe = tail[:16]
    position = head.find(probe) if probe else -1
    while position >= 0:
        shared = head[position:]
        if tail.startswith(shared):
            return head + tail[len(shared) :]
        if shared.startswith(tail):
            return head
        position = head.find(probe, position + 1)
    return f"{head} {tail}"


def pages_from_chunks(chunks: Sequence[tuple[int, str]]) -> list[PageText]:
    """Page texts rebuilt from a paper's chunks, given as (page number, text) in chunk order.

    Chunks never cross a page and overlap their predecessor on the same page (see
    `indexing.chunking`), so each page is its chunks joined at their overlaps. Pages without chunks
    (no text layer) are absent; the result is in page order."""
    pages: dict[int, str] = {}
    for page, text in chunks:
        pages[page] = join_overlapping(pages[page], text) if page in pages else text
    return [PageText(number, pages[number]) for number in sorted(pages)]


def fit_pages(pages: Sequence[PageText], *, max_chars: int) -> tuple[list[PageText], bool]:
    """The leading *pages* whose texts total at most *max_chars* characters, the last one cut to
    fit; and whether anything was left out."""
    kept: list[PageText] = []
    room = max_chars
    for page in pages:
        if len(page.text) <= room:
            kept.append(page)
            room -= len(page.text)
            continue
        if room > 0:
            kept.append(PageText(page.number, page.text[:room]))
        return kept, True
    return kept, False


def truncation_notice(pages: Sequence[PageText], page_count: int) -> str:
    """The sentence an answer starts with when the paper's text was cut."""
    last = pages[-1].number if pages else 0
    return (
        f"(This paper is longer than the chat's reading budget: only its text up to page {last} of "
        f"{page_count} was read.)\n\n"
    )


def page_references(paper: Paper, pages: Sequence[PageText]) -> dict[int, Reference]:
    """One reference per page, numbered by page: `[N]` cites page N."""
    return {
        page.number: Reference(
            n=page.number,
            paper_id=paper.pk,
            title=paper.display_title,
            page=page.number,
            text=page.text[:CITATION_EXCERPT_CHARS],
            score=1.0,
        )
        for page in pages
    }


# --- the transcript -------------------------------------------------------------------------------


def _expired(chat: PaperChat) -> bool:
    return chat.updated_at < timezone.now() - PAPER_CHAT_EXPIRY


@transaction.atomic
def open_paper_chat(*, user: User, paper: Paper) -> PaperChat:
    """*user*'s chat on *paper*, created if missing; a chat idle for `PAPER_CHAT_EXPIRY` (24 hours)
    is emptied first. The caller has checked that *paper* is in *user*'s library."""
    chat, _ = PaperChat.objects.select_for_update().get_or_create(user=user, paper=paper)
    if chat.messages and _expired(chat):
        chat.messages = []
        chat.save(update_fields=["messages", "updated_at"])
    return chat


@transaction.atomic
def clear_paper_chat(*, user: User, paper: Paper) -> int:
    """Empty *user*'s chat on *paper*. Returns how many messages went."""
    chat = open_paper_chat(user=user, paper=paper)
    count = len(chat.messages)
    chat.messages = []
    chat.save(update_fields=["messages", "updated_at"])
    return count


@transaction.atomic
def append_paper_message(*, user: User, paper: Paper, **message: Any) -> dict[str, Any]:
    """Append one Message (`role`, `text`, and optionally `citations`, `state`, `extractive`,
    `suggestions` (see `notes.suggestions`)) to
    *user*'s chat on *paper*, keeping the newest `PROJECT_CHAT_MAX_MESSAGES`. Returns it as saved,
    with its `id` and `created_at`."""
    chat = open_paper_chat(user=user, paper=paper)
    saved = {
        "id": max((m["id"] for m in chat.messages), default=0) + 1,
        "role": message["role"],
        "text": message["text"],
        "citations": message.get("citations", {}),
        "state": message.get("state", ChatMessage.State.COMPLETE),
        "extractive": message.get("extractive", False),
        "suggestions": message.get("suggestions", []),
        "created_at": timezone.now().isoformat(),
    }
    chat.messages = [*chat.messages, saved][-settings.PROJECT_CHAT_MAX_MESSAGES :]
    chat.save(update_fields=["messages", "updated_at"])
    return saved


@transaction.atomic
def save_paper_message(*, user: User, paper: Paper, message_id: int | None, **message: Any) -> dict[str, Any]:
    """Replace the fields of message *message_id* in *user*'s chat on *paper* with *message* (an
    answer saved again as it streams); append it (`append_paper_message`) when *message_id* is None
    or the message is gone (the chat was cleared or expired). Returns the message as saved."""
    chat = open_paper_chat(user=user, paper=paper)
    for saved in chat.messages:
        if saved["id"] == message_id:
            saved.update(message)
            chat.save(update_fields=["messages", "updated_at"])
            return saved
    return append_paper_message(user=user, paper=paper, **message)


def paper_history_turns(chat: PaperChat) -> list[Turn]:
    """The answered turns of *chat* that fit `PROJECT_CHAT_HISTORY_TOKENS`, oldest first."""
    turns = answered_turns(
        [Turn(role=m["role"], text=m["text"], complete=m["state"] == ChatMessage.State.COMPLETE) for m in chat.messages]
    )
    return trim_history(turns, budget_tokens=settings.PROJECT_CHAT_HISTORY_TOKENS, count_tokens=count_tokens)


def load_paper_pages(paper: Paper) -> list[PageText]:
    """The paper's text per page, rebuilt from its current chunks. Raises ChunkStoreError."""
    matrix = store.load_chunks(paper_versions([paper]), embedding_model=paper.embedding_model, with_embeddings=False)
    return pages_from_chunks([(chunk["pageNumber"], chunk["text"]) for chunk in matrix.chunks])


def _paper_passages(paper: Paper, question: str) -> list[Reference]:
    """The paper's chunks most similar to *question* (over `PROJECT_CHAT_MIN_RELEVANCE`), numbered
    by page; the best passage of a page stands for it."""
    top_k = settings.PROJECT_CHAT_TOP_K
    retrieval = retrieve_passages(
        papers=[paper], question=question, top_k=top_k, per_paper=top_k, sentence_scorer=best_sentence_cosines
    )
    by_page: dict[int, Reference] = {}
    for reference in retrieval.references:
        by_page.setdefault(reference.page, replace(reference, n=reference.page))
    return list(by_page.values())


# --- answering ------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class PaperAnswerSession(StreamedAnswer):
    """A question to *user*'s chat on *paper*: the paper's text and the chat model
    (`OPENAI_CHAT_MODEL`), or the extractive answerer over the paper's chunks."""

    user: User
    paper: Paper
    ready: bool = False
    pages: list[PageText] | None = None
    truncated: bool = False
    history: list[Turn] | None = None
    passages: list[Reference] | None = None
    suggestions: list[dict[str, Any]] = field(default_factory=list)
    answer_id: int | None = None

    async def _prepare(self) -> dict[str, Any]:
        await sync_to_async(self._start)()
        return events.answer_start(
            extractive=self.extractive, indexing=[] if self.ready else [self.paper.display_title]
        )

    def _start(self) -> None:
        chat = open_paper_chat(user=self.user, paper=self.paper)
        self.history = paper_history_turns(chat)
        append_paper_message(user=self.user, paper=self.paper, role=ChatMessage.Role.USER, text=self.question)
        self.paper.refresh_from_db()
        self.cited_papers = {self.paper.pk: self.paper}
        self.figures = figure_cards([self.paper.pk])
        self.ready = self.paper.index_status == Paper.IndexStatus.READY
        self.extractive = not llm.chat_model_configured()
        if not self.ready:
            return
        if self.extractive:
            self.passages = _paper_passages(self.paper, self.question)
            self.references = {reference.n: reference for reference in self.passages}
        else:
            pages = load_paper_pages(self.paper)
            self.pages, self.truncated = fit_pages(pages, max_chars=settings.PAPER_CHAT_MAX_CHARS)
            self.references = page_references(self.paper, self.pages)

    async def _pieces(self) -> AsyncGenerator[str, None]:
        if not self.ready:
            for word in words(NOT_READY):
                yield word
            return
        if self.extractive:
            passages = self.passages or []
            answer = (
                (await in_answer_pool(extractive_answer)(self.question, passages, refusal=PAPER_REFUSAL)).text
                if passages
                else PAPER_REFUSAL
            )
            for word in words(answer):
                yield word
                await asyncio.sleep(0)
            return
        pages = self.pages or []
        if self.truncated:
            yield truncation_notice(pages, self.paper.page_count)
        # With notes: the completion may also call the note tools; their suggestions are saved on
        # the message, and a reply made only of tool calls gets a summary sentence.
        messages = await sync_to_async(paper_messages)(
            paper=self.paper,
            user=self.user,
            question=self.question,
            pages=pages,
            truncated=self.truncated,
            history=self.history or [],
        )
        calls: list[llm.ToolCall] = []
        text = ""
        model = llm.configured_chat_model(project=False)
        stream = llm.stream_chat_with_tools(messages, model=model, tools=OUTPUT_TOOL_SCHEMAS, calls=calls)
        async with aclosing(stream) as pieces:
            async for piece in pieces:
                text += piece
                yield piece
        reply = await sync_to_async(paper_tool_calls)(
            user=self.user, paper=self.paper, text=text, calls=calls, references=self.references
        )
        self.suggestions = reply.suggestions
        for word in words(reply.closing_text()):
            yield word

    def _save_answer(self, state: str) -> dict[str, Any]:
        saved = save_paper_message(
            user=self.user,
            paper=self.paper,
            message_id=self.answer_id,
            role=ChatMessage.Role.ASSISTANT,
            text=self.text,
            citations=self.citation_map(),
            state=state,
            extractive=self.extractive,
            suggestions=self.suggestions,
        )
        self.answer_id = saved["id"]
        return saved

    def _save_progress(self) -> None:
        self._save_answer(ChatMessage.State.STOPPED)
