"""Sign-up. Sign-in and sign-out are Django's own views (see `annotagent.auth_urls`)."""

from __future__ import annotations

from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("projects:list")
    form: UserCreationForm[User] = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()  # the projects app gives the account its default project (post_save)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("projects:list")
    return render(request, "registration/signup.html", {"form": form})
