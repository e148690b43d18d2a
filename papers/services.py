"""Library workflows: adding PDFs to a user's library and removing them, correcting their metadata,
listing the library as works and choosing the primary version of a work; a paper's figures."""

from __future__ import annotations

import hashlib
import logging
import re
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Protocol

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import QuerySet, Sum
from django.http import Http404

from annotagent.errors import AnnotagentError
from annotagent.ratelimit import check_user_rate
from papers.figures import FigureImage
from papers.fulltext import TextMatch, find_text
from papers.metadata import MetadataFilter, author_names_of, filter_papers, parse_year
from papers.models import CORRECTABLE_FIELDS, AuthorProfile, Figure, Paper, UserPaper, figure_upload_to, paper_upload_to
from papers.pdfium import count_pages
from papers.storage import delete_files, files_removed_on_error, write_paper_file
from papers.works import Work, group_works, is_work_key

logger = logging.getLogger(__name__)


class UploadTooLargeError(AnnotagentError):
    code = "upload_too_large"


class NotAPdfError(AnnotagentError):
    code = "not_a_pdf"


class LibraryQuotaError(AnnotagentError):
    code = "library_quota_exceeded"


@dataclass(frozen=True)
class AddedPaper:
    """The result of adding a file. `created` is True when this call stored the bytes (for the
    caller's bookkeeping only: never tell a user whether someone else had stored them);
    `already_in_library` is True when the user's library already held the paper."""

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


def format_size(size: int) -> str:
    """*size* bytes for a message: "512 bytes", "98 KB", "2.1 MB", "50 MB".

    Binary units (1 KB = 1,024 bytes, 1 MB = 1,048,576), as the byte settings are written. Under
    1 MB the size is in whole KB, so a small limit never reads as "0 MB".
    """
    if size < 1024:
        return f"{size} bytes"
    kilobytes = round(size / 1024)
    if kilobytes < 1024:
        return f"{kilobytes} KB"
    return f"{size / 1_048_576:.1f}".removesuffix(".0") + " MB"


def check_upload_size(size: int) -> None:
    """Raise UploadTooLargeError when *size* (bytes) is over `UPLOAD_MAX_BYTES`."""
    if size > settings.UPLOAD_MAX_BYTES:
        raise UploadTooLargeError(
            f"The file is {format_size(size)}; uploads may be at most {format_size(settings.UPLOAD_MAX_BYTES)}."
        )


def check_library_quota(user: User, *, adding: int) -> None:
    """Raise LibraryQuotaError when *adding* bytes would take the files of *user*'s library past
    `LIBRARY_QUOTA_BYTES` (0: no quota). A paper counts in full in every library that holds it."""
    quota = settings.LIBRARY_QUOTA_BYTES
    if not quota:
        return
    used = Paper.objects.filter(library_links__user=user).aggregate(total=Sum("file_size"))["total"] or 0
    if used + adding > quota:
        raise LibraryQuotaError(
            f"Your library holds {format_size(used)} of its {format_size(quota)}; this "
            f"{format_size(adding)} file does not fit. Remove papers you no longer need."
        )


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def read_upload(file: Readable, *, size: int | None = None) -> bytes:
    """Read an upload whole, refusing it as soon as it passes `UPLOAD_MAX_BYTES`."""
    if size is not None:
        check_upload_size(size)
    data = file.read(settings.UPLOAD_MAX_BYTES + 1)
    check_pdf_bytes(data)
    return data


def add_paper_to_library(*, user: User, data: bytes, filename: str = "") -> AddedPaper:
    """Store the PDF *data* (deduplicated by SHA-256) and put it in *user*'s library under *filename*.

    The file name belongs to *user*'s library entry alone (`UserPaper.filename`). Two uploads of the
    same new bytes at once, by one user or by two, both succeed with one paper row and one stored
    file: the row is got-or-created on its unique SHA-256 in a savepoint, and only the request
    whose insert won writes the file, after the insert. A new paper row sends `post_save`, on which
    the layers above react (indexing queues it after commit, see `indexing.receivers`).

    Raises UploadTooLargeError or NotAPdfError (see `check_pdf_bytes`), UnreadablePdfError (PDFium
    cannot open it, see `papers.pdfium.count_pages`) or LibraryQuotaError; nothing is stored then.
    """
    check_pdf_bytes(data)
    page_count = count_pages(data, max_pages=settings.PDF_MAX_PAGES)
    digest = hashlib.sha256(data).hexdigest()
    with files_removed_on_error(), transaction.atomic():
        # The row lock keeps a concurrent removal of the last library entry from deleting the paper.
        paper, created = Paper.objects.select_for_update().get_or_create(
            sha256=digest,
            defaults={
                "file": paper_upload_to(Paper(sha256=digest), ""),
                "file_size": len(data),
                "page_count": page_count,
                "uploaded_by": user,
            },
        )
        already_in_library = UserPaper.objects.filter(user=user, paper=paper).exists()
        if not already_in_library:
            check_library_quota(user, adding=paper.file_size or len(data))
        link, _ = UserPaper.objects.get_or_create(user=user, paper=paper, defaults={"filename": filename[:255]})
        if created:
            write_paper_file(paper, data)
            Paper.objects.filter(pk=paper.pk).update(file=paper.file.name)
    paper.library_filename = link.filename  # type: ignore[attr-defined]
    return AddedPaper(paper=paper, created=created, already_in_library=already_in_library)


