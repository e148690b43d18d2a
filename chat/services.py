"""Project chat: retrieve, answer (chat model or extractive), parse citations, save the turn.

`AnswerSession.events()` yields the WebSocket event vocabulary (documented in `chat.events`); the
consumer only forwards them. `answer_question` is the synchronous form used by `manage.py ask`.
`StreamedAnswer` holds what project chat and per-paper chat (`chat.paper_chat`) share: the citation
parsing of the stream, the partial answer, and saving it exactly once.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from chat import events, llm
from chat.citations import CitationStream, renumber_by_first_citation
from chat.extractive import candidate_sentences, compose_extractive_answer
from chat.models import ChatMessage, ProjectChat
from chat.prompts import REFUSAL, Turn, answered_turns, build_messages, trim_history
from chat.question import PaperRef, QuestionAnalysis, analyse_question, first_author, rewrite_with_model
from indexing.chunking import count_tokens
from indexing.embeddings import embed_query, get_embedder
from indexing.retrieval import Focus, Reference, Retrieval, retrieve_passages
from papers.models import Paper
from projects.models import Project

logger = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 4000
# Extractive answers quote sentences at least this similar to the question (cosine).
EXTRACTIVE_MIN_SENTENCE_SCORE = 0.2
# History is read newest first up to this many messages before the token budget trims it further.
HISTORY_READ_LIMIT = 60


def get_or_create_chat(project: Project) -> ProjectChat:
    chat, _ = ProjectChat.objects.get_or_create(project=project)
    return chat


def chat_history(project: Project) -> list[ChatMessage]:
    """The project's saved messages, oldest first."""
    return list(ChatMessage.objects.filter(chat__project=project).order_by("created_at", "pk"))


@transaction.atomic
def clear_chat(*, project: Project) -> int:
    """Delete every message of *project*'s chat. Returns how many went."""
    deleted, _ = ChatMessage.objects.filter(chat__project=project).delete()
    return deleted


def trim_chat(*, project: Project, keep: int | None = None) -> int:
    """Delete all but the newest *keep* messages (default `PROJECT_CHAT_MAX_MESSAGES`) of
    *project*'s chat: the thread's growth bound. Returns how many went."""
    keep = settings.PROJECT_CHAT_MAX_MESSAGES if keep is None else keep
    messages = ChatMessage.objects.filter(chat__project=project)
    newest = list(messages.order_by("-created_at", "-pk").values_list("pk", flat=True)[:keep])
    deleted, _ = messages.exclude(pk__in=newest).delete()
    return deleted


def history_turns(project: Project) -> list[Turn]:
    """The answered turns of *project*'s chat that fit `PROJECT_CHAT_HISTORY_TOKENS`, oldest first."""
    recent = list(ChatMessage.objects.filter(chat__project=project).order_by("-created_at", "-pk")[:HISTORY_READ_LIMIT])
    recent.reverse()
    turns = answered_turns(
        [
            Turn(
                role=m.role,
                text=m.text,
                complete=m.state == ChatMessage.State.COMPLETE,
                paper_ids=_cited_papers(m.citations),
            )
            for m in recent
        ]
    )
    return trim_history(turns, budget_tokens=settings.PROJECT_CHAT_HISTORY_TOKENS, count_tokens=count_tokens)


def _cited_papers(citations: dict[str, Any]) -> tuple[int, ...]:
    """The papers of a saved citation map, in the order of their first citation number."""
    numbered = sorted((int(n), c.get("paper_id")) for n, c in citations.items() if n.isdigit() and isinstance(c, dict))
    return tuple(dict.fromkeys(pid for _, pid in numbered if isinstance(pid, int)))


def paper_ref(paper: Paper) -> PaperRef:
    """What question analysis knows of *paper*: title (a file name without ".pdf" when it has
    none), first author, year and the start of its abstract."""
    title = paper.title or re.sub(r"\.pdf$", "", paper.original_filename, flags=re.IGNORECASE) or paper.display_title
    return PaperRef(
        paper_id=paper.pk,
        title=title,
        first_author=first_author(paper.authors),
        year=paper.year,
        abstract=paper.abstract[:1500],
    )


