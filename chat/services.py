"""Project chat: retrieve, answer (chat model or extractive), parse citations, save the turn.

`AnswerSession.events()` yields the WebSocket event vocabulary (documented in `chat.events`); the
consumer only forwards them. `answer_question` is the synchronous form used by `manage.py ask`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from chat import events, llm
from chat.citations import CitationStream
from chat.extractive import candidate_sentences, compose_extractive_answer
from chat.models import ChatMessage, ProjectChat
from chat.prompts import REFUSAL, Turn, build_messages, trim_history
from indexing.chunking import count_tokens
from indexing.embeddings import embed_query, get_embedder
from indexing.retrieval import Reference, Retrieval, retrieve_passages
from projects.models import Project

MAX_QUESTION_CHARS = 4000
# Extractive answers quote sentences at least this similar to the question (cosine).
EXTRACTIVE_MIN_SENTENCE_SCORE = 0.2


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


def _history_turns(project: Project) -> list[Turn]:
    turns = [
        Turn(role=m.role, text=m.text)
        for m in ChatMessage.objects.filter(chat__project=project, state=ChatMessage.State.COMPLETE).order_by(
            "-created_at", "-pk"
        )[:40]
    ]
    turns.reverse()
    return trim_history(turns, budget_tokens=settings.PROJECT_CHAT_HISTORY_TOKENS, count_tokens=count_tokens)


def _retrieve(project: Project, question: str) -> Retrieval:
    papers = list(project.papers.all())
    return retrieve_passages(papers=papers, question=question)


def extractive_answer(question: str, references: list[Reference]) -> str:
    """Compose the extractive answer for *references*; the refusal text when nothing qualifies."""
    sentences = candidate_sentences(references)
    if not sentences:
        return REFUSAL
    scores = get_embedder().embed([s.text for s in sentences]) @ embed_query(question)
    return compose_extractive_answer(sentences, scores, min_score=EXTRACTIVE_MIN_SENTENCE_SCORE) or REFUSAL


@dataclass
class AnswerSession:
    """One question being answered. Holds the partial answer so a cancelled session can still be
    saved (`save(state=...)`)."""

    project: Project
    user: AbstractBaseUser
    question: str
    text: str = ""
    references: dict[int, Reference] = field(default_factory=dict)
    cited: list[int] = field(default_factory=list)
    extractive: bool = False
    saved: ChatMessage | None = None

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        """Yield `answer.start`, `answer.delta` and `answer.citation` events, then `answer.done`.

        Raises AnnotagentError subclasses (chunk index, embedding or chat model failures); the
        partial answer is saved as failed first.
        """
        try:
            async for event in self._generate():
                yield event
        except asyncio.CancelledError:
            raise
        except Exception:
            await self.save(state=ChatMessage.State.FAILED)
            raise
        message = await self.save(state=ChatMessage.State.COMPLETE)
        yield events.answer_done(message)

    async def _generate(self) -> AsyncIterator[dict[str, Any]]:
        await sync_to_async(self._save_question)()
        retrieval = await sync_to_async(_retrieve)(self.project, self.question)
        self.references = {ref.n: ref for ref in retrieval.references}
        self.extractive = not llm.chat_model_configured()
        yield events.answer_start(extractive=self.extractive, indexing=retrieval.indexing)
        parser = CitationStream(valid=set(self.references))
        async for piece in self._pieces(retrieval):
            text, new = parser.feed(piece)
            for event in self._emit(text, new):
                yield event
        text, new = parser.close()
        for event in self._emit(text, new):
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

    async def _pieces(self, retrieval: Retrieval) -> AsyncIterator[str]:
        if not retrieval.references:
            answer = REFUSAL
            if retrieval.indexing and not retrieval.searched_papers:
                answer = "None of this project's papers is ready to search yet; ask again once indexing finishes."
            for word in _words(answer):
                yield word
            return
        if self.extractive:
            answer = await sync_to_async(extractive_answer)(self.question, retrieval.references)
            for word in _words(answer):
                yield word
                await asyncio.sleep(0)
            return
        history = await sync_to_async(_history_turns)(self.project)
        # The question just saved is not history: drop it if the trim kept it.
        if history and history[-1].role == "user" and history[-1].text == self.question:
            history = history[:-1]
        messages = build_messages(question=self.question, references=retrieval.references, history=history)
        async for piece in llm.stream_chat(messages, model=llm.configured_chat_model(project=True)):
            yield piece

    def _save_question(self) -> None:
        chat = get_or_create_chat(self.project)
        ChatMessage.objects.create(chat=chat, author=self.user, role=ChatMessage.Role.USER, text=self.question)

    async def save(self, *, state: str) -> ChatMessage:
        """Save the (possibly partial) answer with its citation map, once."""
        if self.saved is None:
            self.saved = await sync_to_async(self._save_answer)(state)
        return self.saved

    def _save_answer(self, state: str) -> ChatMessage:
        chat = get_or_create_chat(self.project)
        citations = {str(n): self.references[n].as_citation() for n in self.cited}
        message = ChatMessage.objects.create(
            chat=chat,
            role=ChatMessage.Role.ASSISTANT,
            text=self.text,
            citations=citations,
            state=state,
            extractive=self.extractive,
        )
        return message


def _words(text: str) -> list[str]:
    """Split *text* into stream pieces (a word with its following space)."""
    return re.findall(r"\S+\s*|\s+", text)


@dataclass(frozen=True)
class Answer:
    text: str
    references: list[Reference]
    extractive: bool


def answer_question(*, project: Project, user: AbstractBaseUser, question: str) -> Answer:
    """Answer *question* synchronously (for commands): the saved text and the cited references,
    in order of first citation."""
    session = AnswerSession(project=project, user=user, question=question)

    async def run() -> None:
        async for _ in session.events():
            pass

    asyncio.run(run())
    return Answer(
        text=session.text, references=[session.references[n] for n in session.cited], extractive=session.extractive
    )
