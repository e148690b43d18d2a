"""WebSocket consumer of project chat at `/ws/projects/<id>/chat/` (event vocabulary: `chat.events`).

Answer generation runs in an `asyncio` task, because Channels handles one message at a time: a
stream inside `receive` would block `cancel` and `disconnect`. A new question, a `cancel` frame or
a disconnect cancels the task; the partial answer is saved as stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.http import Http404

from annotagent.errors import AnnotagentError
from chat import events
from chat.models import ChatMessage
from chat.services import MAX_QUESTION_CHARS, AnswerSession, chat_history
from indexing.notifications import paper_group, status_event
from papers.models import Paper
from projects.models import Project
from projects.services import get_project_for_user

logger = logging.getLogger(__name__)

# Without Redis the worker's status events cannot reach this process; poll the database instead.
STATUS_POLL_SECONDS = 2.0
_MALFORMED = object()


class ProjectChatConsumer(AsyncJsonWebsocketConsumer):
    project: Project
    answer_task: asyncio.Task[None] | None = None
    poll_task: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        try:
            self.project = await database_sync_to_async(get_project_for_user)(
                user, int(self.scope["url_route"]["kwargs"]["project_id"])
            )
        except Http404:
            await self.close(code=4404)
            return
        self.paper_ids = await self._paper_ids()
        for paper_id in self.paper_ids:
            await self.channel_layer.group_add(paper_group(paper_id), self.channel_name)
        await self.accept()
        await self.send_json(events.history(await database_sync_to_async(chat_history)(self.project)))
        if not settings.REDIS_URL:
            self.poll_task = asyncio.create_task(self._poll_statuses())

    async def disconnect(self, code: int) -> None:
        for task in (self.answer_task, self.poll_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        for paper_id in getattr(self, "paper_ids", []):
            await self.channel_layer.group_discard(paper_group(paper_id), self.channel_name)

    @classmethod
    async def decode_json(cls, text_data: str) -> Any:
        try:
            return json.loads(text_data)
        except ValueError:
            return _MALFORMED

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict) or content.get("type") not in ("question", "cancel"):
            await self.send_json(
                events.error("malformed_frame", 'Send {"type": "question", "text": ...} or {"type": "cancel"}.')
            )
            return
        if content["type"] == "cancel":
            await self._cancel_answer()
            return
        text = content.get("text")
        if not isinstance(text, str) or not text.strip():
            await self.send_json(events.error("malformed_frame", "A question needs a non-empty text."))
            return
        if len(text) > MAX_QUESTION_CHARS:
            await self.send_json(
                events.error("question_too_long", f"Questions may be at most {MAX_QUESTION_CHARS} characters.")
            )
            return
        await self._cancel_answer()
        self.answer_task = asyncio.create_task(self._answer(text.strip()))

    async def _cancel_answer(self) -> None:
        task, self.answer_task = self.answer_task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _answer(self, question: str) -> None:
        session = AnswerSession(project=self.project, user=self.scope["user"], question=question)
        try:
            async for event in session.events():
                await self.send_json(event)
        except asyncio.CancelledError:
            message = await session.save(state=ChatMessage.State.STOPPED)
            with contextlib.suppress(Exception):
                await self.send_json(events.answer_done(message))
            raise
        except AnnotagentError as exc:
            await self.send_json(events.error(exc.code, exc.message))
            if session.saved is not None:
                await self.send_json(events.answer_done(session.saved))
        except Exception:
            logger.exception("Answering in project %s failed", self.project.pk)
            await self.send_json(events.error("internal_error", "Something went wrong while answering."))

    async def paper_status(self, event: dict[str, Any]) -> None:
        """Forward a `paper.status` group message to the browser."""
        await self.send_json({k: event[k] for k in ("type", "paper_id", "status", "error", "chunk_count")})

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