class Upload(Readable, Protocol):
    """A file as a request carries it (Django's UploadedFile): a name, a size in bytes, bytes."""

    name: str | None
    size: int | None


@dataclass(frozen=True)
class UploadOutcome:
    """One file of a batch upload, by the `filename` it was sent under: added (`paper`;
    `already_in_library`: the uploader's library held it before; `already`: the destination,
    library or project, held it before), or refused (`error`; nothing of the file was stored)."""

    filename: str
    paper: Paper | None = None
    already_in_library: bool = False
    already: bool = False
    error: AnnotagentError | None = None


@dataclass(frozen=True)
class UploadBatch:
    """The outcomes of a batch upload, one per file, in the order the files came."""

    outcomes: list[UploadOutcome]

    @property
    def added(self) -> list[UploadOutcome]:
        return [o for o in self.outcomes if o.paper is not None and not o.already]

    @property
    def already(self) -> list[UploadOutcome]:
        return [o for o in self.outcomes if o.paper is not None and o.already]

    @property
    def refused(self) -> list[UploadOutcome]:
        return [o for o in self.outcomes if o.error is not None]

    def summary(self, *, already: str = "already in your library") -> str:
        """One sentence for all files: "3 added, 1 already in your library, 1 refused: “x.pdf”:
        The file is not a PDF." (a count of none is left out; refusals each name their file and
        reason, a sentence each: "2 refused: “a.pdf”: The file is not a PDF. “b.pdf”: The file is
        empty.")."""
        parts = [f"{len(self.added)} added"] if self.added else []
        if self.already:
            parts.append(f"{len(self.already)} {already}")
        if self.refused:
            reasons = " ".join(f"“{o.filename or 'unnamed file'}”: {o.error.message}" for o in self.refused if o.error)
            parts.append(f"{len(self.refused)} refused: {reasons}")
        return ", ".join(parts) or "No file was sent."


def upload_each(
    *, user: User, files: Iterable[Upload], add: Callable[[bytes, str], tuple[Paper, bool, bool]]
) -> UploadBatch:
    """Upload *files* one by one, each on its own: counted against *user*'s upload rate
    (`check_user_rate`), read and checked (`read_upload`), then `add(data, filename)`, which
    stores it and returns (its paper, whether *user*'s library already held it, whether the
    destination did). A file refused at
    any step (its AnnotagentError) is recorded and the rest go on; what *add* raises must leave
    nothing of that file behind (`add_paper_to_library` and `upload_paper_to_project` do)."""
    outcomes: list[UploadOutcome] = []
    for file in files:
        filename = file.name or ""
        try:
            check_user_rate(user_id=user.pk, action="upload")
            paper, in_library, already = add(read_upload(file, size=file.size), filename)
        except AnnotagentError as exc:
            outcomes.append(UploadOutcome(filename=filename, error=exc))
        else:
            outcomes.append(UploadOutcome(filename, paper, already_in_library=in_library, already=already))
    return UploadBatch(outcomes)


def add_uploads_to_library(*, user: User, files: Iterable[Upload]) -> UploadBatch:
    """Add each of *files* to *user*'s library (`add_paper_to_library`, see `upload_each`): one
    bad file, an exhausted rate or a full quota refuses that file and keeps the others."""

    def add(data: bytes, filename: str) -> tuple[Paper, bool, bool]:
        added = add_paper_to_library(user=user, data=data, filename=filename)
        return added.paper, added.already_in_library, added.already_in_library

    return upload_each(user=user, files=files, add=add)


