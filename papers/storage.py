"""Stored PDF files: one per paper row, written only once that row has won its SHA-256, removed
again when the transaction that wrote it fails, and found when no paper holds them.

Files live in the default storage under `papers/<2 hex>/<sha256>.pdf` (see
`papers.models.paper_upload_to`), figure images under `figures/<2 hex>/<sha256>/` (see
`papers.models.figure_upload_to`); no name carries a user's file name.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.core.files.base import ContentFile
from django.core.files.storage import Storage
from django.utils import timezone

from papers.models import Figure, Paper, paper_upload_to

PAPERS_FOLDER = "papers"
FIGURES_FOLDER = "figures"
# A file younger than this may belong to an upload whose transaction has not committed yet.
ORPHAN_GRACE = timedelta(minutes=10)

_written: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("written_paper_files", default=None)


def paper_storage() -> Storage:
    return Paper.file.field.storage


def write_paper_file(paper: Paper, data: bytes) -> None:
    """Store *data* as *paper*'s file under its content-addressed name and set `paper.file`.

    Call it only after *paper*'s row was inserted in the current transaction (the unique SHA-256
    then keeps every other writer of the same bytes waiting, so there is one file). A file already
    at that name is a leftover of a write whose row was rolled back, and is replaced. The name is
    recorded for the enclosing `files_removed_on_error` block.
    """
    storage = paper_storage()
    name = paper_upload_to(paper, "")
    if storage.exists(name):
        storage.delete(name)
    paper.file.name = storage.save(name, ContentFile(data))
    written = _written.get()
    if written is not None:
        written.append(paper.file.name)


@contextmanager
def files_removed_on_error() -> Iterator[None]:
    """Delete the files `write_paper_file` wrote inside the block when the block raises.

    Wrap a `transaction.atomic()` block in it: a rollback does not unwrite files. A nested block
    that ends well hands its files to the enclosing block, whose failure still removes them.
    """
    parent = _written.get()
    mine: list[str] = []
    token = _written.set(mine)
    try:
        yield
    except BaseException:
        for name in mine:
            paper_storage().delete(name)
        raise
    finally:
        _written.reset(token)
    if parent is not None:
        parent.extend(mine)


def orphan_files(*, grace: timedelta = ORPHAN_GRACE) -> list[str]:
    """Storage names of files under `papers/` that no paper row holds and under `figures/` that no
    figure row holds, sorted; files modified in the last *grace* are left out (their upload or
    indexing may still be committing)."""
    storage = paper_storage()
    held = set(Paper.objects.exclude(file="").values_list("file", flat=True))
    held |= set(Figure.objects.values_list("image", flat=True))
    cutoff = timezone.now() - grace
    names = [*_walk(storage, PAPERS_FOLDER), *_walk(storage, FIGURES_FOLDER)]
    return sorted(name for name in names if name not in held and storage.get_modified_time(name) <= cutoff)


def paper_file_names(paper: Paper) -> list[str]:
    """The storage names of every file *paper* holds: its PDF and its figure images (to delete
    once its row is gone)."""
    return [paper.file.name or "", *Figure.objects.filter(paper=paper).values_list("image", flat=True)]


def delete_files(names: list[str]) -> None:
    """Delete the stored files *names* (storage names); missing ones are skipped."""
    storage = paper_storage()
    for name in names:
        if name:
            storage.delete(name)


def _walk(storage: Storage, folder: str) -> Iterator[str]:
    try:
        folders, files = storage.listdir(folder)
    except FileNotFoundError:
        return
    for name in files:
        yield f"{folder}/{name}"
    for sub in folders:
        yield from _walk(storage, f"{folder}/{sub}")
