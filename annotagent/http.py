"""Request types for views behind authentication, so `request.user` is typed as a signed-in user.

`login_required` (HTML views), `login_or_token_required` (files the API links to) and
`IsAuthenticated` (the API's default permission) guarantee it.
"""

from collections.abc import Callable
from functools import wraps
from http import HTTPStatus
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.views.defaults import page_not_found
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request


class AuthenticatedHttpRequest(HttpRequest):
    user: User


class AuthenticatedRequest(Request):
    user: User


def attachment_response(content: str, *, content_type: str, filename: str) -> HttpResponse:
    """*content* as a download named *filename* (`Content-Disposition: attachment`)."""
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def login_or_token_required(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """`login_required` that also accepts the API's token (`Authorization: Token <key>`), for a file
    that a page shows and an API response links to alike (a figure's `image_url`). A token that is
    refused gets the API's 401 error (`authentication_failed`); a request with neither a session nor
    a token is sent to sign in, as by `login_required`."""
    protected = login_required(view)

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            try:
                found = TokenAuthentication().authenticate(Request(request))
            except AuthenticationFailed as error:
                body = {"error": {"code": error.default_code, "message": str(error.detail)}}
                refused = JsonResponse(body, status=HTTPStatus.UNAUTHORIZED)
                refused["WWW-Authenticate"] = "Token"
                return refused
            if found is not None:
                request.user = found[0]
        return protected(request, *args, **kwargs)

    return wrapped


def fill_reason_phrases() -> None:
    """Give Daphne's HTTP server (Twisted) the reason phrase of every status Python knows and it
    does not: Twisted has none for 429, so a `slow_down` refusal went out as "429 Unknown Status"
    instead of "429 Too Many Requests" (RFC 6585, section 4). Does nothing without Twisted."""
    try:
        from twisted.web import http as twisted_http
    except ImportError:  # served by another ASGI server
        return
    for status in HTTPStatus:
        twisted_http.RESPONSES.setdefault(status.value, status.phrase.encode("ascii"))


def not_found(request: HttpRequest, exception: Exception) -> HttpResponseBase:
    """Django's 404 handler: for a path under /api/ that no route matches ("/api/projects/abc/"),
    the API's JSON error (`{"error": {"code": "not_found", ...}}`) rather than the HTML page."""
    if request.path.startswith("/api/"):
        body = {"error": {"code": "not_found", "message": "No such API endpoint or object."}}
        return JsonResponse(body, status=HTTPStatus.NOT_FOUND)
    return page_not_found(request, exception)
