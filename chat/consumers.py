"""WebSocket consumers of project chat (`/ws/projects/<id>/chat/`) and per-paper chat
(`/ws/papers/<id>/chat/`); event vocabulary: `chat.events`.

Answer generation runs in an `asyncio` task, because Channels handles one message at a time: a
stream inside `receive` would block `cancel` and `disconnect`. A new question, a `cancel` or
`clear` frame, or a disconnect cancels the task (which closes the chat model's HTTP stream); the
partial answer is saved as stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from contextlib import aclosing
from typing import Any

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer, AsyncWebsocketConsumer
from django.conf import settings
from django.http import Http404

from annotagent.errors import ForbiddenError
from annotagent.ratelimit import FrameBudget, RateLimitedError, check_user_rate
from chat import events
from chat.models import ChatMessage
from chat.paper_chat import PaperAnswerSession, clear_paper_chat, open_paper_chat
from chat.services import (
    AnswerSession,
    QuestionError,
    QuestionTooLongError,
    StreamedAnswer,
    chat_history_page,
    check_question,
    clear_chat,
)
from chat.streaming import answer_events
from indexing.notifications import paper_group, status_event
from papers.models import Paper
from papers.services import get_paper_for_user
from projects.models import Project, Role
from projects.services import get_project_for_user

logger = logging.getLogger(__name__)

# Without Redis the worker's status events cannot reach this process; poll the database instead.
STATUS_POLL_SECONDS = 2.0
# Close code for a chat the user may not open (WebSocket application range 4000-4999).
CLOSE_NOT_FOUND = 4404
_MALFORMED = object()
_FRAMES = ("question", "cancel", "clear", "older")


class NotFoundConsumer(AsyncWebsocketConsumer):
    """Any other `/ws/` path (`/ws/projects/-1/chat/`, `/ws/projects/1abc/chat/`): refused with
    `CLOSE_NOT_FOUND` instead of the router's error (an HTTP 500 on the handshake)."""

    async def connect(self) -> None:
        await self.close(code=CLOSE_NOT_FOUND)


