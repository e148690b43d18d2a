"""Indexing state kept in the relational database (chunks themselves live in MongoDB)."""

import uuid

from django.db import models

from papers.models import Paper


class ContextualBlurb(models.Model):
    """A cached chat-model blurb for one chunk text of one paper (see `indexing.blurbs`)."""

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="contextual_blurbs")
    model = models.CharField(max_length=200)
    text_sha256 = models.CharField(max_length=64)
    blurb = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["paper", "model", "text_sha256"], name="unique_contextual_blurb")
        ]

    def __str__(self) -> str:
        return self.blurb[:60]


class Installation(models.Model):
    """This database's identity: one row, made on first use. The chunk index records the id of the
    installation it belongs to (see `indexing.store`), so two databases never share one index:
    their paper ids would name different papers."""

    installation_id = models.CharField(max_length=32, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.installation_id

    @classmethod
    def current_id(cls) -> str:
        """The installation id (uuid4 hex) of the default database, made on first use."""
        row, _ = cls.objects.get_or_create(pk=1, defaults={"installation_id": uuid.uuid4().hex})
        return row.installation_id
