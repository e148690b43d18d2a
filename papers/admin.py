from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from papers.models import AuthorProfile, Figure, Paper, UserPaper
from projects.services import reprocess_paper


class LibraryEntryInline(admin.TabularInline[UserPaper, Paper]):
    model = UserPaper
    fields = ["user", "filename", "corrections", "chosen_primary", "added_at"]
    readonly_fields = ["added_at"]
    raw_id_fields = ["user"]
    extra = 0
    verbose_name = "library entry (with the user's metadata corrections)"


@admin.register(Paper)
class PaperAdmin(admin.ModelAdmin[Paper]):
    list_display = [
        "display_title",
        "index_status",
        "page_count",
        "chunk_count",
        "index_error",
        "extraction_warning",
        "created_at",
    ]
    list_filter = ["index_status", "embedding_model", "is_supplement"]
    search_fields = ["title", "authors", "venue", "doi", "arxiv_id", "sha256"]
    # The PDF's metadata here; each user's corrections in the library entries below.
    inlines = [LibraryEntryInline]
    readonly_fields = [
        "sha256",
        "file",
        "index_version",
        "embedding_model",
        "chunk_count",
        "extraction_warning",
        "page_report",
        "indexed_at",
        "uploaded_by",
        "created_at",
        "updated_at",
    ]
    actions = ["reindex"]

    @admin.display(description="Title", ordering="title")
    def display_title(self, paper: Paper) -> str:
        return paper.display_title

    @admin.action(description="Re-index selected papers")
    def reindex(self, request: HttpRequest, queryset: QuerySet[Paper]) -> None:
        count = 0
        for paper in queryset:
            reprocess_paper(paper=paper)
            count += 1
        self.message_user(request, f"Queued {count} paper(s) for indexing.", messages.SUCCESS)


@admin.register(UserPaper)
class UserPaperAdmin(admin.ModelAdmin[UserPaper]):
    list_display = ["user", "paper", "filename", "corrections", "added_at"]
    search_fields = ["user__username", "paper__title", "paper__doi"]
    list_select_related = ["user", "paper"]
    raw_id_fields = ["user", "paper"]


@admin.register(AuthorProfile)
class AuthorProfileAdmin(admin.ModelAdmin[AuthorProfile]):
    list_display = ["user", "names"]
    search_fields = ["user__username"]
    raw_id_fields = ["user"]


@admin.register(Figure)
class FigureAdmin(admin.ModelAdmin[Figure]):
    """Figures are cropped at indexing and replaced by the next indexing: shown, not edited."""

    list_display = ["label", "paper", "page_number", "kind", "width", "height"]
    list_filter = ["kind"]
    search_fields = ["label", "caption", "paper__title", "paper__sha256"]
    list_select_related = ["paper"]
    raw_id_fields = ["paper"]
    readonly_fields = [
        "paper",
        "kind",
        "label",
        "page_number",
        "caption",
        "bbox",
        "image",
        "width",
        "height",
        "position",
    ]
