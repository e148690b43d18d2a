from django import forms


class UploadForm(forms.Form):
    """A PDF upload. Size and type are checked by `papers.services.read_upload`, not here."""

    file = forms.FileField(
        label="PDF",
        allow_empty_file=True,  # the service says "The file is empty.", which is clearer
        widget=forms.ClearableFileInput(attrs={"accept": "application/pdf,.pdf"}),
    )