def get_paper_for_user(user: User, pk: int) -> Paper:
    """A paper in *user*'s library. Raises Http404 for any other paper."""
    paper = Paper.objects.in_library_of(user).filter(pk=pk).first()
    if paper is None:
        raise Http404("No such paper.")
    return paper


class MetadataCorrectionError(AnnotagentError):
    code = "invalid_metadata"


def _checked_correction(name: str, value: object) -> object:
    """The stored form of a corrected *name* = *value*; raises MetadataCorrectionError."""
    if name == "year":
        try:
            return parse_year(value if isinstance(value, (str, int)) or value is None else "x")
        except ValueError as exc:
            raise MetadataCorrectionError(f"The year must be a year such as 2006, not {value!r}.") from exc
    if name == "authors":
        if not isinstance(value, (str, list)) or not all(isinstance(v, str) for v in value):
            raise MetadataCorrectionError("Authors are a list of names, or names separated by commas.")
        names = author_names_of(value)
        if sum(len(n) for n in names) > 1000:
            raise MetadataCorrectionError("The author list is too long.")
        return names
    if not isinstance(value, str):
        raise MetadataCorrectionError(f"The {name} must be text.")
    limit = {"title": 500, "venue": 300, "doi": 255}[name]
    value = " ".join(value.split())
    if len(value) > limit:
        raise MetadataCorrectionError(f"The {name} may be at most {limit} characters.")
    if name == "doi":
        value = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", "", value, flags=re.IGNORECASE)
        if value and not re.fullmatch(r"10\.\d{4,9}/\S+", value):
            raise MetadataCorrectionError(f"{value!r} is not a DOI (10.1145/1234.5678).")
    return value


def _is_blank(value: object) -> bool:
    return value is None or (isinstance(value, str | list) and not "".join(map(str, value)).strip())


@transaction.atomic
def correct_paper_metadata(*, user: User, paper: Paper, changes: dict[str, object], reset: Iterable[str] = ()) -> Paper:
    """Record *user*'s corrections of *paper*'s metadata on their library entry and return the
    paper as they now see it (`Paper.cited`). *changes* maps fields of CORRECTABLE_FIELDS to new
    values ("authors" a list or a comma-separated string, "year" an int, a numeric string or
    None); fields in *reset*, and fields given a blank value (None, "", an empty list), go back to
    what the PDF says: a blank never replaces what the paper prints. Nobody else's view changes.

    Raises Http404 when the paper is not in *user*'s library, MetadataCorrectionError for an
    unknown field or a bad value.
    """
    link = UserPaper.objects.select_for_update().filter(user=user, paper=paper).first()
    if link is None:
        raise Http404("No such paper.")
    unknown = (set(changes) | set(reset)) - set(CORRECTABLE_FIELDS)
    if unknown:
        raise MetadataCorrectionError(f"These fields cannot be corrected: {', '.join(sorted(unknown))}.")
    corrections = dict(link.corrections)
    blank = {name for name, value in changes.items() if _is_blank(value)}
    for name, value in changes.items():
        if name not in blank:
            corrections[name] = _checked_correction(name, value)
    for name in {*reset, *blank}:
        corrections.pop(name, None)
    link.corrections = corrections
    link.save(update_fields=["corrections"])
    return get_paper_for_user(user, paper.pk)


def set_author_names(*, user: User, names: Sequence[str] | str) -> AuthorProfile:
    """Set the names *user* publishes under ("my papers"); an empty list clears them."""
    cleaned = author_names_of(names)
    if len(cleaned) > 20 or any(len(name) > 200 for name in cleaned):
        raise MetadataCorrectionError("Give at most 20 names of at most 200 characters each.")
    profile, _ = AuthorProfile.objects.update_or_create(user=user, defaults={"names": cleaned})
    return profile


def author_names(user: User) -> list[str]:
    """The names *user* publishes under ([] when they set none)."""
    profile = AuthorProfile.objects.filter(user=user).first()
    return list(profile.names) if profile else []


class NoAuthorNamesError(AnnotagentError):
    code = "no_author_names"


LIBRARY_SORTS = {"added": "Recently added", "year": "Year (newest first)", "title": "Title (A-Z)"}


@dataclass(frozen=True)
class LibraryListing:
    """A page of *user*'s library (`library_papers`): the `papers`; `text_matches`, paper id ->
    where that paper's full text contains the search text (for every listed paper whose text does,
    whether or not its metadata matched too); `full_text_error`, the error that kept the full text
    from being searched (None when it was searched or no text was asked for): the papers are then
    those whose metadata matched, and the caller says so."""

    papers: list[Paper]
    text_matches: dict[int, TextMatch] = field(default_factory=dict)
    full_text_error: AnnotagentError | None = None


