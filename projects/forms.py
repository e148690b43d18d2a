from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib.auth.models import User

from papers.models import Paper
from projects.models import Project, Role


class ProjectForm(forms.Form):
    """Create, rename or describe a project."""

    name = forms.CharField(max_length=200)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))


class AddToProjectForm(forms.Form):
    """ "Add to project" on a library card: an existing project, or the name of a new one."""

    project = forms.ModelChoiceField(queryset=Project.objects.none(), required=False, empty_label="New project…")
    new_project_name = forms.CharField(max_length=200, required=False, label="New project name")

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Only projects the user may add papers to (writer or admin).
        writable = Project.objects.for_user(user).filter(role__in=[Role.WRITER, Role.ADMIN]).default_first()  # type: ignore[misc]
        cast(forms.ModelChoiceField, self.fields["project"]).queryset = writable

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if not cleaned.get("project") and not (cleaned.get("new_project_name") or "").strip():
            raise forms.ValidationError("Choose a project or name a new one.")
        return cleaned


class AddPapersForm(forms.Form):
    """The multi-select picker on a project page: papers from the user's library."""

    papers = forms.ModelMultipleChoiceField(queryset=Paper.objects.none(), widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args: Any, user: User, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ModelMultipleChoiceField, self.fields["papers"]).queryset = Paper.objects.in_library_of(
            user
        ).exclude(project_links__project=project)


class MemberForm(forms.Form):
    """Add a member: a username or e-mail address, and a role."""

    user = forms.CharField(max_length=254, label="Username or e-mail")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.READER)
