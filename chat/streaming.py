"""One answer as a stream of `chat.events` for a client: what the WebSocket consumers and the API's
server-sent events share. Errors become `error` events (the connection stays usable), followed by
`answer.done` with the partial answer when one was saved."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from typing import Any

from annotagent.errors import AnnotagentError
from chat import events
from chat.services import StreamedAnswer

logger = logging.getLogger(__name__)


async def answer_events(session: StreamedAnswer, *, where: str) -> AsyncGenerator[dict[str, Any], None]:
    """*session*'s events, ending with `answer.done`, or with `error` (and `answer.done` of the
    partial answer when it was saved). Unexpected errors are logged with *where* (the socket's or
    request's path) and sent as `internal_error`. Cancellation and closing propagate: the caller
    saves the partial answer as stopped."""
    try:
        async with aclosing(session.events()) as stream:
            async for event in stream:
                yield event
    except AnnotagentError as exc:
        yield events.error(exc.code, exc.message)
        if session.saved is not None:
            yield events.answer_done(session.saved)
    except Exception:
        logger.exception("Answering in %s failed", where)
        yield events.error("internal_error", "Something went wrong while answering.")
        if session.saved is not None:
            yield events.answer_done(session.saved)


def server_sent_event(event: Mapping[str, Any]) -> str:
    """*event* as one server-sent event: `event:` is its type, `data:` the whole event as JSON (one
    line: JSON text holds no raw newline)."""
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