def library_papers(
    *,
    user: User,
    criteria: MetadataFilter,
    mine: bool = False,
    sort: str = "added",
    within: QuerySet[Paper] | None = None,
    full_text: bool = True,
) -> LibraryListing:
    """*user*'s library filtered by *criteria* over the metadata they see (their corrections
    included); with *mine*, only papers that list one of their author names; with *within*, only
    papers also in that queryset (a project's papers, say: the caller checked that *user* may see
    it). *sort* (a key of LIBRARY_SORTS): "added", newest first; "year", newest first with undated
    papers last; "title", the title they see, case-insensitively. Ties keep the "added" order.

    The search text (`criteria.text`) matches the title, authors or venue, and, with *full_text*,
    the papers' full text (`papers.fulltext.find_text`: only these papers' text is read). A
    full-text search that fails (the chunk index is down) is reported in `full_text_error`, logged,
    and leaves the metadata matches.

    Raises NoAuthorNamesError for *mine* when they have set no author names.
    """
    return _admitted(
        _library(user), user=user, criteria=criteria, mine=mine, sort=sort, within=within, full_text=full_text
    )


def _library(user: User) -> list[Paper]:
    """*user*'s library, newest entry first."""
    return list(Paper.objects.in_library_of(user).order_by("-library_links__added_at", "pk"))


def _admitted(
    papers: list[Paper],
    *,
    user: User,
    criteria: MetadataFilter,
    mine: bool,
    sort: str,
    within: QuerySet[Paper] | None = None,
    full_text: bool = True,
) -> LibraryListing:
    """`library_papers` over *papers*, *user*'s library newest first."""
    if mine:
        names = author_names(user)
        if not names:
            raise NoAuthorNamesError(
                "Set the names you publish under first: on the library's author names page "
                "(/papers/author-names/), or with "
                "`manage.py papers --user NAME --set-author-names 'A. Smith, Alice Smith'`."
            )
        criteria = replace(criteria, authors=(*criteria.authors, *names))
    if within is not None:
        inside = set(within.values_list("pk", flat=True))
        papers = [paper for paper in papers if paper.pk in inside]
    text = criteria.text.strip()
    candidates = filter_papers(papers, replace(criteria, text=""))
    matches: dict[int, TextMatch] = {}
    error: AnnotagentError | None = None
    if text and full_text:
        try:
            matches = find_text(candidates, text)
        except AnnotagentError as exc:
            logger.warning("Full-text search of %s's library failed: %s", user, exc.message)
            error = exc
    admitted = [p for p in candidates if p.pk in matches or criteria.admits(p)] if text else candidates
    # Sorted here, not in SQL: the year and title a user sees may be their corrections (JSON).
    if sort == "year":
        admitted.sort(key=lambda paper: -(paper.cited.year or 0))
    elif sort == "title":
        admitted.sort(key=lambda paper: paper.display_title.casefold())
    return LibraryListing(papers=admitted, text_matches=matches, full_text_error=error)


@dataclass(frozen=True)
class LibraryWorks:
    """`library_works`: the `works`, and the `listing` of the library's files that passed the
    filters (their full-text matches, and any full-text failure: see `LibraryListing`)."""

    works: list[Work]
    listing: LibraryListing

    def text_match(self, work: Work) -> tuple[Paper, TextMatch] | None:
        """The file of *work* whose full text matched, with where: the primary first, then the
        other versions and the supplements; None when none did."""
        return next(((file, match) for file in work.files if (match := self.listing.text_matches.get(file.pk))), None)


def library_works(
    *,
    user: User,
    criteria: MetadataFilter,
    mine: bool = False,
    sort: str = "added",
    within: QuerySet[Paper] | None = None,
    full_text: bool = True,
) -> LibraryWorks:
    """*user*'s library as works (`papers.works.group_works`): each work with its primary version,
    its other versions and its supplements. A work is listed when any of its files passes the
    filters (see `library_papers`: *within* and the full text too), whole, in the place of its
    first such file in *sort* order; its primary is decided over the whole library, never by the
    filters.

    Raises NoAuthorNamesError for *mine* when they have set no author names.
    """
    papers = _library(user)
    listing = _admitted(papers, user=user, criteria=criteria, mine=mine, sort=sort, within=within, full_text=full_text)
    position = {paper.pk: n for n, paper in enumerate(listing.papers)}
    works = [work for work in group_works(papers) if any(paper.pk in position for paper in work.files)]
    works.sort(key=lambda work: min(position[p.pk] for p in work.files if p.pk in position))
    return LibraryWorks(works=works, listing=listing)


