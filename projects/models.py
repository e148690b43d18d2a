"""Projects: named groups of papers from a user's library that the user talks to as one."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotagent.querysets import BulkCreateSignalQuerySet
from papers.models import Paper
from projects.signals import links_bulk_created


class ProjectQuerySet(models.QuerySet["Project"]):
    def for_user(self, user: models.Model) -> ProjectQuerySet:
        """Projects *user* may see. The one place access is decided; roles slot in here."""
        if not getattr(user, "is_authenticated", False):
            return self.none()
        return self.filter(owner=user)


class Project(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="projects")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    papers = models.ManyToManyField(Paper, through="ProjectPaper", related_name="projects")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at", "pk"]

    def __str__(self) -> str:
        return self.name


class ProjectPaperQuerySet(BulkCreateSignalQuerySet["ProjectPaper"]):
    bulk_created = links_bulk_created


class ProjectPaper(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="project_papers")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="project_links")
    added_at = models.DateTimeField(auto_now_add=True)

    # Its bulk_create (used by `project.papers.add`) sends `links_bulk_created`.
    objects = ProjectPaperQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "paper"], name="unique_project_paper")]
        ordering = ["added_at", "pk"]

    def __str__(self) -> str:
        return f"{self.project} · {self.paper}"
