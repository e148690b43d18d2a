"""Maps Annotagent errors to JSON API responses with stable codes."""

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler

from annotagent.errors import AnnotagentError


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF exception handler: `{"error": {"code": str, "message": str}}` for every error.

    `AnnotagentError` answers with its own status and code; DRF's errors keep their status and use
    their `default_code` (`not_found`, `not_authenticated`, `invalid`, ...).
    """
    if isinstance(exc, AnnotagentError):
        return Response({"error": {"code": exc.code, "message": exc.message}}, status=exc.status)
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
