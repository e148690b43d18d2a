from django.urls import path

from notes import views

app_name = "notes"

urlpatterns = [
    path("new/", views.note_create, name="create"),
    path("library/", views.library_notes, name="library"),
    path("<int:pk>/", views.note_detail, name="detail"),
    path("<int:pk>/delete/", views.note_delete, name="delete"),
]
