"""Maps errors of the one error base that escape an HTML view to a page (the API maps them in
`annotagent.exceptions`)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotagent.errors import ForbiddenError


class ForbiddenErrorMiddleware:
    """A `ForbiddenError` (a member whose role does not allow the action) becomes a 403 page with
    its message, instead of a server error."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, ForbiddenError):
            return render(request, "403.html", {"message": exception.message}, status=exception.status)
        return None
