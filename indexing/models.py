"""Indexing state kept in the relational database (chunks themselves live in MongoDB)."""

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
