from django.contrib import admin

from projects.models import Project, ProjectMembership, ProjectPaper


class ProjectPaperInline(admin.TabularInline[ProjectPaper, Project]):
    model = ProjectPaper
    raw_id_fields = ["paper", "added_by"]
    extra = 0


class ProjectMembershipInline(admin.TabularInline[ProjectMembership, Project]):
    model = ProjectMembership
    raw_id_fields = ["user"]
    extra = 0


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin[Project]):
    list_display = ["name", "owner", "is_default", "archived_at", "created_at", "updated_at"]
    search_fields = ["name", "description", "owner__username"]
    list_filter = ["is_default", "archived_at", "created_at"]
    list_select_related = ["owner"]
    raw_id_fields = ["owner"]
    inlines = [ProjectMembershipInline, ProjectPaperInline]


@admin.register(ProjectPaper)
class ProjectPaperAdmin(admin.ModelAdmin[ProjectPaper]):
    list_display = ["project", "paper", "added_at"]
    search_fields = ["project__name", "paper__title", "project__owner__username"]
    list_select_related = ["project", "paper"]
    raw_id_fields = ["project", "paper"]
