from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django import forms
from django.core.files.uploadedfile import UploadedFile

from papers.services import LIBRARY_SORTS


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """A file input taking several files; cleans to a list of them (Django's documented pattern,
    "Uploading multiple files"). Empty, it raises the field's `required` error."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        single_file_clean = super().clean
        if isinstance(data, (list, tuple)) and data:
            return [single_file_clean(file, initial) for file in data]
        return [single_file_clean(data, initial)]


class UploadForm(forms.Form):
    """One or more PDFs. Size and type are checked per file by `papers.services.read_upload`, not
    here, so one bad file never refuses the others."""

    file = MultipleFileField(
        label="PDFs",
        allow_empty_file=True,  # the service says "The file is empty.", which is clearer
        widget=MultipleFileInput(attrs={"accept": "application/pdf,.pdf"}),
    )


class MetadataForm(forms.Form):
    """A user's correction of a paper's metadata; `papers.services.correct_paper_metadata` checks
    the values. Authors: one name a line, or separated by commas."""

    title = forms.CharField(max_length=500, required=False)
    authors = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False, help_text="One name a line.")
    year = forms.IntegerField(min_value=1000, max_value=2100, required=False)
    venue = forms.CharField(max_length=300, required=False)
    doi = forms.CharField(max_length=255, required=False, label="DOI")


class LibraryFilterForm(forms.Form):
    """The library's filters (GET)."""

    q = forms.CharField(
        required=False,
        label="Search",
        widget=forms.TextInput(attrs={"placeholder": "Title, author, venue or full text", "type": "search"}),
    )
    first_author = forms.CharField(required=False, label="First author")
    year = forms.IntegerField(min_value=1000, max_value=2100, required=False)
    venue = forms.CharField(required=False)
    project = forms.TypedChoiceField(coerce=int, empty_value=None, required=False, label="Project")
    mine = forms.BooleanField(required=False, label="My papers")
    sort = forms.ChoiceField(choices=list(LIBRARY_SORTS.items()), required=False, label="Sort by")

    def __init__(self, *args: Any, projects: Sequence[tuple[int, str]] = (), **kwargs: Any) -> None:
        """*projects*: (id, name) of the projects the viewer may see, the only ones offered and
        accepted (another id is an invalid choice, like an id that does not exist)."""
        super().__init__(*args, **kwargs)
        cast(forms.TypedChoiceField, self.fields["project"]).choices = [("", "All projects"), *projects]


class AuthorNamesForm(forms.Form):
    names = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        label="Names you publish under",
        help_text="One a line: Sanjay Ghemawat, S. Ghemawat, ...",
    )
