"""WebSocket helpers for consumer tests: a communicator signed in as a persona, and event readers."""

from __future__ import annotations

from typing import Any

from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from chat.routing import websocket_urlpatterns

TIMEOUT = 20


def communicator_for(user: Any, path: str) -> WebsocketCommunicator:
    """A communicator on *path* whose connection is made by *user* (what AuthMiddlewareStack
    would put in the scope after sign-in)."""
    socket = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    socket.scope["user"] = user
    return socket


async def receive_until(socket: WebsocketCommunicator, event_type: str, timeout: float = TIMEOUT) -> list[dict]:
    """Every event up to and including the first of *event_type*; `paper.status` events skipped."""
    received = []
    while True:
        event = await socket.receive_json_from(timeout=timeout)
        if event["type"] == "paper.status":
            continue
        received.append(event)
        if event["type"] == event_type:
            return received


async def ask(socket: WebsocketCommunicator, question: str) -> list[dict]:
    """Send *question* and return its events up to `answer.done`."""
    await socket.send_json_to({"type": "question", "text": question})
    return await receive_until(socket, "answer.done")


def streamed_text(received: list[dict]) -> str:
    return "".join(event["text"] for event in received if event["type"] == "answer.delta")


def of_type(received: list[dict], event_type: str) -> list[dict]:
    return [event for event in received if event["type"] == event_type]
