from django.contrib import admin

from projects.models import Project, ProjectPaper


class ProjectPaperInline(admin.TabularInline[ProjectPaper, Project]):
    model = ProjectPaper
    raw_id_fields = ["paper"]
    extra = 0


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin[Project]):
    list_display = ["name", "owner", "created_at", "updated_at"]
    search_fields = ["name", "description", "owner__username"]
    list_filter = ["created_at"]
    list_select_related = ["owner"]
    raw_id_fields = ["owner"]
    inlines = [ProjectPaperInline]


@admin.register(ProjectPaper)
class ProjectPaperAdmin(admin.ModelAdmin[ProjectPaper]):
    list_display = ["project", "paper", "added_at"]
    search_fields = ["project__name", "paper__title", "project__owner__username"]
    list_select_related = ["project", "paper"]
    raw_id_fields = ["project", "paper"]
