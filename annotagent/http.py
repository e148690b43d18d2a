"""Request types for views behind authentication, so `request.user` is typed as a signed-in user.

`login_required` (HTML views) and `IsAuthenticated` (the API's default permission) guarantee it.
"""

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
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
