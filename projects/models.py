"""Projects: shared workspaces of papers that their members talk to as one.

Every user has one default private project ("My papers"); any other project may be shared with other
users through `ProjectMembership`, each member holding one role (reader < writer < admin).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.db.models import OuterRef, Q, Subquery

from annotagent.querysets import BulkCreateSignalQuerySet
from papers.models import Paper, PaperQuerySet, UserPaper
from papers.works import searched_papers
from projects.signals import links_bulk_created

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class Role(models.TextChoices):
    """A member's role; each role may do everything the roles below it may (see `Role.rank`)."""

    READER = "reader", "Reader"
    WRITER = "writer", "Writer"
    ADMIN = "admin", "Admin"

    @property
    def rank(self) -> int:
        return _RANKS[self.value]

    def allows(self, need: Role) -> bool:
        """Whether a member in this role may do what *need* is required for."""
        return self.rank >= Role(need).rank


_RANKS = {"reader": 1, "writer": 2, "admin": 3}


class ProjectQuerySet(models.QuerySet["Project"]):
    def for_user(self, user: User | models.Model) -> ProjectQuerySet:
        """Projects *user* is a member of, each annotated with `role` (theirs). The one place
        visibility is decided; `projects.services.get_project_for_user` checks the role on top."""
        if not getattr(user, "is_authenticated", False):
            return self.none()
        roles = ProjectMembership.objects.filter(project=OuterRef("pk"), user_id=user.pk).values("role")[:1]
        return self.filter(memberships__user_id=user.pk).annotate(role=Subquery(roles))

    def default_first(self) -> ProjectQuerySet:
        """The default project first, then the most recently changed."""
        return self.order_by("-is_default", "-updated_at", "pk")

    def active(self) -> ProjectQuerySet:
        return self.filter(archived_at__isnull=True)

    def with_member_count(self) -> ProjectQuerySet:
        """Annotate `member_count`, counted in a subquery (`for_user` already joins memberships to
        the viewer's own row, so a plain Count would say 1)."""
        counts = (
            ProjectMembership.objects.filter(project=OuterRef("pk"))
            .order_by()
            .values("project")
            .annotate(n=models.Count("pk"))
            .values("n")
        )
        return self.annotate(member_count=Subquery(counts, output_field=models.IntegerField()))


class Project(models.Model):
    # Who created it; who may do what is decided by the memberships, never by this field.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="projects")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    # The owner's private default project ("My papers"): never shared, never deleted.
    is_default = models.BooleanField(default=False)
    archived_at = models.DateTimeField(null=True, blank=True)
    papers = models.ManyToManyField(Paper, through="ProjectPaper", related_name="projects")
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="ProjectMembership", related_name="shared_projects"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["owner"], condition=Q(is_default=True), name="one_default_project_per_user")
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def member_role(self) -> Role | None:
        """The viewer's role, when fetched through `ProjectQuerySet.for_user` (None otherwise)."""
        role = getattr(self, "role", None)
        return Role(role) if role else None


class ProjectMembership(models.Model):
    """*user* may see *project* and act in it as *role* allows."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="project_memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.READER)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="unique_project_member")]
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.user} · {self.project} · {self.role}"


class ProjectPaperQuerySet(BulkCreateSignalQuerySet["ProjectPaper"]):
    bulk_created = links_bulk_created


class ProjectPaper(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="project_papers")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="project_links")
    # Who put it in the project (stamped by the server from the signed-in user).
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    added_at = models.DateTimeField(auto_now_add=True)

    # Its bulk_create (used by `project.papers.add`) sends `links_bulk_created`.
    objects = ProjectPaperQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "paper"], name="unique_project_paper")]
        ordering = ["added_at", "pk"]

    def __str__(self) -> str:
        return f"{self.project} · {self.paper}"


def papers_as_added(project: Project) -> PaperQuerySet:
    """*project*'s papers, each named and corrected as the member who added it has it in their
    library (`PaperQuerySet.named_by`): the file name and metadata corrections a member shares by
    adding a paper, never another user's. A paper whose adder is gone (or no longer holds it in
    their library) gets no file name and no corrections."""
    adder = ProjectPaper.objects.filter(project=project, paper=OuterRef(OuterRef("pk"))).values("added_by")
    entries = UserPaper.objects.filter(paper=OuterRef("pk"), user__in=adder)
    return Paper.objects.filter(project_links__project=project).named_by(entries)


def papers_to_search(project: Project) -> list[Paper]:
    """*project*'s papers as added (`papers_as_added`) that retrieval reads: each work once. Of
    several versions of one work in the project (`papers.works`), only the primary is read, chosen
    as the members who added them chose in their libraries (`UserPaper.chosen_primary`), else by
    the rule (published over preprint, else added last); supplements are always read."""
    return searched_papers(papers_as_added(project))


def members_of(project: Project) -> models.QuerySet[ProjectMembership]:
    """*project*'s memberships with their users, admins first, then by when they joined."""
    order = models.Case(
        *(models.When(role=role, then=models.Value(-rank)) for role, rank in _RANKS.items()),
        output_field=models.IntegerField(),
    )
    return project.memberships.select_related("user").order_by(order, "created_at", "pk")


def user_label(user: User | None) -> str:
    """How a member is named to other members: their full name, else their username."""
    if user is None:
        return "A member"
    return user.get_full_name() or user.username
