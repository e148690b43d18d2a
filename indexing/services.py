"""Indexing workflow: PDF -> pages -> chunks -> blurbs -> embeddings -> `paperchunks`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotagent.errors import AnnotagentError
from indexing import store
from indexing.blurbs import make_blurbs
from indexing.chunking import chunk_pages, dehyphenate
from indexing.embeddings import get_embedder
from indexing.pdf import PdfError, extract_metadata, extract_text
from papers.models import Paper

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IndexProgress:
    """A progress report: `stage` is one of parsing, chunking, embedding, writing, done, failed."""

    paper_id: int
    stage: str
    pages: int = 0
    chunks: int = 0
    done_chunks: int = 0
    message: str = ""


ProgressCallback = Callable[[IndexProgress], None]


def _set_status(paper: Paper, status: str, error: str = "") -> None:
    paper.index_status = status
    paper.index_error = error
    Paper.objects.filter(pk=paper.pk).update(index_status=status, index_error=error, updated_at=timezone.now())
    from indexing.notifications import notify_paper_status

    notify_paper_status(paper)


def index_paper(*, paper_id: int, progress: ProgressCallback | None = None) -> Paper:
    """(Re)build the chunks of one paper and make them the ones retrieval reads.

    New chunks are written under `index_version + 1`; the paper row switches to that version in one
    update only once every chunk is stored, and the old version is deleted after. A question asked
    meanwhile reads the old chunks. On failure the paper ends `failed` with a readable reason, the
    partial new chunks are removed, and the error is raised again (PdfError is permanent; other
    AnnotagentErrors, such as an unreachable chunk index, are worth retrying).
    """
    report = progress or (lambda _: None)
    paper = Paper.objects.get(pk=paper_id)
    _set_status(paper, Paper.IndexStatus.INDEXING)
    new_version = paper.index_version + 1
    try:
        report(IndexProgress(paper.pk, "parsing"))
        text = extract_text(paper.file.path)
        metadata = extract_metadata(text)
        for field in ("title", "authors", "year", "abstract", "doi"):
            if not getattr(paper, field) and getattr(metadata, field):
                setattr(paper, field, getattr(metadata, field))
        paper.page_count = len(text.pages)
        paper.save(update_fields=["title", "authors", "year", "abstract", "doi", "page_count", "updated_at"])

        chunks = chunk_pages(
            text.pages, chunk_tokens=settings.CHUNK_TOKENS, overlap_tokens=settings.CHUNK_OVERLAP_TOKENS
        )
        report(IndexProgress(paper.pk, "chunking", pages=len(text.pages), chunks=len(chunks)))
        blurbs = make_blurbs(paper, chunks, text.pages)

        embedder = get_embedder()
        records: list[store.ChunkRecord] = []
        batch = settings.EMBED_BATCH_SIZE
        for start in range(0, len(chunks), batch):
            window = range(start, min(start + batch, len(chunks)))
            vectors = embedder.embed([dehyphenate(f"{blurbs[i]}\n{chunks[i].text}") for i in window])
            records.extend(
                store.ChunkRecord(
                    paper_id=paper.pk,
                    chunk_index=i,
                    page_number=chunks[i].page_number,
                    text=chunks[i].text,
                    contextual_blurb=blurbs[i],
                    embedding=vectors[row],
                    embedding_model=embedder.model_name,
                    index_version=new_version,
                )
                for row, i in enumerate(window)
            )
            report(
                IndexProgress(
                    paper.pk, "embedding", pages=len(text.pages), chunks=len(chunks), done_chunks=len(records)
                )
            )
        report(IndexProgress(paper.pk, "writing", pages=len(text.pages), chunks=len(chunks), done_chunks=len(records)))
        store.delete_chunks_of_version(paper.pk, new_version)
        store.write_chunks(records)
        with transaction.atomic():
            Paper.objects.filter(pk=paper.pk).update(
                index_status=Paper.IndexStatus.READY,
                index_error="",
                index_version=new_version,
                embedding_model=embedder.model_name,
                chunk_count=len(records),
                indexed_at=timezone.now(),
                updated_at=timezone.now(),
            )
        store.delete_chunks(paper.pk, keep_version=new_version)
    except AnnotagentError as exc:
        _fail(paper, new_version, exc.message)
        report(IndexProgress(paper.pk, "failed", message=exc.message))
        raise
    except Exception as exc:
        logger.exception("Indexing paper %s failed", paper.pk)
        _fail(paper, new_version, f"Indexing failed unexpectedly ({type(exc).__name__}).")
        raise
    paper.refresh_from_db()
    from indexing.notifications import notify_paper_status

    notify_paper_status(paper)
    report(IndexProgress(paper.pk, "done", pages=paper.page_count, chunks=paper.chunk_count))
    return paper


def _fail(paper: Paper, new_version: int, reason: str) -> None:
    try:
        store.delete_chunks_of_version(paper.pk, new_version)
    except store.ChunkStoreError:
        logger.warning("Could not remove partial chunks of paper %s (version %s)", paper.pk, new_version)
    _set_status(paper, Paper.IndexStatus.FAILED, reason)


def is_permanent_failure(exc: BaseException) -> bool:
    """Whether retrying cannot help: the PDF itself is the problem."""
    return isinstance(exc, PdfError)
