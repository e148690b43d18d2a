"""REST API of the library: list (as papers or as works), upload, remove, one paper with its index
status, its figures, its work and the choice of a work's primary version."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from django.db.models import QuerySet
from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotagent.errors import AnnotagentError
from annotagent.http import AuthenticatedRequest
from annotagent.ratelimit import check_user_rate
from papers.fulltext import TextMatch
from papers.metadata import MetadataFilter
from papers.models import Figure, Paper
from papers.services import (
    LIBRARY_SORTS,
    AddedPaper,
    UploadBatch,
    UploadOutcome,
    add_paper_to_library,
    add_uploads_to_library,
    author_names,
    choose_primary_version,
    correct_paper_metadata,
    get_paper_for_user,
    get_work_for_user,
    library_papers,
    library_works,
    read_upload,
    set_author_names,
)
from papers.works import Work
from projects.services import get_project_for_user, get_readable_paper_for_user, remove_paper_from_library


class PaperSerializer(serializers.ModelSerializer[Paper]):
    """A paper with the metadata the requesting user sees: the PDF's, with their corrections
    (`metadata_sources` says which: "pdf", "lookup" or "user"); `authors` is the ordered list."""

    title = serializers.CharField(source="display_title", read_only=True)
    authors = serializers.ListField(source="cited.authors", child=serializers.CharField(), read_only=True)
    first_author = serializers.CharField(source="cited.first_author", read_only=True)
    year = serializers.IntegerField(source="cited.year", read_only=True, allow_null=True)
    venue = serializers.CharField(source="cited.venue", read_only=True)
    doi = serializers.CharField(source="cited.doi", read_only=True)
    metadata_sources = serializers.DictField(source="cited.sources", child=serializers.CharField(), read_only=True)
    file_url = serializers.SerializerMethodField()
    reader_url = serializers.SerializerMethodField()
    ocr_pages = serializers.ListField(
        child=serializers.IntegerField(), read_only=True, help_text="Pages whose text was recognised by OCR."
    )

    class Meta:
        model = Paper
        fields = [
            "id",
            "title",
            "authors",
            "first_author",
            "year",
            "venue",
            "volume",
            "pages",
            "doi",
            "arxiv_id",
            "pmid",
            "keywords",
            "metadata_sources",
            "abstract",
            "page_count",
            "index_status",
            "index_error",
            "extraction_warning",
            "ocr_pages",
            "doc_key",
            "is_supplement",
            "chunk_count",
            "indexed_at",
            "created_at",
            "file_url",
            "reader_url",
        ]
        read_only_fields = fields

    def get_file_url(self, paper: Paper) -> str:
        return reverse("papers:file", args=[paper.pk])

    def get_reader_url(self, paper: Paper) -> str:
        return reverse("papers:reader", args=[paper.pk])


class TextMatchSerializer(serializers.Serializer[TextMatch]):
    page = serializers.IntegerField(help_text="The physical page (1-based).")
    page_label = serializers.CharField(help_text='"p. 6", or "p. 6 (printed 379)".')
    snippet = serializers.CharField(help_text="Plain text around the match.")
    match = serializers.CharField(help_text="The matched words as printed, inside the snippet.")
    reader_url = serializers.SerializerMethodField()

    def get_reader_url(self, match: TextMatch) -> str:
        return f"{reverse('papers:reader', args=[self.context['paper_id']])}?page={match.page}"


class WorkTextMatchSerializer(TextMatchSerializer):
    paper_id = serializers.IntegerField(help_text="The file of the work whose text matched.")


class LibraryPaperSerializer(PaperSerializer):
    """A paper of my library; `text_match`, when the search text `q` is in its full text: where."""

    text_match = serializers.SerializerMethodField()

    class Meta(PaperSerializer.Meta):
        fields = [*PaperSerializer.Meta.fields, "text_match"]
        read_only_fields = fields

    @extend_schema_field(TextMatchSerializer(allow_null=True))
    def get_text_match(self, paper: Paper) -> dict[str, Any] | None:
        match = self.context.get("text_matches", {}).get(paper.pk)
        return None if match is None else TextMatchSerializer(match, context={"paper_id": paper.pk}).data


class WorkSerializer(serializers.Serializer[Any]):
    """One work of my library (`papers.works.Work`): the files that hold it (same DOI, arXiv id or
    PMID) and its supplements. Retrieval in my projects reads `primary` and the supplements, never
    `versions`."""

    key = serializers.CharField(read_only=True, help_text='The shared doc_key ("doi:10.1145/..."); "" for one file.')
    primary = PaperSerializer(read_only=True, help_text="The version retrieval reads.")
    versions = PaperSerializer(many=True, read_only=True, help_text="The other versions, next best first.")
    supplements = PaperSerializer(many=True, read_only=True, help_text="Attached; always searched.")
    chosen = serializers.BooleanField(
        read_only=True, help_text="True when I chose the primary; False when the rule did (published, else newest)."
    )
    text_match = serializers.SerializerMethodField()

    @extend_schema_field(WorkTextMatchSerializer(allow_null=True))
    def get_text_match(self, work: Work) -> dict[str, Any] | None:
        """Where the search text `q` is in the full text of one of the work's files (the primary
        first), with that file's `paper_id`; null when in none (or no `q`)."""
        matches = self.context.get("text_matches", {})
        for file in work.files:
            if (match := matches.get(file.pk)) is not None:
                return {"paper_id": file.pk, **TextMatchSerializer(match, context={"paper_id": file.pk}).data}
        return None


