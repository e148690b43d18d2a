"""The WebSocket origin check of the whole ASGI application: the site's own origin (host and port)
may open a chat; another port on the same host, another host, or no Origin may not."""

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from annotagent.asgi import application
from projects.services import create_project

pytestmark = pytest.mark.django_db(transaction=True)

HOST = b"127.0.0.1:8000"


@sync_to_async
def signed_in_project(user):
    client = Client()
    client.force_login(user)
    project = create_project(owner=user, name="Origins")
    return client.cookies[settings.SESSION_COOKIE_NAME].value, project


async def handshake(alice, origin: bytes | None) -> bool:
    session, project = await signed_in_project(alice)
    headers = [(b"host", HOST), (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode())]
    if origin is not None:
        headers.append((b"origin", origin))
    socket = WebsocketCommunicator(application, f"/ws/projects/{project.pk}/chat/", headers=headers)
    connected, _ = await socket.connect()
    if connected:
        await socket.disconnect()
    return connected


async def test_the_sites_own_origin_opens_the_chat(alice):
    assert await handshake(alice, b"http://127.0.0.1:8000")


@pytest.mark.parametrize(
    "origin",
    [b"http://127.0.0.1:9999", b"http://127.0.0.1", b"https://evil.example:8000", b"null", None],
)
async def test_another_origin_is_refused(alice, origin):
    assert not await handshake(alice, origin)


async def test_an_origin_listed_as_trusted_opens_the_chat(alice, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://annotagent.example"]
    assert await handshake(alice, b"https://annotagent.example")
