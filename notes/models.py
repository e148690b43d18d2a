"""Notes: trees of folders and notes attached to an item, and the copilots' transcripts.

An item is a paper (notes private to one user: "my notes on this paper"), a project (shared by
whoever may open the project) or the user's library (private). `Note.content` is HTML that has been
through `notes.sanitize.sanitize_html` on every write.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from papers.models import Paper
from projects.models import Project


class Note(models.Model):
    """A folder (`is_folder`) or a note in the tree of one item.

    Exactly one item: `scope` says which; `paper` + `user` for paper notes, `project` for project
    notes, `user` alone for library notes. `parent` is a folder of the same item or null (top
    level). `version` grows by one on every change of `content`, so an accepted suggestion can tell
    whether the note changed since the model read it.
    """

    class Scope(models.TextChoices):
        PAPER = "paper", "Paper"
        PROJECT = "project", "Project"
        LIBRARY = "library", "Library"

    scope = models.CharField(max_length=16, choices=Scope.choices)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="notes"
    )
    paper = models.ForeignKey(Paper, null=True, blank=True, on_delete=models.CASCADE, related_name="notes")
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE, related_name="notes")
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="children")
    is_folder = models.BooleanField(default=False)
    name = models.CharField(max_length=200)
    content = models.TextField(blank=True, help_text="Sanitised HTML.")
    version = models.PositiveIntegerField(default=1)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-is_folder", "name", "pk"]
        constraints = [
            models.CheckConstraint(
                name="note_has_one_item",
                condition=(
                    Q(scope="paper", paper__isnull=False, user__isnull=False, project__isnull=True)
                    | Q(scope="project", project__isnull=False, paper__isnull=True, user__isnull=True)
                    | Q(scope="library", user__isnull=False, paper__isnull=True, project__isnull=True)
                ),
            )
        ]

    def __str__(self) -> str:
        return f"{'Folder' if self.is_folder else 'Note'} {self.name}"


class CopilotMessage(models.Model):
    """One turn of a user's project copilot (`project` set) or library copilot (`project` null).

    `citations` is the citation map of chat (`{"N": {"paper_id", "title", "page", "text"}}`);
    `suggestions` the list of suggestions made in this turn (see `notes.suggestions`), whose
    `status` changes when the user accepts or rejects one.
    """

    class Role(models.TextChoices):
        USER = "user", "User"
        ASSISTANT = "assistant", "Assistant"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="copilot_messages")
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="copilot_messages"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    text = models.TextField(blank=True)
    citations = models.JSONField(default=dict, blank=True)
    suggestions = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.role}: {self.text[:60]}"
