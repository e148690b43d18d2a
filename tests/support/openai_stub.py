"""A local OpenAI-compatible HTTP server: the only fake in the test suite (it stands in for a paid
network service). The real `openai` SDK talks to it over HTTP.

- `POST /v1/chat/completions`: the reply comes from `stub.script` (a list, one entry used per
  request, in order) while it lasts, then from `stub.reply` — a string, or a callable taking the
  request's messages and returning a string. A non-streamed reply may also be a ToolReply dict
  `{"content": str | None, "tool_calls": [{"name": str, "arguments": str | dict}]}`: the
  completion then carries those tool calls (ids `call_1`, `call_2`, ...); streamed, they come in
  one chunk after the content's pieces. Streamed requests get server-sent events, the
  reply cut into `stub.pieces` (a list of strings, when set) or into words, `stub.delay` seconds
  apart. Every request body is kept in `stub.requests`; a client that hangs up mid-stream is
  recorded in `stub.disconnects`.
- `POST /v1/embeddings`: deterministic unit vectors of `stub.dimension` derived from the text.
  Bodies are kept in `stub.embedding_requests`; `stub.on_embedding(body)`, when set, runs (in the
  server's thread) before the answer is sent.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

ScriptedReply = str | dict[str, Any]
Reply = ScriptedReply | Callable[[list[dict[str, Any]]], ScriptedReply]


class OpenAIStub:
    def __init__(self) -> None:
        self.reply: Reply = "The papers say so [1]."
        self.script: list[Reply] = []
        self.pieces: list[str] | None = None
        self.delay = 0.0
        self.dimension = 1536
        self.fail_status: int | None = None
        self.requests: list[dict[str, Any]] = []
        self.embedding_requests: list[dict[str, Any]] = []
        self.on_embedding: Callable[[dict[str, Any]], None] | None = None
        self.disconnects = 0
        self.stream_started = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def last_user_content(self) -> str:
        return self.requests[-1]["messages"][-1]["content"]

    def embed(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        vector = np.random.default_rng(seed).standard_normal(self.dimension)
        return (vector / np.linalg.norm(vector)).tolist()

    def _reply_text(self, messages: list[dict[str, Any]]) -> ScriptedReply:
        reply = self.script.pop(0) if self.script else self.reply
        return reply(messages) if callable(reply) else reply

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if stub.fail_status:
                    self._json(stub.fail_status, {"error": {"message": "stub failure", "type": "server_error"}})
                    return
                if self.path.endswith("/embeddings"):
                    stub.embedding_requests.append(body)
                    if stub.on_embedding is not None:
                        stub.on_embedding(body)
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    data = [
                        {"object": "embedding", "index": i, "embedding": stub.embed(t)} for i, t in enumerate(inputs)
                    ]
                    self._json(
                        200,
                        {
                            "object": "list",
                            "data": data,
                            "model": body["model"],
                            "usage": {"prompt_tokens": 1, "total_tokens": 1},
                        },
                    )
                    return
                stub.requests.append(body)
                reply = stub._reply_text(body.get("messages", []))
                if not body.get("stream"):
                    self._json(200, _completion(body["model"], reply))
                    return
                text = reply if isinstance(reply, str) else reply.get("content") or ""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                stub.stream_started.set()
                pieces = stub.pieces if stub.pieces is not None else re.findall(r"\S+\s*|\s+", text)
                try:
                    for piece in pieces:
                        self.wfile.write(_sse(_chunk(body["model"], piece)))
                        self.wfile.flush()
                        if stub.delay:
                            time.sleep(stub.delay)
                    if not isinstance(reply, str) and reply.get("tool_calls"):
                        calls = _completion(body["model"], reply)["choices"][0]["message"]["tool_calls"]
                        deltas = [{"index": i, **call} for i, call in enumerate(calls)]
                        self.wfile.write(_sse(_chunk(body["model"], None, tool_calls=deltas)))
                    self.wfile.write(_sse(_chunk(body["model"], None, finish="stop")))
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    stub.disconnects += 1

        return Handler


def _completion(model: str, reply: ScriptedReply) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": reply if isinstance(reply, str) else reply.get("content"),
    }
    finish = "stop"
    if isinstance(reply, dict) and reply.get("tool_calls"):
        finish = "tool_calls"
        message["tool_calls"] = [
            {
                "id": f"call_{index}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"]
                    if isinstance(call["arguments"], str)
                    else json.dumps(call["arguments"]),
                },
            }
            for index, call in enumerate(reply["tool_calls"], start=1)
        ]
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _chunk(
    model: str, piece: str | None, finish: str | None = None, tool_calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    delta: dict[str, Any] = {"content": piece} if piece is not None else {}
    if tool_calls:
        delta["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _sse(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()
