"""REST API of projects and their papers."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotagent.http import AuthenticatedRequest
from annotagent.ratelimit import check_user_rate
from papers.api import PaperSerializer
from papers.models import Paper
from papers.services import get_paper_for_user, read_upload
from projects.models import Project
from projects.services import (
    add_papers_to_project,
    create_project,
    delete_project,
    get_project_for_user,
    remove_paper_from_project,
    room_in,
    update_project,
    upload_paper_to_project,
)


class ProjectSerializer(serializers.ModelSerializer[Project]):
    paper_count = serializers.SerializerMethodField()
    room = serializers.SerializerMethodField(help_text="How many more papers the project can hold.")

    class Meta:
        model = Project
        fields = ["id", "name", "description", "paper_count", "room", "created_at", "updated_at"]
        read_only_fields = fields

    def get_paper_count(self, project: Project) -> int:
        return project.project_papers.count()

    def get_room(self, project: Project) -> int:
        return room_in(project)


class ProjectWriteSerializer(serializers.Serializer[None]):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True)


class AddProjectPapersSerializer(serializers.Serializer[None]):
    """Exactly one of: `paper_id`, `paper_ids` (JSON), or `file` (multipart upload)."""

    paper_id = serializers.IntegerField(required=False)
    paper_ids = serializers.ListField(child=serializers.IntegerField(), required=False)
    file = serializers.FileField(required=False, help_text="A PDF to upload into my library and this project.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [key for key in ("paper_id", "paper_ids", "file") if attrs.get(key) not in (None, [])]
        if len(given) != 1:
            raise serializers.ValidationError("Give exactly one of paper_id, paper_ids or file.")
        return attrs


class AddedProjectPapersSerializer(serializers.Serializer[dict[str, Any]]):
    papers = PaperSerializer(many=True)
    already_in_library = serializers.BooleanField(
        help_text="For an upload: True when the file was already in my library (the paper is reused)."
    )


class ProjectListView(APIView):
    @extend_schema(responses=ProjectSerializer(many=True), summary="My projects")
    def get(self, request: AuthenticatedRequest) -> Response:
        return Response(ProjectSerializer(Project.objects.for_user(request.user), many=True).data)

    @extend_schema(request=ProjectWriteSerializer, responses={201: ProjectSerializer}, summary="Create a project")
    def post(self, request: AuthenticatedRequest) -> Response:
        body = ProjectWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        project = create_project(owner=request.user, **body.validated_data)
        return Response(ProjectSerializer(project).data, status=HTTPStatus.CREATED)


class ProjectDetailView(APIView):
    @extend_schema(responses=ProjectSerializer, summary="One project")
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        return Response(ProjectSerializer(get_project_for_user(request.user, pk)).data)

    @extend_schema(
        request=ProjectWriteSerializer(partial=True), responses=ProjectSerializer, summary="Rename or describe"
    )
    def patch(self, request: AuthenticatedRequest, pk: int) -> Response:
        project = get_project_for_user(request.user, pk)
        body = ProjectWriteSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        project = update_project(project=project, **body.validated_data)
        return Response(ProjectSerializer(project).data)

    @extend_schema(responses={204: None}, summary="Delete a project (its papers stay in the library)")
    def delete(self, request: AuthenticatedRequest, pk: int) -> Response:
        delete_project(project=get_project_for_user(request.user, pk))
        return Response(status=HTTPStatus.NO_CONTENT)


class ProjectPapersView(APIView):
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    @extend_schema(responses=PaperSerializer(many=True), summary="Papers of a project")
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        project = get_project_for_user(request.user, pk)
        papers = (
            Paper.objects.filter(project_links__project=project)
            .named_for(request.user)
            .order_by("project_links__added_at", "pk")
        )
        return Response(PaperSerializer(papers, many=True).data)

    @extend_schema(
        request={
            "application/json": AddProjectPapersSerializer,
            "multipart/form-data": AddProjectPapersSerializer,
        },
        responses={201: AddedProjectPapersSerializer},
        summary="Add papers by id, or upload one (it joins my library in the same transaction)",
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        project = get_project_for_user(request.user, pk)
        body = AddProjectPapersSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        if data.get("file") is not None:
            check_user_rate(user_id=request.user.pk, action="upload")
            file = data["file"]
            added = upload_paper_to_project(
                project=project,
                user=request.user,
                data=read_upload(file, size=file.size),
                filename=file.name or "",
            )
            uploaded = {"papers": [added.paper], "already_in_library": added.already_in_library}
            return Response(AddedProjectPapersSerializer(uploaded).data, status=HTTPStatus.CREATED)
        ids = [data["paper_id"]] if data.get("paper_id") is not None else data["paper_ids"]
        papers = [get_paper_for_user(request.user, paper_id) for paper_id in dict.fromkeys(ids)]
        add_papers_to_project(project=project, papers=papers, user=request.user)
        picked = {"papers": papers, "already_in_library": False}
        return Response(AddedProjectPapersSerializer(picked).data, status=HTTPStatus.CREATED)


class ProjectPaperView(APIView):
    @extend_schema(responses={204: None}, summary="Remove a paper from a project (the library keeps it)")
    def delete(self, request: AuthenticatedRequest, pk: int, paper_id: int) -> Response:
        project = get_project_for_user(request.user, pk)
        remove_paper_from_project(project=project, paper=get_paper_for_user(request.user, paper_id))
        return Response(status=HTTPStatus.NO_CONTENT)