class ChatConsumer(AsyncJsonWebsocketConsumer):
    """What both chats share: frame parsing and limits, the answer task, cancel, clear and history.

    Subclasses implement `access` (authorise in `connect`; raise Http404 to refuse),
    `history_page`, `clear`, and `new_session`.
    """

    answer_task: asyncio.Task[None] | None = None
    frame_budget: FrameBudget
    # Set once a `slow_down` error was sent: further refused frames are dropped without a reply.
    told_to_slow_down = False

    async def connect(self) -> None:
        self.frame_budget = FrameBudget(
            burst=settings.CHAT_SOCKET_FRAME_BURST, per_second=settings.CHAT_SOCKET_FRAMES_PER_SECOND
        )
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        try:
            await self.access()
        except (Http404, OverflowError):
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.accept()
        await self.send_history()
        await self.connected()

    async def access(self) -> None:
        """Load what the chat is about for `self.scope["user"]`; raise Http404 if they may not."""
        raise NotImplementedError

    async def connected(self) -> None:
        """Hook run after the history is sent."""

    def history_page(self, before: int | None) -> tuple[list[Any], bool]:
        """The `CHAT_HISTORY_PAGE_SIZE` messages before message id *before* (the newest when None),
        oldest first, and whether older ones remain."""
        raise NotImplementedError

    def clear(self) -> None:
        raise NotImplementedError

    def new_session(self, question: str) -> StreamedAnswer:
        raise NotImplementedError

    async def send_history(self) -> None:
        messages, has_more = await database_sync_to_async(self.history_page)(None)
        await self.send_json(events.history(messages, has_more=has_more))

    async def disconnect(self, code: int) -> None:
        await self._cancel_answer()

    @classmethod
    async def decode_json(cls, text_data: str) -> Any:
        try:
            return json.loads(text_data)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser's stack
            return _MALFORMED

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        if not self.frame_budget.take():
            if not self.told_to_slow_down:
                self.told_to_slow_down = True
                await self.send_json(events.error("slow_down", "Slow down: too many messages. Wait a moment."))
            return
        self.told_to_slow_down = False
        if text_data is None:
            await self.send_json(events.error("malformed_frame", "Frames must be JSON text."))
            return
        if len(text_data) > settings.CHAT_MAX_FRAME_CHARS:
            await self.send_json(
                events.error("frame_too_large", f"Frames may be at most {settings.CHAT_MAX_FRAME_CHARS} characters.")
            )
            return
        await super().receive(text_data=text_data, bytes_data=bytes_data, **kwargs)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict) or content.get("type") not in _FRAMES:
            await self.send_json(
                events.error(
                    "malformed_frame",
                    'Send {"type": "question", "text": ...}, {"type": "cancel"}, {"type": "clear"} '
                    'or {"type": "older", "before": id}.',
                )
            )
            return
        if content["type"] == "older":
            await self._send_older(content.get("before"))
            return
        if content["type"] == "cancel":
            await self._cancel_answer()
            return
        if not await self._authorised(content["type"]):
            return
        if content["type"] == "clear":
            await self._cancel_answer()
            await database_sync_to_async(self.clear)()
            await self.cleared()
            return
        try:
            question = check_question(content.get("text"))
            # Off the database thread: a cache round trip must not queue behind an answer's saves.
            await sync_to_async(check_user_rate, thread_sensitive=False)(
                user_id=self.scope["user"].pk, action="question"
            )
        except QuestionTooLongError as exc:
            await self.send_json(events.error(exc.code, exc.message))
            return
        except QuestionError as exc:  # on the socket, a question without usable text is a malformed frame
            await self.send_json(events.error("malformed_frame", exc.message))
            return
        except RateLimitedError as exc:
            await self.send_json(events.error(exc.code, exc.message))
            return
        await self._cancel_answer()
        self.answer_task = asyncio.create_task(self._answer(self.new_session(question)))

    async def authorise(self, action: str) -> None:
        """Check again, for *action* ("question" or "clear"), that the user may act here: a role
        may have changed since `connect`. Raise Http404 (no longer a member) or ForbiddenError."""

    async def _authorised(self, action: str) -> bool:
        if action not in ("question", "clear"):
            return True
        try:
            await self.authorise(action)
        except Http404:
            await self.send_json(events.error("not_found", "You are no longer a member of this project."))
            await self.close(code=CLOSE_NOT_FOUND)
            return False
        except ForbiddenError as exc:
            await self.send_json(events.error(exc.code, exc.message))
            return False
        return True

    async def cleared(self) -> None:
        """After `clear`: the (empty) history."""
        await self.send_history()

    async def emit(self, event: dict[str, Any], session: StreamedAnswer) -> None:
        """Send one event of *session*'s answer (to this socket; the project chat sends to every member)."""
        await self.send_json(event)

    async def _send_older(self, before: Any) -> None:
        if not isinstance(before, int) or isinstance(before, bool):
            await self.send_json(events.error("malformed_frame", 'Send {"type": "older", "before": message id}.'))
            return
        messages, has_more = await database_sync_to_async(self.history_page)(before)
        await self.send_json(events.history_older(messages, has_more=has_more))

    async def _cancel_answer(self) -> None:
        task, self.answer_task = self.answer_task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _answer(self, session: StreamedAnswer) -> None:
        try:
            # aclosing: a cancel while a send is pending still closes the session's generators, and
            # with them the chat model's HTTP stream.
            async with aclosing(answer_events(session, where=self.scope["path"])) as stream:
                async for event in stream:
                    await self.emit(event, session)
        except asyncio.CancelledError:
            message = await session.save(state=ChatMessage.State.STOPPED)
            with contextlib.suppress(Exception):
                await self.emit(events.answer_done(message), session)
            raise


def project_group(project_id: int) -> str:
    """The channel layer group of everyone with project *project_id*'s chat open."""
    return f"project-chat-{project_id}"


