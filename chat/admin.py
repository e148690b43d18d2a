from django.contrib import admin

from chat.models import ChatMessage, PaperChat, ProjectChat


@admin.register(ProjectChat)
class ProjectChatAdmin(admin.ModelAdmin[ProjectChat]):
    list_display = ["project", "created_at", "updated_at"]
    search_fields = ["project__name", "project__owner__username"]
    raw_id_fields = ["project"]


@admin.register(ChatMessage)
class ChatMessageAdmin(admin.ModelAdmin[ChatMessage]):
    list_display = ["chat", "role", "state", "extractive", "created_at"]
    list_filter = ["role", "state", "extractive"]
    search_fields = ["text", "chat__project__name"]
    raw_id_fields = ["chat", "author"]


@admin.register(PaperChat)
class PaperChatAdmin(admin.ModelAdmin[PaperChat]):
    list_display = ["user", "paper", "updated_at"]
    search_fields = ["user__username", "paper__title"]
    raw_id_fields = ["user", "paper"]
