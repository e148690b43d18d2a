"""The MCP tools over streamable HTTP, mounted at /mcp/ in the ASGI app (`annotagent.asgi`).

Every request must carry an API token as `Authorization: Bearer <key>` (or `Token <key>`, as on the
REST API); it is checked on each request, and the tools act as its user. Without a valid token the
answer is 401 `{"error": {"code": "not_authenticated", ...}}`, and a Host outside ALLOWED_HOSTS
gets 400, before anything reaches the SDK. The SDK's app runs stateless (a fresh transport per
request, JSON responses): nothing about a client is kept between requests, so any web process can
answer any request.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import suppress
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_server.server import TokenError, build_server, user_for_token

PATH = "/mcp/"


class McpHttpApp:
    """ASGI app for `PATH` (and `PATH` without its slash): authenticates, then hands over to the SDK.

    The SDK's session manager needs a running task group, which it normally gets from the ASGI
    lifespan; Daphne sends no lifespan events, so it is started on the first request instead and
    lives as long as the process (`close()` stops it, for tests)."""

    def __init__(self) -> None:
        self._server = build_server()
        # Host checks are done here against ALLOWED_HOSTS (the SDK only knows a fixed list).
        self._app: ASGIApp = self._server.streamable_http_app(
            streamable_http_path=PATH.rstrip("/"),
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self._runner: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def _start(self) -> None:
        async with self._lock:
            if self._runner is None:
                started = asyncio.Event()

                async def run() -> None:
                    # The manager's task group must be entered and left by one task: this one.
                    async with self._server.session_manager.run():
                        started.set()
                        await asyncio.Event().wait()  # until close() cancels it

                self._runner = asyncio.create_task(run())
                await started.wait()

    async def close(self) -> None:
        if self._runner is not None:
            self._runner.cancel()
            with suppress(asyncio.CancelledError):
                await self._runner
            self._runner = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        host, _ = split_domain_port(headers.get("host", ""))
        if not validate_host(host, settings.ALLOWED_HOSTS):
            await _reply(send, 400, "bad_request", "Host not allowed.")
            return
        scheme, _, key = headers.get("authorization", "").partition(" ")
        try:
            if scheme.lower() not in ("bearer", "token"):
                raise TokenError("Give the API token as 'Authorization: Bearer <key>'.")
            user = await sync_to_async(user_for_token)(key)
        except TokenError as error:
            await _reply(send, 401, "not_authenticated", str(error))
            return
        await self._start()
        path = scope["path"].rstrip("/") or "/"
        await self._app({**scope, "path": path, "raw_path": path.encode(), "user": user}, receive, send)


async def _reply(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="annotagent"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def with_mcp(app: Any, mcp: McpHttpApp | None = None) -> ASGIApp:
    """*app* (Django's HTTP app: typed `Any`, as its ASGI types differ from Starlette's), but requests
    for `PATH` go to *mcp* (a new `McpHttpApp` by default)."""
    mcp_app = mcp or McpHttpApp()

    async def route(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].rstrip("/") == PATH.rstrip("/"):
            await mcp_app(scope, receive, send)
        else:
            await app(scope, receive, send)

    return route
