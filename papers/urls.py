from django.urls import path

from papers import views

app_name = "papers"

urlpatterns = [
    path("", views.library, name="library"),
    path("upload/", views.upload, name="upload"),
    path("author-names/", views.author_profile, name="author_profile"),
    path("<int:pk>/metadata/", views.edit_metadata, name="edit_metadata"),
    path("<int:pk>/remove/", views.remove, name="remove"),
    path("<int:pk>/retry/", views.retry, name="retry"),
    path("<int:pk>/primary/", views.make_primary, name="make_primary"),
    path("<int:pk>/add-to-project/", views.add_to_project, name="add_to_project"),
    path("<int:pk>/read/", views.reader, name="reader"),
    path("<int:pk>/chat/", views.chat_ask, name="chat_ask"),
    path("<int:pk>/file/", views.file, name="file"),
    path("<int:pk>/figures/<int:figure_id>.png", views.figure, name="figure"),
]
