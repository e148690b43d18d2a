"""ASGI entry point: HTTP through Django (but /mcp/: the MCP tools over streamable HTTP), WebSockets
through Channels (served by Daphne)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotagent.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs the app registry)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from annotagent.http import fill_reason_phrases  # noqa: E402
from annotagent.origins import SameOriginValidator  # noqa: E402
from chat.routing import websocket_urlpatterns  # noqa: E402
from indexing.embedding_server import start_embedding_server  # noqa: E402
from mcp_server.http import with_mcp  # noqa: E402

# `manage.py ask` borrows this process's loaded model instead of loading its own.
start_embedding_server()
fill_reason_phrases()

application = ProtocolTypeRouter(
    {
        "http": with_mcp(django_asgi_app),
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
