"""The WebSocket origin check: a handshake is accepted only from the site's own origin.

Channels' `AllowedHostsOriginValidator` compares the Origin's host name with ALLOWED_HOSTS and ignores
the port, so any other service on the same host (another port) could open a signed-in user's chat.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host


def same_origin(*, origin: str, host: str) -> bool:
    """True when *origin* (the Origin header, `scheme://host[:port]`) names the site that *host*
    (the Host header, `host[:port]`) addresses: the same host name and port as written (browsers
    omit a default port in both, so a proxy that keeps the Host header keeps them comparable), and
    a host allowed by ALLOWED_HOSTS; or an origin listed in CSRF_TRUSTED_ORIGINS."""
    origin = origin.strip().lower()
    if origin in {trusted.lower() for trusted in settings.CSRF_TRUSTED_ORIGINS}:
        return True
    parts = urlsplit(origin)
    if parts.scheme not in {"http", "https"} or not parts.netloc or parts.path not in {"", "/"}:
        return False
    domain, _ = split_domain_port(parts.netloc)
    return parts.netloc == host.strip().lower() and validate_host(domain, settings.ALLOWED_HOSTS)


class SameOriginValidator:
    """ASGI middleware: WebSocket handshakes whose Origin is not the site itself (or that send no
    Origin) are refused; HTTP passes through."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket":
            headers = {name.lower(): value.decode("latin1") for name, value in scope.get("headers", [])}
            if not same_origin(origin=headers.get(b"origin", ""), host=headers.get(b"host", "")):
                return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