def get_work_for_user(user: User, pk: int) -> Work:
    """The work that paper *pk* of *user*'s library belongs to, over *user*'s library. Raises
    Http404 when the paper is not in their library."""
    paper = get_paper_for_user(user, pk)
    files = Paper.objects.in_library_of(user).filter(doc_key=paper.doc_key) if is_work_key(paper.doc_key) else [paper]
    return next(work for work in group_works(files) if any(file.pk == paper.pk for file in work.files))


class NotAVersionError(AnnotagentError):
    code = "supplement_not_a_version"


@transaction.atomic
def choose_primary_version(*, user: User, paper: Paper) -> Work:
    """Make *paper* the primary version of its work in *user*'s library and return the work: where
    *user* added versions of it to a project, retrieval reads this one and not the others
    (`papers.works`). Only *user*'s choice changes; other libraries keep theirs.

    Raises Http404 when the paper is not in *user*'s library, NotAVersionError for a supplement
    (it is part of its work, always searched, never a version).
    """
    if not UserPaper.objects.filter(user=user, paper=paper).exists():
        raise Http404("No such paper.")
    if paper.is_supplement:
        raise NotAVersionError(
            f"“{paper.display_title}” is a supplement: it is always searched with its work and is not a version of it."
        )
    entries = UserPaper.objects.filter(user=user, paper=paper)
    if is_work_key(paper.doc_key):
        entries = UserPaper.objects.filter(user=user, paper__doc_key=paper.doc_key, paper__is_supplement=False)
    # Locked, so two choices at once leave one chosen entry: the later one.
    versions = list(entries.select_for_update(of=("self",)).values_list("pk", "paper_id"))
    UserPaper.objects.filter(pk__in=[pk for pk, paper_id in versions if paper_id != paper.pk]).update(
        chosen_primary=False
    )
    UserPaper.objects.filter(user=user, paper=paper).update(chosen_primary=True)
    return get_work_for_user(user, paper.pk)


def replace_figures(*, paper: Paper, figures: Sequence[FigureImage]) -> list[Figure]:
    """Make *figures* (in the paper's order) *paper*'s figures, replacing the rows and image files
    it had; returns the new rows. A label given twice keeps its first figure; figures past
    `FIGURES_MAX_PER_PAPER` are left out.

    The new images are written first under new names, then the rows are swapped in one
    transaction; the old images are deleted once it commits, the new ones at once if it fails.
    Raises Paper.DoesNotExist when the paper row is gone (nothing is kept then).
    """
    kept: dict[str, FigureImage] = {}
    for figure in figures:
        kept.setdefault(figure.label, figure)
    chosen = list(kept.values())[: settings.FIGURES_MAX_PER_PAPER]
    storage = Figure.image.field.storage
    token = uuid.uuid4().hex[:12]
    written: list[str] = []
    try:
        rows = []
        for position, figure in enumerate(chosen):
            row = Figure(
                paper=paper,
                kind=figure.kind,
                label=figure.label[:40],
                page_number=figure.page,
                caption=figure.caption,
                bbox=[round(value, 2) for value in figure.bbox],
                width=figure.width,
                height=figure.height,
                position=position,
            )
            name = figure_upload_to(row, f"{token}-{position:03d}.png")
            row.image.name = storage.save(name, ContentFile(figure.png))
            written.append(row.image.name)
            rows.append(row)
        with transaction.atomic():
            # The row lock keeps a concurrent deletion of the paper from leaving figures behind.
            Paper.objects.select_for_update().get(pk=paper.pk)
            old = list(Figure.objects.filter(paper=paper).values_list("image", flat=True))
            Figure.objects.filter(paper=paper).delete()
            created = Figure.objects.bulk_create(rows)
            transaction.on_commit(partial(delete_files, old))
    except BaseException:
        delete_files(written)
        raise
    return created


def get_figure_of_paper(paper: Paper, pk: int) -> Figure:
    """Figure *pk* of *paper* (whose access the caller checked). Raises Http404 for any other."""
    figure = Figure.objects.filter(paper=paper, pk=pk).first()
    if figure is None:
        raise Http404("No such figure.")
    return figure