class ProjectChatConsumer(ChatConsumer):
    """The project's one chat thread, shared by its members, plus live `paper.status` events of the
    project's papers.

    Every member's socket joins the project's group: a question (stamped with the asker), its
    answer's events and a clear reach every member with the project open. Any member may ask
    (reader); clearing needs a writer; the role is checked again for each action.
    """

    project: Project
    group: str = ""
    paper_ids: list[int]
    poll_task: asyncio.Task[None] | None = None

    async def access(self) -> None:
        self.project = await database_sync_to_async(get_project_for_user)(
            self.scope["user"], int(self.scope["url_route"]["kwargs"]["project_id"])
        )
        self.group = project_group(self.project.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        self.paper_ids = await self._paper_ids()
        for paper_id in self.paper_ids:
            await self.channel_layer.group_add(paper_group(paper_id), self.channel_name)

    async def connected(self) -> None:
        if not settings.REDIS_URL:
            self.poll_task = asyncio.create_task(self._poll_statuses())

    def history_page(self, before: int | None) -> tuple[list[ChatMessage], bool]:
        return chat_history_page(self.project, before=before, limit=settings.CHAT_HISTORY_PAGE_SIZE)

    def clear(self) -> None:
        clear_chat(project=self.project)

    def new_session(self, question: str) -> StreamedAnswer:
        return AnswerSession(project=self.project, user=self.scope["user"], question=question)

    async def authorise(self, action: str) -> None:
        need = Role.WRITER if action == "clear" else Role.READER
        self.project = await database_sync_to_async(get_project_for_user)(
            self.scope["user"], self.project.pk, need=need
        )

    async def cleared(self) -> None:
        await self.channel_layer.group_send(self.group, {"type": "chat.cleared"})

    async def emit(self, event: dict[str, Any], session: StreamedAnswer) -> None:
        # The question goes out before the answer's first event, which is answer.done when the
        # asker cancelled at once.
        if isinstance(session, AnswerSession) and session.question_message and not session.question_announced:
            session.question_announced = True
            await self._fan_out(events.question(session.question_message))
        await self._fan_out(event)

    async def _fan_out(self, event: dict[str, Any]) -> None:
        # The asker's own socket gets every event directly, in order: a channel layer drops messages
        # for a channel that is over its capacity, and a fast answer may burst past it. The other
        # members get them through the project's group.
        await self.send_json(event)
        await self.channel_layer.group_send(
            self.group, {"type": "chat.event", "event": event, "origin": self.channel_name}
        )

    async def chat_event(self, message: dict[str, Any]) -> None:
        """Forward an event of another member's question or answer to this member's browser (this
        socket's own events went out directly, see `_fan_out`)."""
        if message.get("origin") != self.channel_name:
            await self.send_json(message["event"])

    async def chat_cleared(self, message: dict[str, Any]) -> None:
        """A member cleared the chat: stop showing it (an answer streaming here was cancelled)."""
        await self.send_json({"type": "chat.cleared"})
        await self.send_history()

    async def disconnect(self, code: int) -> None:
        await super().disconnect(code)
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)
        if self.poll_task is not None:
            self.poll_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.poll_task
        for paper_id in getattr(self, "paper_ids", []):
            await self.channel_layer.group_discard(paper_group(paper_id), self.channel_name)

    async def paper_status(self, event: dict[str, Any]) -> None:
        """Forward a `paper.status` group message to the browser."""
        fields = ("type", "paper_id", "status", "error", "chunk_count", "progress")
        await self.send_json({k: event.get(k) for k in fields})

    @database_sync_to_async
    def _paper_ids(self) -> list[int]:
        return list(self.project.papers.values_list("pk", flat=True))

    @database_sync_to_async
    def _statuses(self) -> dict[int, tuple[str, str, int]]:
        return {
            paper.pk: (paper.index_status, paper.index_error, paper.chunk_count)
            for paper in Paper.objects.filter(projects=self.project)
        }

    async def _poll_statuses(self) -> None:
        known = await self._statuses()
        while True:
            await asyncio.sleep(STATUS_POLL_SECONDS)
            current = await self._statuses()
            for paper_id, state in current.items():
                if known.get(paper_id) != state:
                    paper = Paper(pk=paper_id, index_status=state[0], index_error=state[1], chunk_count=state[2])
                    await self.send_json(dict(status_event(paper)))
            known = current


class PaperChatConsumer(ChatConsumer):
    """The user's private chat on one paper of their library."""

    paper: Paper

    async def access(self) -> None:
        self.paper = await database_sync_to_async(get_paper_for_user)(
            self.scope["user"], int(self.scope["url_route"]["kwargs"]["paper_id"])
        )

    def history_page(self, before: int | None) -> tuple[list[dict[str, Any]], bool]:
        messages = open_paper_chat(user=self.scope["user"], paper=self.paper).messages
        if before is not None:
            messages = [m for m in messages if m["id"] < before]
        size = settings.CHAT_HISTORY_PAGE_SIZE
        return messages[-size:], len(messages) > size

    def clear(self) -> None:
        clear_paper_chat(user=self.scope["user"], paper=self.paper)

    def new_session(self, question: str) -> StreamedAnswer:
        return PaperAnswerSession(user=self.scope["user"], paper=self.paper, question=question)
