"""Project pages: the list, one project's papers and chat, and the forms that change them."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotagent.errors import AnnotagentError
from annotagent.http import AuthenticatedHttpRequest
from annotagent.ratelimit import check_user_rate
from chat.services import chat_history_page, clear_chat
from chat.suggestions import suggested_prompts
from papers.forms import UploadForm
from papers.models import Paper
from papers.services import get_paper_for_user, read_upload
from projects.forms import AddPapersForm, ProjectForm
from projects.models import Project
from projects.services import (
    add_papers_to_project,
    create_project,
    delete_project,
    get_project_for_user,
    papers_counted,
    remove_paper_from_project,
    reprocess_paper,
    room_in,
    update_project,
    upload_paper_to_project,
)


@login_required
@require_GET
def project_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    projects = Project.objects.for_user(request.user).annotate(paper_count=Count("project_papers"))
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
    papers = list(
        Paper.objects.filter(project_links__project=project)
        .named_for(request.user)
        .order_by("project_links__added_at", "pk")
    )
    room = room_in(project)
    chat_messages, _ = chat_history_page(project, limit=settings.CHAT_HISTORY_PAGE_SIZE)
    return render(
        request,
        "projects/detail.html",
        {
            "project": project,
            "papers": papers,
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
    project = get_project_for_user(request.user, pk)
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
    project = get_project_for_user(request.user, pk)
    if request.method == "GET":
        return render(request, "projects/confirm_delete.html", {"project": project})
    name = project.name
    delete_project(project=project)
    messages.success(request, f"Deleted {name}. Its papers are still in your library.")
    return redirect("projects:list")


@login_required
@require_POST
def add_papers(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    project = get_project_for_user(request.user, pk)
    form = AddPapersForm(request.POST, user=request.user, project=project)
    if not form.is_valid():
        messages.error(request, "Choose papers from your library to add.")
        return redirect("projects:detail", pk=project.pk)
    try:
        links = add_papers_to_project(project=project, papers=list(form.cleaned_data["papers"]), user=request.user)
    except AnnotagentError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Added {len(links)} paper{'s' if len(links) != 1 else ''}.")
    return redirect("projects:detail", pk=project.pk)


@login_required
@require_POST
def upload(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    project = get_project_for_user(request.user, pk)
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose a PDF file to upload.")
        return redirect("projects:detail", pk=project.pk)
    file = form.cleaned_data["file"]
    try:
        check_user_rate(user_id=request.user.pk, action="upload")
        data = read_upload(file, size=file.size)
        added = upload_paper_to_project(project=project, user=request.user, data=data, filename=file.name)
    except AnnotagentError as exc:
        messages.error(request, exc.message)
        return redirect("projects:detail", pk=project.pk)
    title = added.paper.display_title
    if added.already_in_library:
        messages.info(request, f"“{title}” is already in your library; it is now in this project too.")
    else:
        messages.success(request, f"Added “{title}” to your library and this project.")
    return redirect("projects:detail", pk=project.pk)


@login_required
@require_POST
def remove_paper(request: AuthenticatedHttpRequest, pk: int, paper_id: int) -> HttpResponse:
    project = get_project_for_user(request.user, pk)
    paper = get_paper_for_user(request.user, paper_id)
    remove_paper_from_project(project=project, paper=paper)
    messages.success(request, f"Removed “{paper.display_title}” from this project; it stays in your library.")
    return redirect("projects:detail", pk=project.pk)


@login_required
@require_POST
def reprocess(request: AuthenticatedHttpRequest, pk: int, paper_id: int) -> HttpResponse:
    project = get_project_for_user(request.user, pk)
    paper = get_paper_for_user(request.user, paper_id)
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
    project = get_project_for_user(request.user, pk)
    if request.method == "GET":
        return render(request, "projects/confirm_clear_chat.html", {"project": project})
    clear_chat(project=project)
    messages.success(request, "Cleared the chat.")
    return redirect("projects:detail", pk=project.pk)
