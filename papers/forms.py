from django import forms

from papers.services import LIBRARY_SORTS


class UploadForm(forms.Form):
    """A PDF upload. Size and type are checked by `papers.services.read_upload`, not here."""

    file = forms.FileField(
        label="PDF",
        allow_empty_file=True,  # the service says "The file is empty.", which is clearer
        widget=forms.ClearableFileInput(attrs={"accept": "application/pdf,.pdf"}),
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

    q = forms.CharField(required=False, label="Search")
    first_author = forms.CharField(required=False, label="First author")
    year = forms.IntegerField(min_value=1000, max_value=2100, required=False)
    venue = forms.CharField(required=False)
    mine = forms.BooleanField(required=False, label="My papers")
    sort = forms.ChoiceField(choices=list(LIBRARY_SORTS.items()), required=False, label="Sort by")


class AuthorNamesForm(forms.Form):
    names = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        label="Names you publish under",
        help_text="One a line: Sanjay Ghemawat, S. Ghemawat, ...",
    )
