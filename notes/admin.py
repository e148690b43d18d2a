from django.contrib import admin

from notes.models import CopilotMessage, Note


@admin.register(Note)
class NoteAdmin(admin.ModelAdmin[Note]):
    list_display = ["name", "is_folder", "scope", "user", "paper", "project", "version", "updated_at"]
    list_filter = ["scope", "is_folder"]
    search_fields = ["name", "content"]
    raw_id_fields = ["user", "paper", "project", "parent", "created_by"]
    readonly_fields = ["version", "created_at", "updated_at"]


@admin.register(CopilotMessage)
class CopilotMessageAdmin(admin.ModelAdmin[CopilotMessage]):
    list_display = ["__str__", "user", "project", "role", "created_at"]
    list_filter = ["role"]
    raw_id_fields = ["user", "project"]
    readonly_fields = ["created_at"]
