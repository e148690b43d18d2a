"""`manage.py demo [--papers DIR]`: a demo user and a demo project built from a folder of PDFs."""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = (
        "Create the demo user (DEMO_USERNAME / DEMO_PASSWORD) and a project of the PDFs in --papers "
        "(default DEMO_PAPERS_DIR), indexed. Safe to run again: ready papers are skipped."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--papers", type=Path, default=None, help="folder of PDFs")

    def handle(self, *args: Any, **options: Any) -> None:
        folder: Path = (options["papers"] or settings.DEMO_PAPERS_DIR).expanduser().resolve()
        if not folder.is_dir() or not any(p.suffix.lower() == ".pdf" for p in folder.rglob("*")):
            raise CommandError(f"No PDFs found in {folder}. Point DEMO_PAPERS_DIR (or --papers) at any folder of PDFs.")
        users = get_user_model().objects
        user = users.filter(username=settings.DEMO_USERNAME).first()
        if user is None:
            user = users.create_user(settings.DEMO_USERNAME, password=settings.DEMO_PASSWORD)
        project = f"Demo: {folder.name}"
        self.stdout.write(f"Building the demo project {project!r} from {folder} ...")
        try:
            call_command("ingest_papers", str(folder), user=user.username, project=project, stdout=self.stdout)
        except CommandError as exc:
            self.stderr.write(f"Some files were skipped: {exc}")
        self.stdout.write(
            self.style.SUCCESS(
                f"\nSign in as {settings.DEMO_USERNAME!r} with password {settings.DEMO_PASSWORD!r} "
                f"and open the project {project!r}."
            )
        )
