"""Notes API routes, included by `annotagent.api_urls` (namespace `api`)."""

from django.urls import path

from notes import api

urlpatterns = [
    path("notes/", api.NoteListView.as_view(), name="notes"),
    path("notes/tree/", api.NoteTreeView.as_view(), name="notes-tree"),
    path("notes/mentions/", api.MentionsView.as_view(), name="notes-mentions"),
    path("notes/save-answer/", api.SaveAnswerView.as_view(), name="notes-save-answer"),
    path("notes/<int:pk>/", api.NoteDetailView.as_view(), name="note"),
    path(
        "notes/suggestions/paper/<int:paper_id>/<int:message_id>/<str:sid>/<str:action>/",
        api.PaperSuggestionView.as_view(),
        name="paper-suggestion",
    ),
    path(
        "notes/suggestions/copilot/<int:message_id>/<str:sid>/<str:action>/",
        api.CopilotSuggestionView.as_view(),
        name="copilot-suggestion",
    ),
    path("projects/<int:pk>/copilot/", api.ProjectCopilotView.as_view(), name="project-copilot"),
    path("library/copilot/", api.LibraryCopilotView.as_view(), name="library-copilot"),
]