def analyse_for_project(project: Project, question: str, history: list[Turn]) -> QuestionAnalysis:
    """*question* analysed against *history* (the chat's answered turns) and *project*'s papers; a
    follow-up is rewritten by the project chat model when one is configured (the deterministic
    rewrite stands when the model fails)."""
    papers = [paper_ref(paper) for paper in project.papers.all()]
    analysis = analyse_question(question, history=history, papers=papers)
    if analysis.rewritten and llm.chat_model_configured():
        try:
            analysis = rewrite_with_model(
                analysis, history=history, papers=papers, model=llm.configured_chat_model(project=True)
            )
        except llm.ChatModelError:
            logger.warning("Rewriting the follow-up %r failed; using %r", question, analysis.query, exc_info=True)
    return analysis


def _retrieve(project: Project, analysis: QuestionAnalysis) -> Retrieval:
    papers = list(project.papers.all())
    focus = Focus(paper_ids=analysis.named_paper_ids, comparison=analysis.comparison, broad=analysis.broad)
    return retrieve_passages(papers=papers, question=analysis.query, focus=focus)


def extractive_answer(
    question: str,
    references: list[Reference],
    *,
    refusal: str = REFUSAL,
    query_embedding: np.ndarray | None = None,
) -> str:
    """Compose the extractive answer for *references*; *refusal* when no sentence qualifies.
    *query_embedding* is the question's embedding when retrieval already computed it."""
    sentences = candidate_sentences(references)
    if not sentences:
        return refusal
    query = embed_query(question) if query_embedding is None else query_embedding
    scores = get_embedder().embed([s.text for s in sentences]) @ query
    return compose_extractive_answer(sentences, scores, min_score=EXTRACTIVE_MIN_SENTENCE_SCORE) or refusal


def words(text: str) -> list[str]:
    """Split *text* into stream pieces (a word with its following space)."""
    return re.findall(r"\S+\s*|\s+", text)


