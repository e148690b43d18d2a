"""The WebSocket event vocabulary of project chat (server -> client JSON objects).

Client -> server: `{"type": "question", "text": str}`, `{"type": "cancel"}`.
Server -> client:
- `history`: `{"messages": [Message]}`, on connect (a reconnect re-renders from it).
- `answer.start`: `{"extractive": bool, "indexing": [title]}`; *indexing* names papers not yet searchable.
- `answer.delta`: `{"text": str}`; markers already normalised to `[N]`, unknown numbers removed.
- `answer.citation`: `{"n", "paper_id", "title", "page", "url", "text"}`, before the first delta citing n.
- `answer.done`: `{"message": Message}`, the saved turn (state complete, stopped or failed).
- `error`: `{"code": str, "message": str}`; the connection stays open.
- `paper.status`: `{"paper_id", "status", "error", "chunk_count"}`.
Message: `{"id", "role", "text", "citations": {"N": {"paper_id","title","page","text"}}, "state",
"extractive", "created_at"}`.
"""

from __future__ import annotations

from typing import Any

from chat.models import ChatMessage
from indexing.retrieval import Reference


def message_json(message: ChatMessage) -> dict[str, Any]:
    return {
        "id": message.pk,
        "role": message.role,
        "text": message.text,
        "citations": message.citations,
        "state": message.state,
        "extractive": message.extractive,
        "created_at": message.created_at.isoformat(),
    }


def history(messages: list[ChatMessage]) -> dict[str, Any]:
    return {"type": "history", "messages": [message_json(m) for m in messages]}


def answer_start(*, extractive: bool, indexing: list[str]) -> dict[str, Any]:
    return {"type": "answer.start", "extractive": extractive, "indexing": indexing}


def answer_delta(text: str) -> dict[str, Any]:
    return {"type": "answer.delta", "text": text}


def answer_citation(reference: Reference) -> dict[str, Any]:
    return {"type": "answer.citation", "n": reference.n, "url": reference.url, **reference.as_citation()}


def answer_done(message: ChatMessage) -> dict[str, Any]:
    return {"type": "answer.done", "message": message_json(message)}


def error(code: str, message: str) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": message}
