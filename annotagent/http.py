"""Request types for views behind authentication, so `request.user` is typed as a signed-in user.

`login_required` (HTML views) and `IsAuthenticated` (the API's default permission) guarantee it.
"""

from django.contrib.auth.models import User
from django.http import HttpRequest
from rest_framework.request import Request


class AuthenticatedHttpRequest(HttpRequest):
    user: User


class AuthenticatedRequest(Request):
    user: User
