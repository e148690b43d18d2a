"""`manage.py demo [--papers DIR]`: a demo user and a demo project built from a folder of PDFs."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from projects.services import ensure_default_project


def has_pdfs(folder: Path) -> bool:
    return folder.is_dir() and any(p.suffix.lower() == ".pdf" for p in folder.rglob("*"))


def demo_papers_dir(configured: Path | None, *, defaults: Sequence[Path]) -> Path:
    """The folder the demo reads: *configured* when set (even if empty); else the first of
    *defaults* that holds a PDF; else the last of *defaults* (the sample shipped with the code)."""
    if configured is not None:
        return configured
    return next((folder for folder in defaults if has_pdfs(folder)), defaults[-1])


class Command(BaseCommand):
    help = (
        "Create the demo user (DEMO_USERNAME / DEMO_PASSWORD) and a project of the PDFs in --papers "
        "(default DEMO_PAPERS_DIR, else ../shared/papers/consensus, else the sample in sample_papers/), "
        "indexed. Safe to run again: ready papers are skipped. A folder without PDFs leaves the demo "
        "user with an empty library (upload PDFs in the web UI)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--papers", type=Path, default=None, help="folder of PDFs")

    def handle(self, *args: Any, **options: Any) -> None:
        configured = options["papers"] or settings.DEMO_PAPERS_DIR
        folder = demo_papers_dir(configured, defaults=settings.DEMO_DEFAULT_PAPERS_DIRS).expanduser().resolve()
        users = get_user_model().objects
        user = users.filter(username=settings.DEMO_USERNAME).first()
        if user is None:
            user = users.create_user(settings.DEMO_USERNAME, password=settings.DEMO_PASSWORD)
        ensure_default_project(user)
        sign_in = f"Sign in as {settings.DEMO_USERNAME!r} with password {settings.DEMO_PASSWORD!r}"
        if not has_pdfs(folder):
            missing = "" if folder.is_dir() else " (no such folder: check the path)"
            self.stderr.write(
                f"No PDFs found in {folder}{missing}: the demo starts with an empty library. Upload PDFs in "
                "the web UI, or point DEMO_PAPERS_DIR (or --papers) at any folder of PDFs."
            )
            self.stdout.write(self.style.SUCCESS(f"\n{sign_in}."))
            return
        project = f"Demo: {folder.name}"
        self.stdout.write(f"Building the demo project {project!r} from {folder} ...")
        try:
            call_command("ingest_papers", str(folder), user=user.username, project=project, stdout=self.stdout)
        except CommandError as exc:
            self.stderr.write(f"Some files were skipped: {exc}")
        self.stdout.write(self.style.SUCCESS(f"\n{sign_in} and open the project {project!r}."))
