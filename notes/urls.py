from django.urls import path
from django.views.generic import RedirectView

from notes import views

app_name = "notes"

urlpatterns = [
    # "/notes/" is where a reader of the note URLs looks first: the library's notes.
    path("", RedirectView.as_view(pattern_name="notes:library"), name="index"),
    path("new/", views.note_create, name="create"),
    path("library/", views.library_notes, name="library"),
    path("<int:pk>/", views.note_detail, name="detail"),
    path("<int:pk>/delete/", views.note_delete, name="delete"),
]