@dataclass(kw_only=True)
class StreamedAnswer:
    """One question being answered, as a stream of events. Subclasses supply `_prepare` (save the
    question, find the references, return the `answer.start` event), `_pieces` (the raw answer
    text) and `_save_answer`.

    Holds the partial answer so a cancelled session can still be saved (`save(state=...)`); the
    answer is saved exactly once, even when a cancel arrives while the final save is running.
    """

    question: str
    text: str = ""
    references: dict[int, Reference] = field(default_factory=dict)
    cited: list[int] = field(default_factory=list)
    extractive: bool = False
    saved: Any = None
    _saving: asyncio.Future[Any] | None = field(default=None, init=False, repr=False)

    async def events(self) -> AsyncGenerator[dict[str, Any], None]:
        """Yield `answer.start`, `answer.delta` and `answer.citation` events, then `answer.done`.

        Raises AnnotagentError subclasses (chunk index, embedding or chat model failures); the
        partial answer is saved as failed first. Cancellation propagates (the caller saves the
        partial answer as stopped); closing the generator closes the model's stream.
        """
        try:
            async with aclosing(self._generate()) as stream:
                async for event in stream:
                    yield event
        except Exception:
            await self.save(state=ChatMessage.State.FAILED)
            raise
        message = await self.save(state=ChatMessage.State.COMPLETE)
        yield events.answer_done(message)

    async def _generate(self) -> AsyncGenerator[dict[str, Any], None]:
        yield await self._prepare()
        parser = CitationStream(valid=set(self.references))
        async with aclosing(self._pieces()) as pieces:
            async for piece in pieces:
                for event in self._emit(*parser.feed(piece)):
                    yield event
        for event in self._emit(*parser.close()):
            yield event

    def _emit(self, text: str, new: list[int]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for n in new:
            self.cited.append(n)
            out.append(events.answer_citation(self.references[n]))
        if text:
            self.text += text
            out.append(events.answer_delta(text))
        return out

    async def save(self, *, state: str) -> Any:
        """Save the (possibly partial) answer with its citation map, once; later calls return the
        first save's message whatever *state* they ask for."""
        if self._saving is None:
            self._saving = asyncio.ensure_future(sync_to_async(self._save_answer)(state))
        # Shielded: a cancel arriving mid-save must not leave the answer half-saved or saved twice.
        self.saved = await asyncio.shield(self._saving)
        return self.saved

    def citation_map(self) -> dict[str, dict[str, object]]:
        """`{"N": citation}` for every reference cited so far, saved with the message."""
        return {str(n): self.references[n].as_citation() for n in self.cited}

    async def _prepare(self) -> dict[str, Any]:
        raise NotImplementedError

    def _pieces(self) -> AsyncGenerator[str, None]:
        raise NotImplementedError

    def _save_answer(self, state: str) -> Any:
        raise NotImplementedError


@dataclass(kw_only=True)
class AnswerSession(StreamedAnswer):
    """A question to a project's chat: retrieval over the project's ready papers, then the project
    chat model (`OPENAI_PROJECT_CHAT_MODEL`, else `OPENAI_CHAT_MODEL`) or the extractive answerer."""

    project: Project
    user: User
    retrieval: Retrieval | None = None
    # False: a one-off question (`manage.py ask` without --chat): no history read, nothing saved.
    persist: bool = True
    history: list[Turn] = field(default_factory=list)
    analysis: QuestionAnalysis | None = None

    async def _prepare(self) -> dict[str, Any]:
        if self.persist:
            self.history = await sync_to_async(history_turns)(self.project)
        await sync_to_async(self._save_question)()
        self.analysis = await sync_to_async(analyse_for_project)(self.project, self.question, self.history)
        self.retrieval = await sync_to_async(_retrieve)(self.project, self.analysis)
        self.references = {ref.n: ref for ref in self.retrieval.references}
        self.extractive = not llm.chat_model_configured()
        return events.answer_start(
            extractive=self.extractive, indexing=self.retrieval.indexing, failed=self.retrieval.failed
        )

    async def _pieces(self) -> AsyncGenerator[str, None]:
        retrieval = self.retrieval
        assert retrieval is not None
        if not retrieval.references:
            answer = REFUSAL
            if retrieval.indexing and not retrieval.searched_papers:
                answer = "None of this project's papers is ready to search yet; ask again once indexing finishes."
            elif retrieval.failed and not retrieval.searched_papers:
                answer = "None of this project's papers could be indexed, so there is nothing to search yet."
            for word in words(answer):
                yield word
            return
        if self.extractive:
            answer = await sync_to_async(extractive_answer)(
                self.question, retrieval.references, query_embedding=retrieval.query_embedding
            )
            # The whole answer is known before it streams: number references as they appear.
            answer, mapping = renumber_by_first_citation(answer, self.references)
            self.references = {mapping[n]: replace(ref, n=mapping[n]) for n, ref in self.references.items()}
            for word in words(answer):
                yield word
                await asyncio.sleep(0)
            return
        messages = build_messages(question=self.question, references=retrieval.references, history=self.history)
        async with aclosing(llm.stream_chat(messages, model=llm.configured_chat_model(project=True))) as stream:
            async for piece in stream:
                yield piece

    def _save_question(self) -> None:
        if not self.persist:
            return
        chat = get_or_create_chat(self.project)
        ChatMessage.objects.create(chat=chat, author=self.user, role=ChatMessage.Role.USER, text=self.question)

    def _save_answer(self, state: str) -> ChatMessage | dict[str, Any]:
        if not self.persist:  # the Message shape, unsaved
            return {
                "id": None,
                "role": ChatMessage.Role.ASSISTANT,
                "text": self.text,
                "citations": self.citation_map(),
                "state": state,
                "extractive": self.extractive,
                "created_at": None,
            }
        with transaction.atomic():
            message = ChatMessage.objects.create(
                chat=get_or_create_chat(self.project),
                role=ChatMessage.Role.ASSISTANT,
                text=self.text,
                citations=self.citation_map(),
                state=state,
                extractive=self.extractive,
            )
            trim_chat(project=self.project)
        return message


@dataclass(frozen=True)
class Answer:
    """An answer given synchronously: its text, the cited references in order of first citation,
    whether it is extractive, and `query`, the standalone question retrieval used (the question, or
    its rewrite when it followed up an earlier turn)."""

    text: str
    references: list[Reference]
    extractive: bool
    query: str = ""


def answer_question(*, project: Project, user: User, question: str, chat: bool = False) -> Answer:
    """Answer *question* synchronously (for commands). With *chat*, the question is a turn of the
    project's chat: it is resolved against the thread's history (follow-ups) and the question and
    answer are appended to the thread; without, it stands alone and nothing is saved."""
    session = AnswerSession(project=project, user=user, question=question, persist=chat)

    async def run() -> None:
        async for _ in session.events():
            pass

    # async_to_sync, not asyncio.run: the session's database calls then run in this thread, on this
    # thread's connection (and inside a caller's transaction), instead of a worker thread's.
    async_to_sync(run)()
    return Answer(
        text=session.text,
        references=[session.references[n] for n in session.cited],
        extractive=session.extractive,
        query=session.analysis.query if session.analysis is not None else question,
    )
