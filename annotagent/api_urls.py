from django.urls import path
from rest_framework.authtoken.views import obtain_auth_token

from chat.api import AskView, ProjectChatView, SearchView
from notes.api_urls import urlpatterns as notes_urlpatterns
from papers.api import (
    AuthorNamesView,
    LibraryPaperView,
    LibraryView,
    LibraryWorksView,
    LibraryWorkView,
    PaperDetailView,
    PaperFiguresView,
    PrimaryVersionView,
)
from projects.api import (
    DefaultProjectView,
    ProjectDetailView,
    ProjectListView,
    ProjectMembersView,
    ProjectMemberView,
    ProjectPapersView,
    ProjectPaperView,
    ProjectReferencesView,
    UploadView,
)

app_name = "api"

urlpatterns = [
    path("auth/token/", obtain_auth_token, name="token"),
    path("projects/", ProjectListView.as_view(), name="projects"),
    path("projects/default/", DefaultProjectView.as_view(), name="project-default"),
    path("projects/<int:pk>/", ProjectDetailView.as_view(), name="project"),
    path("projects/<int:pk>/members/", ProjectMembersView.as_view(), name="project-members"),
    path("projects/<int:pk>/members/<int:user_id>/", ProjectMemberView.as_view(), name="project-member"),
    path("projects/<int:pk>/papers/", ProjectPapersView.as_view(), name="project-papers"),
    path("projects/<int:pk>/papers/<int:paper_id>/", ProjectPaperView.as_view(), name="project-paper"),
    path(
        "projects/<int:pk>/references.bib",
        ProjectReferencesView.as_view(),
        {"fmt": "bib"},
        name="project-references-bib",
    ),
    path(
        "projects/<int:pk>/references.json",
        ProjectReferencesView.as_view(),
        {"fmt": "json"},
        name="project-references-json",
    ),
    path("projects/<int:pk>/chat/", ProjectChatView.as_view(), name="project-chat"),
    path("ask/", AskView.as_view(), name="ask"),
    path("search/", SearchView.as_view(), name="search"),
    path("upload/", UploadView.as_view(), name="upload"),
    path("library/", LibraryView.as_view(), name="library"),
    path("library/works/", LibraryWorksView.as_view(), name="library-works"),
    path("library/<int:pk>/", LibraryPaperView.as_view(), name="library-paper"),
    path("library/<int:pk>/work/", LibraryWorkView.as_view(), name="library-paper-work"),
    path("library/<int:pk>/primary/", PrimaryVersionView.as_view(), name="library-paper-primary"),
    path("papers/<int:pk>/", PaperDetailView.as_view(), name="paper"),
    path("papers/<int:pk>/figures/", PaperFiguresView.as_view(), name="paper-figures"),
    path("profile/author-names/", AuthorNamesView.as_view(), name="author-names"),
    *notes_urlpatterns,
]
