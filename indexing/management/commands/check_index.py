"""`manage.py check_index [--fix]`: is the chunk index consistent with the papers?"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexing.health import check_index
from papers.models import Paper


class Command(BaseCommand):
    help = (
        "Check the chunk index: Mongo reachable and bound to this database, required indexes (and the "
        "Atlas vector index), orphan chunks, chunks made from another file than their paper's, ready "
        "papers without chunks, chunks of another embedding model, superseded index versions, papers "
        "left indexing with no live claim, ready papers without a complete pack, stale packs. --fix repairs "
        "what is safe. Exit code 1 when something is (still) wrong."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--fix", action="store_true", help="repair what is safe to repair")
        parser.add_argument(
            "--stuck-after",
            type=float,
            default=None,
            metavar="SECONDS",
            help="a paper indexing unchanged for longer is stuck (default: PDF_PARSE_TIMEOUT_SECONDS + 600; "
            "0 when no worker is running)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        health = check_index(fix=options["fix"], stuck_after=options["stuck_after"])
        for finding in health.findings:
            style = self.style.SUCCESS if finding.fixed else self.style.ERROR
            mark = "fixed" if finding.fixed else "problem"
            self.stdout.write(style(f"[{mark}] {finding.kind}: {finding.summary}"))
            for line in finding.details:
                self.stdout.write(f"    {line}")
        # Pages left out at extraction are a fact about the PDF, not an index problem: noted only.
        for paper in Paper.objects.with_extraction_warning().order_by("pk"):
            self.stdout.write(self.style.WARNING(f"[note] paper {paper.pk} ({paper}): {paper.extraction_warning}"))
        if health.ok:
            fixed = f", {len(health.findings)} problem(s) fixed" if health.findings else ""
            self.stdout.write(
                self.style.SUCCESS(f"Chunk index OK: {health.papers} paper(s), {health.chunks} chunk(s){fixed}.")
            )
            return
        unfixed = sum(not finding.fixed for finding in health.findings)
        hint = "" if options["fix"] else " Run check_index --fix to repair."
        raise CommandError(f"The chunk index has {unfixed} problem(s).{hint}", returncode=1)
