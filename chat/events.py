"""The WebSocket event vocabulary of project chat (`/ws/projects/<id>/chat/`) and per-paper chat
(`/ws/papers/<id>/chat/`); both speak it.

Client -> server:
- `{"type": "question", "text": str}`: ask (cancels an answer still streaming, which is saved as stopped).
- `{"type": "cancel"}`: stop the answer being streamed; it is saved as stopped and `answer.done` follows.
- `{"type": "clear"}`: stop any answer and delete the thread; a `history` event with no messages follows.
- `{"type": "older", "before": int}`: the page of messages just older than message id *before*
  (a `history.older` event).
Anything else gets an `error` event (code `malformed_frame`); the connection stays open. Frames larger
than `CHAT_MAX_FRAME_CHARS` get `frame_too_large`; frames beyond the socket's budget
(`CHAT_SOCKET_FRAME_BURST`, refilled at `CHAT_SOCKET_FRAMES_PER_SECOND`) are dropped after one
`slow_down` error, and so are questions beyond `USER_QUESTIONS_PER_MINUTE`.

Server -> client:
- `history`: `{"messages": [Message], "has_more": bool}`, the newest `CHAT_HISTORY_PAGE_SIZE`
  messages, on connect (a reconnect re-renders from it) and after `clear`; *has_more* says whether
  older messages exist.
- `history.older`: `{"messages": [Message], "has_more": bool}`, the page asked for by `older`, to
  put before the messages shown.
- `answer.start`: `{"extractive": bool, "indexing": [title], "failed": [title]}`; papers not searched
  because they are still queued or indexing, or because their indexing failed.
- `answer.delta`: `{"text": str}`; markers already normalised to `[N]`, unknown numbers removed. Text is
  plain text (paper and model text verbatim, never HTML): the client must insert it as text.
- `answer.citation`: `{"n", "paper_id", "title", "page", "url", "text", "printed", "ocr"}`, before the
  first delta citing n; `page` is the PDF's page, `printed` the number printed on it when it differs
  ("" otherwise), `ocr` whether its text was recognised by OCR (quotes labelled "OCR text"),
  and, when the cited text is a caption or mentions a figure or table of that paper ("Figure 3"),
  `figure`: `{"url", "label", "page"}`, the hover card's thumbnail (`url` a same-origin PNG);
  project chat adds the hover card's `label` (the title, with first author and year when another
  project paper has the same title), `author` (first author's surname), `year`, `quote` (the quoted
  sentence, extractive answers), `cite` ("(Burrows 2006, p. 4)") and `bibtex`.
  In per-paper chat `n` is a page number: `[N]` cites page N of the paper.
- `answer.done`: `{"message": Message}`, the saved turn (state complete, stopped or failed).
- `error`: `{"code": str, "message": str}`; the connection stays open.
- `paper.status`: `{"paper_id", "status", "error", "chunk_count", "progress"}` (project chat only);
  *progress* is the percentage of a running build, else null.
- `chat.question`: `{"message": Message}` (project chat only), a member's question as it is asked, sent
  to every member with the project open; its `asker` names who asked. The answer's events follow, to
  every member alike.
- `chat.cleared`: (project chat only) a member cleared the chat; a `history` event follows.
Message: `{"id", "role", "text", "asker", "citations": {"N": {"paper_id","title","page","text", ...}}, "state",
"extractive", "status", "sentences", "created_at"}`; `status` is "answered", "partly_answered",
"not_stated" or "no_papers" for a project chat answer ("" for questions and per-paper chat);
`asker` is the name of the member who asked (questions; "" otherwise);
`sentences` lists the answer's sentences `{"text", "citations", "supported", "not_stated"}`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chat.models import ChatMessage
from indexing.retrieval import Reference
from projects.models import user_label


def message_json(message: ChatMessage | Mapping[str, Any]) -> dict[str, Any]:
    """A Message: from a project chat row, or a per-paper chat message (a `PaperChat.messages` item)."""
    if isinstance(message, Mapping):
        # Per-paper chat has no askers to name and no sentence checks: those fields are empty there,
        # filled here so that every transcript, saved before or after they existed, has them.
        return {"asker": "", "status": "", "sentences": [], **message}
    return {
        "id": message.pk,
        "role": message.role,
        "text": message.text,
        "asker": asker_name(message),
        "citations": message.citations,
        "state": message.state,
        "extractive": message.extractive,
        "status": message.status,
        "sentences": message.sentences,
        "created_at": message.created_at.isoformat(),
    }


def asker_name(message: ChatMessage) -> str:
    """Who asked *message* (a question of a project chat): the member's name; "" for answers.
    Fetch questions with `select_related("author")` where no query may run (async code)."""
    if message.role != ChatMessage.Role.USER:
        return ""
    return user_label(message.author)


def history(messages: Sequence[ChatMessage | Mapping[str, Any]], *, has_more: bool = False) -> dict[str, Any]:
    return {"type": "history", "messages": [message_json(m) for m in messages], "has_more": has_more}


def history_older(messages: Sequence[ChatMessage | Mapping[str, Any]], *, has_more: bool) -> dict[str, Any]:
    return {"type": "history.older", "messages": [message_json(m) for m in messages], "has_more": has_more}


def answer_start(*, extractive: bool, indexing: list[str], failed: Sequence[str] = ()) -> dict[str, Any]:
    return {"type": "answer.start", "extractive": extractive, "indexing": indexing, "failed": list(failed)}


def answer_delta(text: str) -> dict[str, Any]:
    return {"type": "answer.delta", "text": text}


def answer_citation(reference: Reference, citation: Mapping[str, object] | None = None) -> dict[str, Any]:
    """*citation* is the reference's citation as the session describes it (default: `as_citation`)."""
    return {"type": "answer.citation", "n": reference.n, "url": reference.url, **(citation or reference.as_citation())}


def answer_done(message: ChatMessage | Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "answer.done", "message": message_json(message)}


def error(code: str, message: str) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": message}


def question(message: ChatMessage) -> dict[str, Any]:
    return {"type": "chat.question", "message": message_json(message)}
