from django.urls import path

from projects import views

app_name = "projects"

urlpatterns = [
    path("", views.project_list, name="list"),
    path("projects/new/", views.project_create, name="create"),
    path("projects/<int:pk>/", views.project_detail, name="detail"),
    path("projects/<int:pk>/edit/", views.project_update, name="update"),
    path("projects/<int:pk>/delete/", views.project_delete, name="delete"),
    path("projects/<int:pk>/papers/add/", views.add_papers, name="add_papers"),
    path("projects/<int:pk>/papers/upload/", views.upload, name="upload"),
    path("projects/<int:pk>/papers/<int:paper_id>/remove/", views.remove_paper, name="remove_paper"),
    path("projects/<int:pk>/papers/<int:paper_id>/reprocess/", views.reprocess, name="reprocess"),
    path("projects/<int:pk>/chat/ask/", views.chat_ask, name="chat_ask"),
    path("projects/<int:pk>/chat/clear/", views.chat_clear, name="chat_clear"),
]
