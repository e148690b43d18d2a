"""Library workflows: adding PDFs to a user's library and removing them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import partial
from typing import IO

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.db import transaction
from django.http import Http404

from annotagent.errors import AnnotagentError
from indexing.tasks import index_paper
from papers.models import Paper, UserPaper


class UploadTooLargeError(AnnotagentError):
    code = "upload_too_large"


class NotAPdfError(AnnotagentError):
    code = "not_a_pdf"


@dataclass(frozen=True)
class AddedPaper:
    """The result of adding a file: `created` is False when the same bytes were already stored;
    `already_in_library` is True when the user's library already held it."""

    paper: Paper
    created: bool
    already_in_library: bool


def check_pdf_bytes(data: bytes) -> None:
    """Refuse oversized or non-PDF uploads before anything is stored.

    Raises UploadTooLargeError over `UPLOAD_MAX_BYTES`, NotAPdfError when the bytes do not start
    with the PDF magic `%PDF-` (the file name is never trusted).
    """
    check_upload_size(len(data))
    if not data:
        raise NotAPdfError("The file is empty.")
    if not data[:1024].lstrip(b"\x00\t\r\n ").startswith(b"%PDF-"):
        raise NotAPdfError("The file is not a PDF.")


def check_upload_size(size: int) -> None:
    """Raise UploadTooLargeError when *size* (bytes) is over `UPLOAD_MAX_BYTES`."""
    if size > settings.UPLOAD_MAX_BYTES:
        raise UploadTooLargeError(
            f"The file is {size / 1_048_576:.1f} MB; uploads may be at most "
            f"{settings.UPLOAD_MAX_BYTES / 1_048_576:.0f} MB."
        )


def read_upload(file: IO[bytes], *, size: int | None = None) -> bytes:
    """Read an upload whole, refusing it as soon as it passes `UPLOAD_MAX_BYTES`."""
    if size is not None:
        check_upload_size(size)
    data = file.read(settings.UPLOAD_MAX_BYTES + 1)
    check_pdf_bytes(data)
    return data


@transaction.atomic
def add_paper_to_library(*, user: User, data: bytes, filename: str = "", queue_indexing: bool = True) -> AddedPaper:
    """Store the PDF *data* (deduplicated by SHA-256) and put it in *user*'s library.

    A new paper is queued for indexing after the transaction commits, unless *queue_indexing* is
    False (a caller that indexes it right away, such as `ingest_papers`). Raises UploadTooLargeError or
    NotAPdfError (see `check_pdf_bytes`); nothing is stored then.
    """
    check_pdf_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    paper = Paper.objects.select_for_update().filter(sha256=digest).first()
    created = paper is None
    if paper is None:
        paper = Paper(sha256=digest, original_filename=filename[:255], uploaded_by=user)
        paper.file.save(f"{digest}.pdf", ContentFile(data), save=False)
        paper.save()
        if queue_indexing:
            transaction.on_commit(partial(index_paper.enqueue, paper_id=paper.pk))
    _, link_created = UserPaper.objects.get_or_create(user=user, paper=paper)
    return AddedPaper(paper=paper, created=created, already_in_library=not link_created)


def get_paper_for_user(user: User, pk: int) -> Paper:
    """A paper in *user*'s library. Raises Http404 for any other paper."""
    paper = Paper.objects.in_library_of(user).filter(pk=pk).first()
    if paper is None:
        raise Http404("No such paper.")
    return paper
