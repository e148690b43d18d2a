"""Maps Annotagent errors to JSON API responses with stable codes."""

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler

from annotagent.errors import AnnotagentError


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF exception handler: `{"error": {"code": str, "message": str}}` for every error.

    `AnnotagentError` answers with its own status and code; DRF's errors keep their status and use
    their `default_code` (`not_found`, `not_authenticated`, `invalid`, ...).
    """
    if isinstance(exc, AnnotagentError):
        ours = Response({"error": {"code": exc.code, "message": exc.message}}, status=exc.status)
        retry_after = getattr(exc, "retry_after", None)
        if retry_after:
            ours["Retry-After"] = str(retry_after)
        return ours
    # DRF converts Django's own 404 and 403 into its exceptions internally; do it here too so they
    # carry DRF's codes (`not_found`, `permission_denied`) instead of the generic "error".
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = exception_handler(exc, context)
    if response is None:
        return None
    code = getattr(exc, "default_code", "error")
    detail = response.data
    message = detail.get("detail", "Invalid request.") if isinstance(detail, dict) else "Invalid request."
    body: dict[str, Any] = {"code": str(code), "message": str(message)}
    if isinstance(detail, dict) and "detail" not in detail:
        body["fields"] = detail
    response.data = {"error": body}
    return response
