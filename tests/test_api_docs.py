"""The API docs page: Swagger UI served from the package (drf-spectacular-sidecar), every asset
same-origin and allowed by the site's Content Security Policy."""

import re
from http import HTTPStatus
from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.django_db

ASSET = re.compile(r'<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"')


def test_the_docs_page_loads_only_same_origin_assets_that_are_served(client, settings):
    # Tests run without collectstatic: WhiteNoise reads the app's static folders directly instead.
    settings.WHITENOISE_USE_FINDERS = True
    page = client.get("/api/docs/")
    assert page.status_code == HTTPStatus.OK
    html = page.content.decode()
    assets = ASSET.findall(html)
    assert len(assets) >= 4  # stylesheet, two Swagger UI bundles, the start-up script
    for url in assets:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc, f"{url} is not same-origin"
        assert client.get(url).status_code == HTTPStatus.OK, url


def test_the_docs_page_has_no_inline_script_or_style_the_csp_would_refuse(client):
    page = client.get("/api/docs/")
    html = page.content.decode()
    assert "'unsafe-inline'" not in page["Content-Security-Policy"]
    assert "<style" not in html
    assert re.findall(r"<script(?![^>]*\bsrc=)", html) == []


def test_the_docs_start_up_script_points_at_the_schema(client):
    script = client.get("/api/docs/?script=")
    assert script.status_code == HTTPStatus.OK
    assert script["Content-Type"].startswith("application/javascript")
    assert "/api/schema/" in script.content.decode()
