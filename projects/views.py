"""Project pages: the list, one project's papers and chat, its members, and the forms that change
them. Every page fetches its project through `get_project_for_user` with the role its action needs."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import FileResponse, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotagent.errors import AnnotagentError
from annotagent.http import AuthenticatedHttpRequest, attachment_response
from chat.services import chat_history_page, clear_chat
from chat.suggestions import suggested_prompts
from papers.forms import UploadForm
from papers.views import paper_file_response, render_reader
from papers.works import searched_papers
from projects.forms import AddPapersForm, MemberForm, ProjectForm
from projects.models import Project, Role, members_of, papers_as_added
from projects.services import (
    add_member,
    add_papers_to_project,
    add_uploads_to_project,
    create_project,
    delete_project,
    ensure_default_project,
    export_project_references,
    find_user,
    get_project_for_user,
    get_project_paper_for_user,
    papers_counted,
    remove_member,
    remove_paper_from_project,
    reprocess_paper,
    room_in,
    set_member_role,
    set_project_archived,
    update_project,
)


@login_required
@require_GET
def project_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    ensure_default_project(request.user)
    projects = (
        Project.objects.for_user(request.user)
        .with_member_count()
        .annotate(paper_count=Count("project_papers", distinct=True))
        .order_by("archived_at", "-is_default", "-updated_at", "pk")
    )
    return render(request, "projects/list.html", {"projects": projects, "form": ProjectForm()})


@login_required
@require_POST
def project_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = ProjectForm(request.POST)
    if not form.is_valid():
        messages.error(request, "A project needs a name of at most 200 characters.")
        return redirect("projects:list")
    try:
        project = create_project(owner=request.user, **form.cleaned_data)
    except AnnotagentError as exc:
        messages.error(request, exc.message)
        return redirect("projects:list")
    messages.success(request, f"Created {project.name}.")
    return redirect("projects:detail", pk=project.pk)


@login_required
@require_GET
def project_detail(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    project = get_project_for_user(request.user, pk)
    papers = list(papers_as_added(project).order_by("project_links__added_at", "pk"))
    room = room_in(project)
    chat_messages, _ = chat_history_page(project, limit=settings.CHAT_HISTORY_PAGE_SIZE)
    role = project.member_role or Role.READER
    return render(
        request,
        "projects/detail.html",
        {
            "project": project,
            "role": role,
            "can_write": role.allows(Role.WRITER),
            "can_admin": role.allows(Role.ADMIN),
            "members": members_of(project),
            "papers": papers,
            # Of several versions of one work, questions read one (`projects.models.papers_to_search`).
            "searched": {paper.pk for paper in searched_papers(papers)},
            "room": room,
            "counted": papers_counted(project),
            "max_papers": settings.PROJECT_MAX_PAPERS,
            "picker": AddPapersForm(user=request.user, project=project),
            "upload_form": UploadForm(),
            "edit_form": ProjectForm(initial={"name": project.name, "description": project.description}),
            "chat_messages": chat_messages,
            "suggestions": [] if chat_messages else suggested_prompts([p.display_title for p in papers]),
        },
    )


@login_required
@require_POST
def project_update(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    project = get_project_for_user(request.user, pk, need=Role.ADMIN)
    form = ProjectForm(request.POST)
    if not form.is_valid():
        messages.error(request, "A project needs a name of at most 200 characters.")
        return redirect("projects:detail", pk=project.pk)
    try:
        update_project(project=project, **form.cleaned_data)
    except AnnotagentError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "Saved the project's name and description.")
    return redirect("projects:detail", pk=project.pk)


@login_required
@require_http_methods(["GET", "POST"])
def project_delete(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    project = get_project_for_user(request.user, pk, need=Role.ADMIN)
    if request.method == "GET":
        return render(request, "projects/confirm_delete.html", {"project": project})
    name = project.name
    try:
        delete_project(project=project)
    except AnnotagentError as exc:
        messages.error(request, exc.message)
        return redirect("projects:detail", pk=project.pk)
    messages.success(request, f"Deleted {name}. Its papers are still in the libraries they came from.")
    return redirect("projects:list")


@login_required
@require_POST
def add_papers(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    project = get_project_for_user(request.user, pk, need=Role.WRITER)
    form = AddPapersForm(request.POST, user=request.user, project=project)
    if not form.is_valid():
        messages.error(request, "Choose papers from your library to add.")
        return redirect("projects:detail", pk=project.pk)
    try:
        chosen = list(form.cleaned_data["papers"])
        links = add_papers_to_project(project=project, papers=chosen, user=request.user)
    except AnnotagentError as exc:
        messages.error(request, exc.message)
    else:
        if links:
            messages.success(request, f"Added {len(links)} paper{'s' if len(links) != 1 else ''}.")
        else:
            messages.info(request, "Already in this project.")
    return redirect("projects:detail", pk=project.pk)


@login_required
@require_POST
def upload(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    project = get_project_for_user(request.user, pk, need=Role.WRITER)
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose one or more PDF files to upload.")
        return redirect("projects:detail", pk=project.pk)
    batch = add_uploads_to_project(project=project, user=request.user, files=form.cleaned_data["file"])
    if len(batch.outcomes) > 1:
        level = messages.WARNING if batch.refused else messages.SUCCESS
        messages.add_message(request, level, batch.summary(already="already in this project"))
        return redirect("projects:detail", pk=project.pk)
    (outcome,) = batch.outcomes
    if outcome.error is not None:
        messages.error(request, outcome.error.message)
    elif outcome.paper is not None:
        title = outcome.paper.display_title
        if outcome.already:
            messages.info(request, f"“{title}” is already in this project.")
        elif outcome.already_in_library:
            messages.info(request, f"“{title}” is already in your library; it is now in this project too.")
        else:
            messages.success(request, f"Added “{title}” to your library and this project.")
    return redirect("projects:detail", pk=project.pk)


@login_required
@require_POST
def remove_paper(request: AuthenticatedHttpRequest, pk: int, paper_id: int) -> HttpResponse:
    project, paper = get_project_paper_for_user(request.user, pk, paper_id, need=Role.WRITER)
    remove_paper_from_project(project=project, paper=paper)
    messages.success(request, f"Removed “{paper.display_title}” from this project; libraries keep it.")
    return redirect("projects:detail", pk=project.pk)


@login_required
@require_POST
def reprocess(request: AuthenticatedHttpRequest, pk: int, paper_id: int) -> HttpResponse:
    project, paper = get_project_paper_for_user(request.user, pk, paper_id, need=Role.WRITER)
    reprocess_paper(paper=paper)
    messages.success(request, f"Queued “{paper.display_title}” for indexing again.")
    return redirect("projects:detail", pk=project.pk)


@login_required
@require_POST
def chat_ask(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    # Answers stream over a WebSocket driven by chat.js; without JavaScript there is nothing to stream to.
    project = get_project_for_user(request.user, pk)
    messages.info(request, "Enable JavaScript to chat: answers stream live into the page.")
    return redirect("projects:detail", pk=project.pk)


@login_required
@require_http_methods(["GET", "POST"])
def chat_clear(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    project = get_project_for_user(request.user, pk, need=Role.WRITER)
    if request.method == "GET":
        return render(request, "projects/confirm_clear_chat.html", {"project": project})
    clear_chat(project=project)
    messages.success(request, "Cleared the chat.")
    return redirect("projects:detail", pk=project.pk)


@login_required
@require_POST
def project_archive(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    project = get_project_for_user(request.user, pk, need=Role.ADMIN)
    archived = request.POST.get("archived", "1") == "1"
    try:
        set_project_archived(project=project, archived=archived)
    except AnnotagentError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"{'Archived' if archived else 'Restored'} {project.name}.")
    return redirect("projects:detail", pk=project.pk)


@login_required
@require_GET
def project_members(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    project = get_project_for_user(request.user, pk)
    role = project.member_role or Role.READER
    return render(
        request,
        "projects/members.html",
        {
            "project": project,
            "members": members_of(project),
            "can_admin": role.allows(Role.ADMIN),
            "form": MemberForm(),
            "roles": Role.choices,
        },
    )


@login_required
@require_POST
def member_add(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    project = get_project_for_user(request.user, pk, need=Role.ADMIN)
    form = MemberForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Give a username or e-mail address and a role.")
        return redirect("projects:members", pk=project.pk)
    try:
        member = add_member(project=project, user=find_user(form.cleaned_data["user"]), role=form.cleaned_data["role"])
    except AnnotagentError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Added {member.user.username} as {member.get_role_display().lower()}.")
    return redirect("projects:members", pk=project.pk)


@login_required
@require_POST
def member_set_role(request: AuthenticatedHttpRequest, pk: int, user_id: int) -> HttpResponse:
    project = get_project_for_user(request.user, pk, need=Role.ADMIN)
    member = get_object_or_404(project.memberships.select_related("user"), user_id=user_id)
    try:
        set_member_role(project=project, user=member.user, role=request.POST.get("role", ""))
    except AnnotagentError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"{member.user.username} is now {request.POST.get('role')}.")
    return redirect("projects:members", pk=project.pk)


@login_required
@require_http_methods(["GET", "POST"])
def member_remove(request: AuthenticatedHttpRequest, pk: int, user_id: int) -> HttpResponse:
    """An admin removes a member; any member may remove themselves (leave)."""
    leaving = user_id == request.user.pk
    project = get_project_for_user(request.user, pk, need=Role.READER if leaving else Role.ADMIN)
    member = get_object_or_404(project.memberships.select_related("user"), user_id=user_id)
    if request.method == "GET":
        return render(
            request, "projects/confirm_remove_member.html", {"project": project, "member": member, "leaving": leaving}
        )
    try:
        remove_member(project=project, user=member.user)
    except AnnotagentError as exc:
        messages.error(request, exc.message)
        return redirect("projects:members", pk=project.pk)
    if leaving:
        messages.success(request, f"You left {project.name}.")
        return redirect("projects:list")
    messages.success(request, f"Removed {member.user.username} from {project.name}.")
    return redirect("projects:members", pk=project.pk)


@login_required
@require_GET
def paper_reader(request: AuthenticatedHttpRequest, pk: int, paper_id: int) -> HttpResponse:
    """A project's paper in the reader, for any member, whether or not it is in their library."""
    project, paper = get_project_paper_for_user(request.user, pk, paper_id)
    return render_reader(request, paper, project=project)


@login_required
@require_GET
def paper_file(request: AuthenticatedHttpRequest, pk: int, paper_id: int) -> FileResponse:
    _, paper = get_project_paper_for_user(request.user, pk, paper_id)
    return paper_file_response(paper)


@login_required
@require_GET
def references(request: AuthenticatedHttpRequest, pk: int, fmt: str) -> HttpResponse:
    """The project's references as a download: `references.bib` (BibTeX) or `references.json` (CSL-JSON)."""
    exported = export_project_references(user=request.user, pk=pk, fmt=fmt)
    return attachment_response(exported.content, content_type=exported.content_type, filename=exported.filename)
