"""Library pages: the grid of papers, uploads, removal, "Add to project", the reader, the PDF file
and its figure images."""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotagent.errors import AnnotagentError
from annotagent.http import AuthenticatedHttpRequest, login_or_token_required
from papers.forms import AuthorNamesForm, LibraryFilterForm, MetadataForm, UploadForm
from papers.metadata import MetadataFilter, author_names_of, search_words
from papers.models import Figure, Paper, UserPaper
from papers.services import (
    add_uploads_to_library,
    author_names,
    choose_primary_version,
    correct_paper_metadata,
    get_figure_of_paper,
    get_paper_for_user,
    library_works,
    set_author_names,
)
from projects.forms import AddToProjectForm
from projects.models import Project, Role
from projects.services import (
    add_paper_to_new_project,
    add_papers_to_project,
    get_project_for_user,
    get_readable_paper_for_user,
    private_projects_of,
    remove_paper_from_library,
    reprocess_paper,
)


@login_required
@require_GET
def library(request: AuthenticatedHttpRequest) -> HttpResponse:
    projects = Project.objects.for_user(request.user).default_first()
    filters = LibraryFilterForm(request.GET or None, projects=[(project.pk, project.name) for project in projects])
    criteria, mine, sort, within = MetadataFilter(), False, "added", None
    if filters.is_bound and filters.is_valid():
        values = filters.cleaned_data
        criteria = MetadataFilter(
            first_author=values["first_author"], year=values["year"], venue=values["venue"], text=values["q"]
        )
        mine, sort = values["mine"], values["sort"] or "added"
        if values["q"].strip() and not search_words(values["q"]):
            messages.info(request, f"“{values['q'].strip()}” has only common words, which are not searched for.")
        if values["project"] is not None:
            within = get_project_for_user(request.user, values["project"]).papers.all()
    try:
        result = library_works(user=request.user, criteria=criteria, mine=mine, sort=sort, within=within)
    except AnnotagentError as exc:
        messages.error(request, exc.message)
        result = library_works(user=request.user, criteria=criteria, sort=sort, within=within)
    if result.listing.full_text_error is not None:
        error = result.listing.full_text_error
        messages.warning(request, f"Only titles, authors and venues were searched: {error.message}")
    return render(
        request,
        "papers/library.html",
        {
            "entries": [(work, result.text_match(work)) for work in result.works],
            "filters": filters,
            "filtered": bool(criteria) or mine or within is not None,
            "upload_form": UploadForm(),
            "add_form": AddToProjectForm(user=request.user),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def edit_metadata(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    paper = get_paper_for_user(request.user, pk)
    cited = paper.cited
    initial = {
        "title": cited.title,
        "authors": "\n".join(cited.authors),
        "year": cited.year,
        "venue": cited.venue,
        "doi": cited.doi,
    }
    form = MetadataForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        # Only the fields the user changed become corrections; the rest keep following the PDF.
        changes = {name: form.cleaned_data[name] for name in form.changed_data}
        if "authors" in changes:
            changes["authors"] = author_names_of(str(changes["authors"]))
        try:
            correct_paper_metadata(user=request.user, paper=paper, changes=changes, reset=request.POST.getlist("reset"))
        except AnnotagentError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, "Saved your corrections; only you (and your projects) see them.")
            return redirect("papers:library")
    return render(request, "papers/edit_metadata.html", {"paper": paper, "form": form, "cited": cited})


@login_required
@require_http_methods(["GET", "POST"])
def author_profile(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = AuthorNamesForm(request.POST or None, initial={"names": "\n".join(author_names(request.user))})
    if request.method == "POST" and form.is_valid():
        try:
            set_author_names(user=request.user, names=form.cleaned_data["names"])
        except AnnotagentError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, "Saved the names you publish under.")
            return redirect("papers:library")
    return render(request, "papers/author_profile.html", {"form": form})


@login_required
@require_POST
def upload(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose one or more PDF files to upload.")
        return redirect("papers:library")
    batch = add_uploads_to_library(user=request.user, files=form.cleaned_data["file"])
    if len(batch.outcomes) > 1:
        level = messages.WARNING if batch.refused else messages.SUCCESS
        messages.add_message(request, level, batch.summary())
        return redirect("papers:library")
    (outcome,) = batch.outcomes
    if outcome.error is not None:
        messages.error(request, outcome.error.message)
    elif outcome.already and outcome.paper is not None:
        messages.info(request, f"“{outcome.paper.display_title}” is already in your library.")
    elif outcome.paper is not None:
        ready = outcome.paper.index_status == Paper.IndexStatus.READY
        state = "it is ready to search" if ready else "indexing is queued"
        messages.success(request, f"Added “{outcome.paper.display_title}” to your library; {state}.")
    return redirect("papers:library")


@login_required
@require_http_methods(["GET", "POST"])
def remove(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    paper = get_paper_for_user(request.user, pk)
    if request.method == "GET":
        projects = private_projects_of(request.user).filter(papers=paper)
        return render(request, "papers/confirm_remove.html", {"paper": paper, "projects": projects})
    title = paper.display_title
    remove_paper_from_library(user=request.user, paper=paper)
    messages.success(request, f"Removed “{title}” from your library and your private projects.")
    return redirect("papers:library")


@login_required
@require_POST
def retry(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """Retry a failed paper of the user's library: its failure is cleared and indexing queued again."""
    paper = get_paper_for_user(request.user, pk)
    if paper.index_status != Paper.IndexStatus.FAILED:
        messages.info(request, f"“{paper.display_title}” has not failed; there is nothing to retry.")
    else:
        reprocess_paper(paper=paper)
        messages.success(request, f"Queued “{paper.display_title}” for indexing again.")
    return redirect("papers:library")


@login_required
@require_POST
def make_primary(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """Make a paper the primary version of its work in the user's library."""
    paper = get_paper_for_user(request.user, pk)
    try:
        choose_primary_version(user=request.user, paper=paper)
    except AnnotagentError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Questions in your projects now read this version of “{paper.display_title}”.")
    return redirect("papers:library")


@login_required
@require_POST
def add_to_project(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    paper = get_paper_for_user(request.user, pk)
    form = AddToProjectForm(request.POST, user=request.user)
    if not form.is_valid():
        messages.error(request, " ".join(str(error) for error in form.non_field_errors()) or "Choose a project.")
        return redirect("papers:library")
    project = form.cleaned_data["project"]
    try:
        if project is None:
            project = add_paper_to_new_project(
                owner=request.user, name=form.cleaned_data["new_project_name"], paper=paper
            )
        else:
            project = get_project_for_user(request.user, project.pk, need=Role.WRITER)
            add_papers_to_project(project=project, papers=[paper], user=request.user)
    except AnnotagentError as exc:
        messages.error(request, exc.message)
        return redirect("papers:library")
    messages.success(request, f"Added “{paper.display_title}” to {project.name}.")
    return redirect("projects:detail", pk=project.pk)


@login_required
@require_GET
def reader(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """A paper of the user's library, or of a project they are a member of (see
    `get_readable_paper_for_user`), so a citation link works for every member."""
    return render_reader(request, get_readable_paper_for_user(request.user, pk))


def render_reader(request: AuthenticatedHttpRequest, paper: Paper, *, project: Project | None = None) -> HttpResponse:
    """The reader page of *paper* at `?page=` (1-based, clamped to the paper; past its end, the last
    page with a notice saying so). With *project*, its links and PDF go through the project; notes
    and the private paper chat only when the paper is in the viewer's library (they are library
    features). Its figures and tables are listed, each linking to its page."""
    # ?page=6 is the PDF's sixth page; ?printed=379 the page that prints "379" (journal numbering).
    by_printed = paper.page_for_printed(request.GET.get("printed", ""))
    try:
        page = by_printed or int(request.GET.get("page", "1"))
    except ValueError:
        page = 1
    asked = page = max(page, 1)
    if paper.page_count:
        page = min(page, paper.page_count)
    printed = paper.printed_page(page)
    if project is not None:
        page_url = reverse("projects:paper_reader", args=[project.pk, paper.pk])
        file_url = reverse("projects:paper_file", args=[project.pk, paper.pk])
    else:
        page_url = reverse("papers:reader", args=[paper.pk])
        file_url = reverse("papers:file", args=[paper.pk])
    context = {
        "paper": paper,
        "page": page,
        "printed_page": "" if printed == str(page) else printed,
        # The passage to highlight on the page (the reader's script also takes it from a citation
        # clicked in a chat), and every page's printed number for the page header as pages turn.
        "quote": request.GET.get("quote", "")[:500],
        "printed_pages_json": json.dumps([paper.printed_page(n) for n in range(1, paper.page_count + 1)]),
        # A ?page= past the end shows the last page, and says so (a link may count pages otherwise).
        "past_the_end": asked > page,
        "page_url": page_url,
        "file_url": file_url,
        "project": project,
        "in_library": UserPaper.objects.filter(user=request.user, paper=paper).exists(),
        "figures": list(Figure.objects.of_papers([paper.pk])),
    }
    return render(request, "papers/reader.html", context)


@login_required
@require_POST
def chat_ask(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    # Answers stream over a WebSocket driven by chat.js; without JavaScript there is nothing to stream to.
    paper = get_paper_for_user(request.user, pk)
    messages.info(request, "Enable JavaScript to chat: answers stream live into the page.")
    return redirect("papers:reader", pk=paper.pk)


@login_or_token_required
@require_GET
def file(request: AuthenticatedHttpRequest, pk: int) -> FileResponse:
    """A paper's PDF, for whoever may read it (`get_readable_paper_for_user`), signed in or with an
    API token (it is the API's `file_url`); anyone else gets a 404."""
    return paper_file_response(get_readable_paper_for_user(request.user, pk))


@login_or_token_required
@require_GET
def figure(request: AuthenticatedHttpRequest, pk: int, figure_id: int) -> FileResponse:
    """A figure's PNG, for whoever may read its paper (see `reader`), signed in or with an API token
    (it is the API's `image_url`); anyone else gets a 404."""
    found = get_figure_of_paper(get_readable_paper_for_user(request.user, pk), figure_id)
    response = FileResponse(found.image.open("rb"), content_type="image/png")
    # The image of a figure id never changes (re-indexing makes new ids), but it is private.
    response["Cache-Control"] = "private, max-age=86400"
    return response


def paper_file_response(paper: Paper) -> FileResponse:
    """*paper*'s PDF, shown inline, named by its title (never by anyone's file name)."""
    return FileResponse(
        paper.file.open("rb"),
        content_type="application/pdf",
        as_attachment=False,
        filename=f"{paper.display_title[:100]}.pdf",
    )
