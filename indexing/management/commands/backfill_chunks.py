"""`manage.py backfill_chunks`: index the papers that lack a complete chunk set, resumably, and
pack the indexed papers that lack a pack (made from their chunks, nothing embedded)."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.test.utils import override_settings
from tqdm import tqdm

from annotagent.errors import AnnotagentError
from indexing import store
from indexing.embeddings import configured_model_name
from indexing.services import (
    IndexProgress,
    index_paper,
    pack_papers,
    papers_needing_index,
    papers_needing_pack,
    select_papers,
)


class Command(BaseCommand):
    help = (
        "Index the papers that need it for the configured embedding model: never indexed, failed, "
        "interrupted, indexed with another model, or (unless --missing-only) ready with chunks missing "
        "from the chunk index. Finished papers are skipped, so an interrupted run resumes where it "
        "stopped; so are papers that failed because of the file itself (encrypted, no text layer, "
        "garbled), unless --retry-failed (after installing OCR, say). Indexed papers without a complete "
        "pack (indexed before packs were stored, or packed by another tokenizer version) are packed from "
        "their chunks first, with nothing embedded. Exit code 1 if any paper failed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--paper", type=int, action="append", default=[], help="paper id (repeatable)")
        parser.add_argument("--project", type=int, help="the papers of this project id")
        parser.add_argument(
            "--missing-only",
            action="store_true",
            help="trust the paper rows: index papers not ready for the model, without counting stored chunks",
        )
        parser.add_argument(
            "--model",
            help="embedding model to build for (default: the configured one); the app searches only the "
            "configured model's chunks, so set OPENAI_EMBED_MODEL / LOCAL_EMBED_MODEL to match",
        )
        parser.add_argument("--batch-size", type=int, help="texts per embedding request (default EMBED_BATCH_SIZE)")
        parser.add_argument("--dry-run", action="store_true", help="list the papers that would be indexed")
        parser.add_argument(
            "--retry-failed",
            action="store_true",
            help="also try papers that failed because of the file itself (encrypted, no text layer, garbled)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        overrides: dict[str, Any] = {}
        if options["batch_size"] is not None:
            if options["batch_size"] < 1:
                raise CommandError("--batch-size must be at least 1.")
            overrides["EMBED_BATCH_SIZE"] = options["batch_size"]
        if options["model"] and options["model"] != configured_model_name():
            # For this run only; the rows record the model, so the app never mixes these chunks in.
            setting = "OPENAI_EMBED_MODEL" if settings.EMBEDDING_BACKEND == "openai" else "LOCAL_EMBED_MODEL"
            overrides[setting] = options["model"]
            self.stderr.write(
                self.style.WARNING(
                    f"Building for {options['model']}; the app searches these chunks once {setting} names it."
                )
            )
        with override_settings(**overrides):
            self.backfill(options)

    def backfill(self, options: dict[str, Any]) -> None:
        model = configured_model_name()
        papers = select_papers(paper_ids=options["paper"], project_id=options["project"])
        try:
            to_index, done = papers_needing_index(papers, check_store=not options["missing_only"])
            to_pack = papers_needing_pack(done)
        except store.ChunkStoreError as exc:
            raise CommandError(exc.message) from exc
        if not options["retry_failed"]:
            unreadable = [paper for paper in to_index if paper.index_error_code]
            to_index = [paper for paper in to_index if not paper.index_error_code]
            for paper in unreadable:
                self.stdout.write(
                    f"  skipped paper {paper.pk}: {paper.display_title}: {paper.index_error} "
                    "(--retry-failed to try again)"
                )
        self.stdout.write(f"{len(to_index)} paper(s) to index for {model}, {len(done)} already done.")
        if to_pack:
            self.stdout.write(f"{len(to_pack)} indexed paper(s) to pack from their chunks.")
        if options["dry_run"]:
            for paper in to_pack:
                self.stdout.write(f"  would pack paper {paper.pk}: {paper.display_title}")
            for paper in to_index:
                self.stdout.write(f"  would index paper {paper.pk}: {paper.display_title} [{paper.index_status}]")
            return
        if to_pack:
            # Cheap (no embedding) and what every cold process would otherwise redo: before indexing.
            try:
                packed = pack_papers(papers=to_pack)
            except store.ChunkStoreError as exc:
                raise CommandError(exc.message) from exc
            self.stdout.write(f"Packed {len(packed)} paper(s).")

        failed: dict[int, str] = {}
        indexed = 0
        totals = {"pages": 0, "chunks": 0}
        started = time.monotonic()
        bar = tqdm(total=len(to_index), unit="paper", file=self.stderr, dynamic_ncols=True, disable=None)

        def progress(event: IndexProgress) -> None:
            if event.stage == "embedding":
                elapsed = max(time.monotonic() - started, 1e-6)
                rate = (totals["chunks"] + event.done_chunks) / elapsed
                bar.set_postfix_str(
                    f"paper {event.paper_id} {event.done_chunks}/{event.chunks} chunks, "
                    f"{totals['pages']} pages, {rate:.1f} chunks/s",
                    refresh=True,
                )

        try:
            for paper in to_index:
                bar.set_description(f"paper {paper.pk}")
                try:
                    result = index_paper(paper_id=paper.pk, progress=progress)
                except AnnotagentError as exc:
                    failed[paper.pk] = exc.message
                except Exception as exc:  # one bad paper must not stop the rest
                    failed[paper.pk] = f"{type(exc).__name__}: {exc}"
                else:
                    indexed += 1
                    totals["pages"] += result.page_count
                    totals["chunks"] += result.chunk_count
                bar.update(1)
        except KeyboardInterrupt:
            bar.close()
            self.stderr.write(
                f"Interrupted after {indexed} paper(s); the paper in flight is left pending. "
                "Run the command again to go on."
            )
            raise
        bar.close()

        self.stdout.write(
            f"Done {indexed}, skipped {len(done)}, failed {len(failed)} "
            f"({totals['pages']} pages, {totals['chunks']} chunks in {time.monotonic() - started:.1f} s)."
        )
        for paper_id, reason in failed.items():
            self.stderr.write(f"  paper {paper_id}: {reason}")
        if failed:
            raise CommandError(f"{len(failed)} paper(s) failed.", returncode=1)
