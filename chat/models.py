"""Chat history: one rolling thread per project, and per-paper threads keyed by user and paper."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from papers.models import Paper
from projects.models import Project


class ProjectChat(models.Model):
    """The one rolling chat thread of a project."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="chat")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Chat of {self.project}"


class AnswerStatus(models.TextChoices):
    """`chat.extractive.Status` as stored: every claim supported, some, none, nothing to search."""

    ANSWERED = "answered", "answered"
    PARTLY_ANSWERED = "partly_answered", "partly answered"
    NOT_STATED = "not_stated", "not stated"
    NO_PAPERS = "no_papers", "no papers"


class ChatMessage(models.Model):
    """One turn. `citations` maps each reference number (as a string) to the cited passage:
    `{"1": {"paper_id": int, "title": str, "page": int, "text": str}}`, saved with the message so
    citation links render identically after a reload."""

    class Role(models.TextChoices):
        USER = "user", "User"
        ASSISTANT = "assistant", "Assistant"

    class State(models.TextChoices):
        COMPLETE = "complete", "Complete"
        STOPPED = "stopped", "Stopped"
        FAILED = "failed", "Failed"

    chat = models.ForeignKey(ProjectChat, on_delete=models.CASCADE, related_name="messages")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    role = models.CharField(max_length=16, choices=Role.choices)
    text = models.TextField()
    citations = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.COMPLETE)
    extractive = models.BooleanField(default=False, help_text="Composed from passages without a chat model.")
    status = models.CharField(
        max_length=20,
        choices=AnswerStatus.choices,
        blank=True,
        help_text="How far an answer answers the question (blank for questions and older answers).",
    )
    sentences = models.JSONField(
        default=list,
        blank=True,
        help_text='An answer\'s sentences: [{"text", "citations", "supported", "not_stated"}].',
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.role}: {self.text[:60]}"


class PaperChat(models.Model):
    """A focused chat on one paper, private to one user, expiring after a day."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="paper_chats")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="paper_chats")
    messages = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "paper"], name="unique_paper_chat")]

    def __str__(self) -> str:
        return f"{self.user} · {self.paper}"
