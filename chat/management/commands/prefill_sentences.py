"""`manage.py prefill_sentences [--paper ID ...] [--project ID]`: store the sentence vectors that
ready papers lack (after an upgrade that changes how passages split into sentences)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotagent.errors import AnnotagentError
from chat.prefill import prefill_papers
from indexing.services import select_papers
from papers.models import Paper
from projects.models import Project


class Command(BaseCommand):
    help = (
        "Embed and store the candidate sentences of ready papers that the chunk index lacks, as "
        "indexing does. Run it after an upgrade that changes how passages split into sentences: "
        "answers then re-rank with every sentence's vector again. Papers not ready are skipped; "
        "sentences already stored are not embedded again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--paper", type=int, action="append", default=[], help="paper id (repeatable)")
        parser.add_argument("--project", type=int, help="the papers of this project id")

    def handle(self, *args: Any, **options: Any) -> None:
        papers = select_papers(paper_ids=options["paper"], project_id=options["project"])
        missing = sorted(
            set(options["paper"]) - set(Paper.objects.filter(pk__in=options["paper"]).values_list("pk", flat=True))
        )
        if missing:
            raise CommandError(f"No paper with id {', '.join(map(str, missing))}.")
        if options["project"] is not None and not Project.objects.filter(pk=options["project"]).exists():
            raise CommandError(f"No project with id {options['project']}.")
        try:
            embedded = prefill_papers(papers=papers)
        except AnnotagentError as exc:
            raise CommandError(exc.message) from exc
        for paper_id, count in embedded.items():
            self.stdout.write(f"  paper {paper_id}: {count} sentence(s) embedded")
        self.stdout.write(
            f"Done {len(embedded)} ready paper(s): {sum(embedded.values())} sentence(s) embedded, "
            "the rest already stored."
        )
