"""REST API of projects (workspaces), their papers and members.

Each endpoint states the role it needs; a non-member gets 404, a member below the role 403
`{"error": {"code": "forbidden", ...}}` (see `projects.services.get_project_for_user`)."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotagent.http import AuthenticatedRequest, attachment_response
from annotagent.ratelimit import check_user_rate
from papers.api import PaperSerializer
from papers.services import get_paper_for_user, read_upload
from projects.models import Project, ProjectMembership, Role, members_of, papers_as_added, user_label
from projects.services import (
    add_member,
    add_papers_to_project,
    create_project,
    delete_project,
    ensure_default_project,
    export_project_references,
    find_user,
    get_project_for_user,
    get_project_paper_for_user,
    remove_member,
    remove_paper_from_project,
    room_in,
    set_member_role,
    update_project,
    upload_paper_to_project,
)


class ProjectSerializer(serializers.ModelSerializer[Project]):
    paper_count = serializers.SerializerMethodField()
    room = serializers.SerializerMethodField(help_text="How many more papers the project can hold.")
    role = serializers.SerializerMethodField(help_text="My role: admin, writer or reader.")
    member_count = serializers.SerializerMethodField()
    owner = serializers.CharField(source="owner.username", read_only=True, help_text="Who created it.")

    class Meta:
        model = Project
        fields = [
            "id",
            "name",
            "description",
            "is_default",
            "archived_at",
            "owner",
            "role",
            "member_count",
            "paper_count",
            "room",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def get_role(self, project: Project) -> str:
        return str(project.member_role or "")

    def get_member_count(self, project: Project) -> int:
        return project.memberships.count()

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
    file = serializers.FileField(
        required=False, allow_empty_file=True, help_text="A PDF to upload into my library and this project."
    )

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
    already_in_project = serializers.BooleanField(
        help_text="True when the project already held every paper given (nothing was linked)."
    )


class MemberSerializer(serializers.ModelSerializer[ProjectMembership]):
    user_id = serializers.IntegerField(source="user.pk", read_only=True)
    username = serializers.CharField(source="user.username", read_only=True)
    name = serializers.SerializerMethodField()

    class Meta:
        model = ProjectMembership
        fields = ["user_id", "username", "name", "role", "created_at", "updated_at"]
        read_only_fields = fields

    def get_name(self, member: ProjectMembership) -> str:
        return user_label(member.user)


class MemberAddSerializer(serializers.Serializer[None]):
    user = serializers.CharField(help_text="Username or e-mail address of the user to add.")
    role = serializers.ChoiceField(choices=Role.choices, default=Role.READER)


class MemberRoleSerializer(serializers.Serializer[None]):
    role = serializers.ChoiceField(choices=Role.choices)


class ProjectListView(APIView):
    @extend_schema(
        responses=ProjectSerializer(many=True), summary="Projects I am a member of, with my role (default first)"
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        ensure_default_project(request.user)
        projects = Project.objects.for_user(request.user).default_first().select_related("owner")
        return Response(ProjectSerializer(projects, many=True).data)

    @extend_schema(request=ProjectWriteSerializer, responses={201: ProjectSerializer}, summary="Create a project")
    def post(self, request: AuthenticatedRequest) -> Response:
        body = ProjectWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        project = create_project(owner=request.user, **body.validated_data)
        return Response(ProjectSerializer(project).data, status=HTTPStatus.CREATED)


class DefaultProjectView(APIView):
    @extend_schema(responses=ProjectSerializer, summary="My default private project (reader)")
    def get(self, request: AuthenticatedRequest) -> Response:
        return Response(ProjectSerializer(get_project_for_user(request.user, None)).data)


class ProjectDetailView(APIView):
    @extend_schema(responses=ProjectSerializer, summary="One project (reader)")
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        return Response(ProjectSerializer(get_project_for_user(request.user, pk)).data)

    @extend_schema(
        request=ProjectWriteSerializer(partial=True), responses=ProjectSerializer, summary="Rename or describe (admin)"
    )
    def patch(self, request: AuthenticatedRequest, pk: int) -> Response:
        project = get_project_for_user(request.user, pk, need=Role.ADMIN)
        body = ProjectWriteSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        project = update_project(project=project, **body.validated_data)
        return Response(ProjectSerializer(project).data)

    @extend_schema(
        responses={204: None}, summary="Delete a project (admin; not the default one; papers stay in libraries)"
    )
    def delete(self, request: AuthenticatedRequest, pk: int) -> Response:
        delete_project(project=get_project_for_user(request.user, pk, need=Role.ADMIN))
        return Response(status=HTTPStatus.NO_CONTENT)


class ProjectPapersView(APIView):
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    @extend_schema(responses=PaperSerializer(many=True), summary="Papers of a project (reader)")
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        project = get_project_for_user(request.user, pk)
        papers = papers_as_added(project).order_by("project_links__added_at", "pk")
        return Response(PaperSerializer(papers, many=True).data)

    @extend_schema(
        request={
            "application/json": AddProjectPapersSerializer,
            "multipart/form-data": AddProjectPapersSerializer,
        },
        responses={201: AddedProjectPapersSerializer},
        summary="Add papers of my library by id, or upload one (writer; it joins my library in the same transaction)",
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        project = get_project_for_user(request.user, pk, need=Role.WRITER)
        refuse_several_files(request)
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
            uploaded = {
                "papers": [added.paper],
                "already_in_library": added.already_in_library,
                "already_in_project": added.already_in_project,
            }
            return Response(AddedProjectPapersSerializer(uploaded).data, status=HTTPStatus.CREATED)
        ids = [data["paper_id"]] if data.get("paper_id") is not None else data["paper_ids"]
        papers = [get_paper_for_user(request.user, paper_id) for paper_id in dict.fromkeys(ids)]
        links = add_papers_to_project(project=project, papers=papers, user=request.user)
        picked = {"papers": papers, "already_in_library": False, "already_in_project": not links}
        return Response(AddedProjectPapersSerializer(picked).data, status=HTTPStatus.CREATED)


class ProjectPaperView(APIView):
    @extend_schema(responses={204: None}, summary="Remove a paper from a project (writer; libraries keep it)")
    def delete(self, request: AuthenticatedRequest, pk: int, paper_id: int) -> Response:
        project, paper = get_project_paper_for_user(request.user, pk, paper_id, need=Role.WRITER)
        remove_paper_from_project(project=project, paper=paper)
        return Response(status=HTTPStatus.NO_CONTENT)


class ProjectMembersView(APIView):
    @extend_schema(responses=MemberSerializer(many=True), summary="Members of a project (reader)")
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        project = get_project_for_user(request.user, pk)
        return Response(MemberSerializer(members_of(project), many=True).data)

    @extend_schema(
        request=MemberAddSerializer,
        responses={201: MemberSerializer},
        summary="Add a member by username or e-mail (admin; not in a default project)",
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        project = get_project_for_user(request.user, pk, need=Role.ADMIN)
        body = MemberAddSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        user = find_user(body.validated_data["user"])
        member = add_member(project=project, user=user, role=body.validated_data["role"])
        return Response(MemberSerializer(member).data, status=HTTPStatus.CREATED)


class ProjectMemberView(APIView):
    @extend_schema(
        request=MemberRoleSerializer,
        responses=MemberSerializer,
        summary="Change a member's role (admin; the last admin cannot be demoted)",
    )
    def patch(self, request: AuthenticatedRequest, pk: int, user_id: int) -> Response:
        project = get_project_for_user(request.user, pk, need=Role.ADMIN)
        member = get_object_or_404(project.memberships.select_related("user"), user_id=user_id)
        body = MemberRoleSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        member = set_member_role(project=project, user=member.user, role=body.validated_data["role"])
        return Response(MemberSerializer(member).data)

    @extend_schema(
        responses={204: None},
        summary="Remove a member (admin), or leave (any member, my own user id); the last admin cannot",
    )
    def delete(self, request: AuthenticatedRequest, pk: int, user_id: int) -> Response:
        leaving = user_id == request.user.pk
        project = get_project_for_user(request.user, pk, need=Role.READER if leaving else Role.ADMIN)
        member = get_object_or_404(project.memberships.select_related("user"), user_id=user_id)
        remove_member(project=project, user=member.user)
        return Response(status=HTTPStatus.NO_CONTENT)


class ProjectUploadSerializer(serializers.Serializer[None]):
    # An empty file is the service's to refuse ("not_a_pdf": "The file is empty."), as on /api/library/.
    file = serializers.FileField(allow_empty_file=True, help_text="A PDF, at most UPLOAD_MAX_BYTES.")
    project_id = serializers.IntegerField(required=False, help_text="The project; my default project when omitted.")


def refuse_several_files(request: AuthenticatedRequest) -> None:
    """Raise ValidationError when a one-file upload carries several `file` parts: never keep one
    and drop the others unsaid."""
    if len(request.FILES.getlist("file")) > 1:
        raise serializers.ValidationError(
            {"file": ["One file per request here; send several to POST /api/library/ as `files`."]}
        )


class UploadView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": ProjectUploadSerializer},
        responses={201: AddedProjectPapersSerializer},
        summary="Upload a PDF into my library and a project (writer; `project_id` omitted: my default project)",
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        refuse_several_files(request)
        body = ProjectUploadSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        project = get_project_for_user(request.user, body.validated_data.get("project_id"), need=Role.WRITER)
        check_user_rate(user_id=request.user.pk, action="upload")
        file = body.validated_data["file"]
        added = upload_paper_to_project(
            project=project, user=request.user, data=read_upload(file, size=file.size), filename=file.name or ""
        )
        uploaded = {
            "papers": [added.paper],
            "already_in_library": added.already_in_library,
            "already_in_project": added.already_in_project,
        }
        return Response(AddedProjectPapersSerializer(uploaded).data, status=HTTPStatus.CREATED)


class ProjectReferencesView(APIView):
    @extend_schema(
        responses={(200, "application/x-bibtex"): str, (200, "application/vnd.citationstyles.csl+json"): dict},
        summary="The project's references as BibTeX (references.bib) or CSL-JSON (references.json) (reader)",
    )
    def get(self, request: AuthenticatedRequest, pk: int, fmt: str) -> HttpResponse:
        exported = export_project_references(user=request.user, pk=pk, fmt=fmt)
        return attachment_response(exported.content, content_type=exported.content_type, filename=exported.filename)
