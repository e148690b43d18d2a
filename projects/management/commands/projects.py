"""`manage.py projects SUBCOMMAND`: operators' view of workspaces and their members.

    projects create --user U NAME [--description D]
    projects list [--user U]
    projects members --user U PROJECT
    projects add-member --user U PROJECT MEMBER [--role reader|writer|admin]
    projects set-role --user U PROJECT MEMBER ROLE
    projects remove-member --user U PROJECT MEMBER

PROJECT is a project's id or name, MEMBER a username or e-mail address. `--user` is who acts: every
subcommand goes through the same checks as the web and the API (`get_project_for_user`: member
management needs an admin). Errors are printed as such and exit non-zero.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.http import Http404

from annotagent.errors import AnnotagentError
from projects.models import Project, Role, members_of
from projects.services import (
    add_member,
    create_project,
    find_user,
    get_project_for_user,
    remove_member,
    set_member_role,
)

# A command that cannot find the project it is given lists at most this many of the user's.
MAX_LISTED_PROJECTS = 20


def resolve_project(user: User, identifier: str | None, *, need: Role = Role.READER) -> Project:
    """The project *identifier* (an id, or a name among *user*'s projects; None: *user*'s default
    project), checked for *need*. Raises CommandError when there is no such project for *user*
    (or the name is ambiguous) or the role does not allow *need*."""
    try:
        if identifier is None:
            return get_project_for_user(user, None, need=need)
        if identifier.isdigit():
            return get_project_for_user(user, int(identifier), need=need)
        named = Project.objects.for_user(user).filter(name__iexact=identifier.strip())
        # A user's own project names are unique; prefer it to a shared one of the same name.
        choices = list(named.filter(owner=user)[:1]) or list(named[:2])
        if len(choices) != 1:
            # No such name is most often a typo: the listing shows the names; two of one name need the id.
            hint = "give one of their ids" if choices else "check the name"
            many = "more than one project" if choices else "no project"
            raise CommandError(
                f"{user.username} has {many} named {identifier!r}; {hint}. Their projects: {_listing(user)}."
            )
        return get_project_for_user(user, choices[0].pk, need=need)
    except Http404:
        listing = _listing(user)
        raise CommandError(f"{user.username} has no project {identifier!r}. Their projects: {listing}.") from None
    except AnnotagentError as exc:
        raise CommandError(exc.message) from None


def _listing(user: User) -> str:
    """*user*'s projects as "id ('name')", comma-separated (the first `MAX_LISTED_PROJECTS`), or "none"."""
    projects = Project.objects.for_user(user).order_by("pk")[:MAX_LISTED_PROJECTS]
    return ", ".join(f"{project.pk} ({project.name!r})" for project in projects) or "none"


def _user(identifier: str) -> User:
    try:
        return find_user(identifier)
    except AnnotagentError as exc:
        raise CommandError(exc.message) from None


class Command(BaseCommand):
    help = (
        "Create and list projects and manage their members "
        "(create, list, members, add-member, set-role, remove-member)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="create a project, with --user as its admin")
        create.add_argument("name")
        create.add_argument("--user", required=True)
        create.add_argument("--description", default="")
        listing = sub.add_parser("list", help="projects with their members' count (of --user: with the role)")
        listing.add_argument("--user")
        members = sub.add_parser("members", help="a project's members and roles")
        members.add_argument("project")
        members.add_argument("--user", required=True)
        add = sub.add_parser("add-member", help="add a member (--user must be an admin)")
        add.add_argument("project")
        add.add_argument("member")
        add.add_argument("--role", choices=Role.values, default=Role.READER)
        add.add_argument("--user", required=True)
        role = sub.add_parser("set-role", help="change a member's role (--user must be an admin)")
        role.add_argument("project")
        role.add_argument("member")
        role.add_argument("role", choices=Role.values)
        role.add_argument("--user", required=True)
        remove = sub.add_parser("remove-member", help="remove a member (--user must be an admin, or the member)")
        remove.add_argument("project")
        remove.add_argument("member")
        remove.add_argument("--user", required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        try:
            getattr(self, "do_" + action.replace("-", "_"))(options)
        except AnnotagentError as exc:
            raise CommandError(exc.message) from None

    def do_create(self, options: dict[str, Any]) -> None:
        user = _user(options["user"])
        project = create_project(owner=user, name=options["name"], description=options["description"])
        self.stdout.write(f"Created project {project.pk} {project.name!r}, admin {user.username}.")

    def do_list(self, options: dict[str, Any]) -> None:
        if options["user"]:
            projects = Project.objects.for_user(_user(options["user"])).default_first()
        else:
            projects = Project.objects.order_by("pk")
        for project in projects.select_related("owner").with_member_count():
            role = f" [{project.member_role}]" if project.member_role else ""
            flags = " default" if project.is_default else ""
            flags += " archived" if project.archived_at else ""
            self.stdout.write(
                f"{project.pk}\t{project.name}{role}\towner {project.owner.username}\t"
                f"{project.member_count} member(s){flags}"  # type: ignore[attr-defined]
            )

    def do_members(self, options: dict[str, Any]) -> None:
        project = resolve_project(_user(options["user"]), options["project"])
        for member in members_of(project):
            self.stdout.write(f"{member.user.username}\t{member.role}")

    def do_add_member(self, options: dict[str, Any]) -> None:
        project = resolve_project(_user(options["user"]), options["project"], need=Role.ADMIN)
        member = add_member(project=project, user=_user(options["member"]), role=options["role"])
        self.stdout.write(f"Added {member.user.username} to {project.name!r} as {member.role}.")

    def do_set_role(self, options: dict[str, Any]) -> None:
        project = resolve_project(_user(options["user"]), options["project"], need=Role.ADMIN)
        member = set_member_role(project=project, user=_user(options["member"]), role=options["role"])
        self.stdout.write(f"{member.user.username} is now {member.role} in {project.name!r}.")

    def do_remove_member(self, options: dict[str, Any]) -> None:
        actor, member = _user(options["user"]), _user(options["member"])
        need = Role.READER if actor.pk == member.pk else Role.ADMIN
        project = resolve_project(actor, options["project"], need=need)
        remove_member(project=project, user=member)
        self.stdout.write(f"Removed {member.username} from {project.name!r}.")
