"""REST API of the library: list, upload, remove, and one paper with its index status."""

from __future__ import annotations

from http import HTTPStatus

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotagent.http import AuthenticatedRequest
from annotagent.ratelimit import check_user_rate
from papers.models import Paper
from papers.services import AddedPaper, add_paper_to_library, get_paper_for_user, read_upload
from projects.services import remove_paper_from_library


class PaperSerializer(serializers.ModelSerializer[Paper]):
    title = serializers.CharField(source="display_title", read_only=True)
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
            "year",
            "doi",
            "abstract",
            "page_count",
            "index_status",
            "index_error",
            "extraction_warning",
            "ocr_pages",
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


class UploadSerializer(serializers.Serializer[None]):
    file = serializers.FileField(help_text="A PDF, at most UPLOAD_MAX_BYTES.")


class AddedPaperSerializer(serializers.Serializer[AddedPaper]):
    # Whether anyone else had stored the same bytes is never said: that would tell who holds what.
    paper = PaperSerializer()
    already_in_library = serializers.BooleanField(help_text="True when your library already held this file.")


class LibraryView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(responses=PaperSerializer(many=True), summary="Papers in my library")
    def get(self, request: AuthenticatedRequest) -> Response:
        papers = Paper.objects.in_library_of(request.user).order_by("-library_links__added_at", "pk")
        return Response(PaperSerializer(papers, many=True).data)

    @extend_schema(
        request={"multipart/form-data": UploadSerializer},
        responses={201: AddedPaperSerializer, 200: AddedPaperSerializer},
        summary="Upload a PDF to my library (200 when it was already there)",
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        upload = UploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
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
        responses={204: None},
        summary="Remove a paper from my library and from all my projects",
    )
    def delete(self, request: AuthenticatedRequest, pk: int) -> Response:
        remove_paper_from_library(user=request.user, paper=get_paper_for_user(request.user, pk))
        return Response(status=HTTPStatus.NO_CONTENT)


class PaperDetailView(APIView):
    @extend_schema(responses=PaperSerializer, summary="A paper with its index status")
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        return Response(PaperSerializer(get_paper_for_user(request.user, pk)).data)
