from django.urls import path
from django.views.generic import RedirectView

from projects import views

app_name = "projects"

urlpatterns = [
    path("", views.project_list, name="list"),
    # The list lives at the site's root; "/projects/" is where a reader of the project URLs looks.
    path("projects/", RedirectView.as_view(pattern_name="projects:list"), name="list_redirect"),
    path("projects/new/", views.project_create, name="create"),
    path("projects/<int:pk>/", views.project_detail, name="detail"),
    path("projects/<int:pk>/edit/", views.project_update, name="update"),
    path("projects/<int:pk>/delete/", views.project_delete, name="delete"),
    path("projects/<int:pk>/papers/add/", views.add_papers, name="add_papers"),
    path("projects/<int:pk>/papers/upload/", views.upload, name="upload"),
    path("projects/<int:pk>/papers/<int:paper_id>/remove/", views.remove_paper, name="remove_paper"),
    path("projects/<int:pk>/papers/<int:paper_id>/reprocess/", views.reprocess, name="reprocess"),
    path("projects/<int:pk>/references.bib", views.references, {"fmt": "bib"}, name="references_bib"),
    path("projects/<int:pk>/references.json", views.references, {"fmt": "json"}, name="references_json"),
    path("projects/<int:pk>/archive/", views.project_archive, name="archive"),
    path("projects/<int:pk>/members/", views.project_members, name="members"),
    path("projects/<int:pk>/members/add/", views.member_add, name="member_add"),
    path("projects/<int:pk>/members/<int:user_id>/role/", views.member_set_role, name="member_set_role"),
    path("projects/<int:pk>/members/<int:user_id>/remove/", views.member_remove, name="member_remove"),
    path("projects/<int:pk>/papers/<int:paper_id>/read/", views.paper_reader, name="paper_reader"),
    path("projects/<int:pk>/papers/<int:paper_id>/file/", views.paper_file, name="paper_file"),
    path("projects/<int:pk>/chat/ask/", views.chat_ask, name="chat_ask"),
    path("projects/<int:pk>/chat/clear/", views.chat_clear, name="chat_clear"),
]