class FigureSerializer(serializers.ModelSerializer[Figure]):
    """A captioned figure or table cropped from its page: `image_url` its PNG (`width` x `height`
    pixels), `reader_url` the reader at its page, `bbox` the crop in PDF points from the page's
    top-left corner."""

    page = serializers.IntegerField(source="page_number", read_only=True, help_text="1-based physical page.")
    bbox = serializers.ListField(child=serializers.FloatField(), read_only=True, min_length=4, max_length=4)
    image_url = serializers.SerializerMethodField()
    reader_url = serializers.SerializerMethodField()

    class Meta:
        model = Figure
        fields = ["id", "kind", "label", "caption", "page", "bbox", "width", "height", "image_url", "reader_url"]
        read_only_fields = fields

    def get_image_url(self, figure: Figure) -> str:
        return reverse("papers:figure", args=[figure.paper_id, figure.pk])

    def get_reader_url(self, figure: Figure) -> str:
        return f"{reverse('papers:reader', args=[figure.paper_id])}?page={figure.page_number}"


class UploadSerializer(serializers.Serializer[None]):
    """Exactly one of: `file` (one PDF) or `files` (one or more PDFs, the field repeated)."""

    # An empty file is the service's to refuse ("not_a_pdf": "The file is empty."), one file or several.
    file = serializers.FileField(required=False, allow_empty_file=True, help_text="A PDF, at most UPLOAD_MAX_BYTES.")
    files = serializers.ListField(
        child=serializers.FileField(allow_empty_file=True),
        required=False,
        min_length=1,
        help_text="Several PDFs (repeat the field): each is added or refused on its own.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("file" in attrs) == ("files" in attrs):
            raise serializers.ValidationError("Send exactly one of: file, files.")
        return attrs


class UploadErrorSerializer(serializers.Serializer[AnnotagentError]):
    code = serializers.CharField()
    message = serializers.CharField()


class UploadOutcomeSerializer(serializers.Serializer[UploadOutcome]):
    filename = serializers.CharField()
    status = serializers.SerializerMethodField(help_text="added, already_in_library or refused.")
    paper = PaperSerializer(allow_null=True, help_text="The paper, unless refused.")
    error = UploadErrorSerializer(allow_null=True, help_text="Why the file was refused (nothing of it was stored).")

    def get_status(self, outcome: UploadOutcome) -> str:
        if outcome.error is not None:
            return "refused"
        return "already_in_library" if outcome.already else "added"


class UploadBatchSerializer(serializers.Serializer[UploadBatch]):
    added = serializers.SerializerMethodField()
    already_in_library = serializers.SerializerMethodField()
    refused = serializers.SerializerMethodField()
    results = UploadOutcomeSerializer(source="outcomes", many=True, help_text="One per file, in the order sent.")

    def get_added(self, batch: UploadBatch) -> int:
        return len(batch.added)

    def get_already_in_library(self, batch: UploadBatch) -> int:
        return len(batch.already)

    def get_refused(self, batch: UploadBatch) -> int:
        return len(batch.refused)


class AddedPaperSerializer(serializers.Serializer[AddedPaper]):
    # Whether anyone else had stored the same bytes is never said: that would tell who holds what.
    paper = PaperSerializer()
    already_in_library = serializers.BooleanField(help_text="True when your library already held this file.")


class LibraryFilterSerializer(serializers.Serializer[None]):
    first_author = serializers.CharField(required=False, default="", help_text="Initials and diacritics match.")
    author = serializers.CharField(required=False, default="", help_text="Any author.")
    year = serializers.IntegerField(required=False, min_value=1000, max_value=2100, allow_null=True, default=None)
    before = serializers.IntegerField(required=False, min_value=1000, max_value=2100, allow_null=True, default=None)
    after = serializers.IntegerField(required=False, min_value=1000, max_value=2100, allow_null=True, default=None)
    venue = serializers.CharField(required=False, default="")
    q = serializers.CharField(
        required=False, default="", help_text="Text in the title, authors or venue, or in the paper's full text."
    )
    project = serializers.IntegerField(
        required=False, allow_null=True, default=None, help_text="Only papers also in this project of mine."
    )
    mine = serializers.BooleanField(required=False, default=False, help_text="Papers listing my author names.")
    sort = serializers.ChoiceField(
        choices=list(LIBRARY_SORTS),
        required=False,
        default="added",
        help_text="added (newest first), year (newest first, undated last) or title (A-Z).",
    )


class CorrectionSerializer(serializers.Serializer[None]):
    """A blank or null field goes back to what the PDF says, as if named in `reset`."""

    title = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    authors = serializers.JSONField(required=False, help_text="A list of names, or one comma-separated string.")
    year = serializers.IntegerField(required=False, allow_null=True)
    venue = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    doi = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    reset = serializers.ListField(
        child=serializers.CharField(), required=False, default=list, help_text="Fields to take from the PDF again."
    )


class AuthorNamesSerializer(serializers.Serializer[None]):
    names = serializers.ListField(child=serializers.CharField(max_length=200), max_length=20)


def library_filters(request: AuthenticatedRequest) -> tuple[MetadataFilter, dict[str, Any], QuerySet[Paper] | None]:
    """The library filters of *request*'s query (`LibraryFilterSerializer`), checked: the criteria,
    the validated values (`mine`, `sort`) and, with `project`, that project's papers. Raises
    ValidationError, and Http404 for a project the user is not a member of."""
    query = LibraryFilterSerializer(data=request.query_params)
    query.is_valid(raise_exception=True)
    values = query.validated_data
    criteria = MetadataFilter(
        first_author=values["first_author"],
        authors=(values["author"],) if values["author"] else (),
        year=values["year"],
        year_before=values["before"],
        year_after=values["after"],
        venue=values["venue"],
        text=values["q"],
    )
    within = None
    if values["project"] is not None:
        within = get_project_for_user(request.user, values["project"]).papers.all()
    return criteria, values, within


class LibraryView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        parameters=[LibraryFilterSerializer],
        responses=LibraryPaperSerializer(many=True),
        summary="Papers in my library, filtered by metadata, full text or project",
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        criteria, values, within = library_filters(request)
        listing = library_papers(
            user=request.user, criteria=criteria, mine=values["mine"], sort=values["sort"], within=within
        )
        if listing.full_text_error is not None:
            # A list without the full-text matches would look complete; say why it cannot be had.
            raise listing.full_text_error
        context = {"text_matches": listing.text_matches}
        return Response(LibraryPaperSerializer(listing.papers, many=True, context=context).data)

    @extend_schema(
        request={"multipart/form-data": UploadSerializer},
        responses={201: AddedPaperSerializer, 200: AddedPaperSerializer},
        summary="Upload a PDF to my library (200 when it was already there), or several PDFs as `files` "
        "(an UploadBatch; 201 when any was added, else 200)",
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        upload = UploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        if "files" in upload.validated_data:
            batch = add_uploads_to_library(user=request.user, files=upload.validated_data["files"])
            status = HTTPStatus.CREATED if batch.added else HTTPStatus.OK
            return Response(UploadBatchSerializer(batch).data, status=status)
        check_user_rate(user_id=request.user.pk, action="upload")
        file = upload.validated_data["file"]
        added = add_paper_to_library(
            user=request.user, data=read_upload(file, size=file.size), filename=file.name or ""
        )
        status = HTTPStatus.OK if added.already_in_library else HTTPStatus.CREATED
        return Response(AddedPaperSerializer(added).data, status=status)


class LibraryPaperView(APIView):
    @extend_schema(responses=PaperSerializer, summary="A paper in my library")
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        return Response(PaperSerializer(get_paper_for_user(request.user, pk)).data)

    @extend_schema(
        request=CorrectionSerializer,
        responses=PaperSerializer,
        summary="Correct a paper's metadata in my library (nobody else's view changes)",
    )
    def patch(self, request: AuthenticatedRequest, pk: int) -> Response:
        paper = get_paper_for_user(request.user, pk)
        body = CorrectionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        changes = {name: value for name, value in body.validated_data.items() if name != "reset"}
        corrected = correct_paper_metadata(
            user=request.user, paper=paper, changes=changes, reset=body.validated_data["reset"]
        )
        return Response(PaperSerializer(corrected).data)

    @extend_schema(
        responses={204: None},
        summary="Remove a paper from my library and from all my projects",
    )
    def delete(self, request: AuthenticatedRequest, pk: int) -> Response:
        remove_paper_from_library(user=request.user, paper=get_paper_for_user(request.user, pk))
        return Response(status=HTTPStatus.NO_CONTENT)


class LibraryWorksView(APIView):
    @extend_schema(
        parameters=[LibraryFilterSerializer],
        responses=WorkSerializer(many=True),
        summary="My library as works: each with its primary version, other versions and supplements",
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        criteria, values, within = library_filters(request)
        result = library_works(
            user=request.user, criteria=criteria, mine=values["mine"], sort=values["sort"], within=within
        )
        if result.listing.full_text_error is not None:
            raise result.listing.full_text_error
        context = {"text_matches": result.listing.text_matches}
        return Response(WorkSerializer(result.works, many=True, context=context).data)


class LibraryWorkView(APIView):
    @extend_schema(responses=WorkSerializer, summary="The work a paper of my library belongs to")
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        return Response(WorkSerializer(get_work_for_user(request.user, pk)).data)


class PrimaryVersionView(APIView):
    @extend_schema(
        request=None,
        responses=WorkSerializer,
        summary="Make this paper the primary version of its work in my library (retrieval reads it, not the others)",
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        work = choose_primary_version(user=request.user, paper=get_paper_for_user(request.user, pk))
        return Response(WorkSerializer(work).data)


class AuthorNamesView(APIView):
    @extend_schema(responses=AuthorNamesSerializer, summary="The names I publish under")
    def get(self, request: AuthenticatedRequest) -> Response:
        return Response({"names": author_names(request.user)})

    @extend_schema(
        request=AuthorNamesSerializer, responses=AuthorNamesSerializer, summary="Set the names I publish under"
    )
    def put(self, request: AuthenticatedRequest) -> Response:
        body = AuthorNamesSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        profile = set_author_names(user=request.user, names=body.validated_data["names"])
        return Response({"names": profile.names})


class PaperDetailView(APIView):
    @extend_schema(
        responses=PaperSerializer,
        summary="A paper I can read (my library or a project of mine) with its index status",
    )
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        return Response(PaperSerializer(get_readable_paper_for_user(request.user, pk)).data)


class PaperFiguresView(APIView):
    @extend_schema(
        responses=FigureSerializer(many=True),
        summary="The figures and tables of a paper I can read (my library or a project of mine)",
    )
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        paper = get_readable_paper_for_user(request.user, pk)
        return Response(FigureSerializer(Figure.objects.of_papers([paper.pk]), many=True).data)
