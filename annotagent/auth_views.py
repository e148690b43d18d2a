"""Sign-up. Sign-in and sign-out are Django's own views (see `annotagent.auth_urls`)."""

from __future__ import annotations

from django import forms
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods


class SignupForm(UserCreationForm[User]):
    """Django's sign-up form with an optional e-mail address, by which project owners can add the
    account as a member (`projects.services.find_user`); an address another account has is refused."""

    email = forms.EmailField(required=False, help_text="Optional: others can add you to a project by it.")

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def clean_email(self) -> str:
        email = self.cleaned_data["email"].strip()
        if email and User.objects.filter(email__iexact=email).exists():
            raise forms.ValidationError("Another account has this e-mail address.")
        return email


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("projects:list")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()  # the projects app gives the account its default project (post_save)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("projects:list")
    return render(request, "registration/signup.html", {"form": form})
