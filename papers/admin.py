from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from papers.models import Paper, UserPaper
from projects.services import reprocess_paper


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
    list_filter = ["index_status", "embedding_model"]
    search_fields = ["title", "authors", "doi", "sha256"]
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
    list_display = ["user", "paper", "filename", "added_at"]
    search_fields = ["user__username", "paper__title", "paper__doi"]
    list_select_related = ["user", "paper"]
    raw_id_fields = ["user", "paper"]
