"""`manage.py ingest_papers PATH... --user USERNAME [--project NAME|ID [--new-project]] [--force]`.

--project is read as `ask` and `projects` read it: an id, or the name of a project the user is a
member of (their own first); a name they have none of is created as their own project. A new name
close to one of theirs ("Sytems" beside "Systems") is taken for a typo and refused unless
--new-project is given. Adding to a shared project needs the writer role.
"""

import difflib
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexing.ingest import ingest_paths
from indexing.services import IndexProgress
from projects.management.commands.projects import resolve_project
from projects.models import Project, Role


class Command(BaseCommand):
    help = (
        "Add PDFs (files or folders) to a user's library and, with --project, to that project "
        "(an id or a name; a new name is created); index them before returning. Exit code 1 if any file failed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--user", required=True, help="username of the library's owner")
        parser.add_argument(
            "--project", help="project id or name (a name the user has no project of is created as theirs)"
        )
        parser.add_argument(
            "--new-project",
            action="store_true",
            help="create --project's name even when it is close to the name of a project the user has",
        )
        parser.add_argument(
            "--force", action="store_true", help="rebuild the chunks of papers that are already indexed too"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user named {options['user']!r}; create one with createsuperuser.")

        def on_file(path: Path, number: int, total: int) -> None:
            self.stdout.write(f"[{number}/{total}] {path.name}")

        # Progress within a file rewrites one terminal line; piped or logged, it would run the lines together.
        live = self.stdout.isatty()

        def progress(event: IndexProgress) -> None:
            if event.stage == "parsing" and event.message and live:
                self.stdout.write(f"    {event.message}", ending="\r")
            elif event.stage == "embedding" and live:
                self.stdout.write(f"    embedded {event.done_chunks}/{event.chunks} chunks", ending="\r")
            elif event.stage == "done":
                self.stdout.write(self.style.SUCCESS(f"    ready: {event.pages} pages, {event.chunks} chunks"))
            elif event.stage == "failed":
                self.stdout.write(self.style.ERROR(f"    failed: {event.message}"))

        def on_notice(notice: str) -> None:
            self.stdout.write(self.style.WARNING(notice))

        identifier = (options["project"] or "").strip()
        project = None
        if identifier.isdigit() or Project.objects.for_user(user).filter(name__iexact=identifier).exists():
            # "--project 4" is project 4, as for `ask`; a shared project by its name is that project
            # (a reader gets an error, not a private project of the same name).
            project = resolve_project(user, identifier, need=Role.WRITER)
        elif identifier and not options["new_project"]:
            names = list(Project.objects.for_user(user).values_list("name", flat=True))
            close = difflib.get_close_matches(identifier.casefold(), [n.casefold() for n in names], n=1, cutoff=0.8)
            if close:
                near = next(name for name in names if name.casefold() == close[0])
                raise CommandError(
                    f"{user.username} has no project named {identifier!r} but one named {near!r}; give that "
                    f"name, or add --new-project to create {identifier!r}. Nothing was added."
                )
        report = ingest_paths(
            user=user,
            paths=options["paths"],
            project_name=None if project is not None else identifier or None,
            project=project,
            on_file=on_file,
            on_notice=on_notice,
            progress=progress,
            force=options["force"],
        )
        for path, reason in report.failed.items():
            self.stderr.write(f"{path}: {reason}")
        where = f" in project {report.project.name!r}" if report.project else ""
        library_only = f", in the library only {len(report.library_only)}" if report.library_only else ""
        self.stdout.write(
            f"Indexed {len(report.indexed)}, already ready {len(report.skipped)}, failed {len(report.failed)}{where}"
            f"{library_only}."
        )
        if report.failed:
            raise CommandError(f"{len(report.failed)} file(s) failed.", returncode=1)
