"""Papers and the user's library.

A `Paper` is one distinct PDF file (deduplicated by the SHA-256 of its bytes), shared by every
library that holds it; its chunks live in the MongoDB collection `paperchunks`, keyed by `Paper.pk`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.db.models import OuterRef, Q, Subquery

from annotagent.querysets import BulkCreateSignalQuerySet
from papers.metadata import author_names_of
from papers.signals import papers_bulk_created
from papers.works import supplement_label

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def paper_upload_to(paper: Paper, filename: str) -> str:
    """Stored files are named by content hash, never by the uploader's file name."""
    return f"papers/{paper.sha256[:2]}/{paper.sha256}.pdf"


class PaperQuerySet(BulkCreateSignalQuerySet["Paper"]):
    bulk_created = papers_bulk_created

    def in_library_of(self, user: User) -> PaperQuerySet:
        """Papers in *user*'s library, each with the file name *user* gave it (see `named_for`)."""
        return self.filter(library_links__user=user).named_for(user)

    def named_for(self, user: User) -> PaperQuerySet:
        """Annotate `library_filename`: the file name under which *user* added each paper ("" when
        the paper is not in their library), and `library_corrections`: *user*'s corrections of its
        metadata (`UserPaper.corrections`, None when not in their library). Both are private to the
        library entry they came with, so `display_title` and `cited` show the viewer's own. Also
        `library_added_at` and `library_chosen_primary`, which `papers.works.group_works` reads to
        pick the primary version of a work."""
        return self.named_by(UserPaper.objects.filter(user=user, paper=OuterRef("pk")))

    def named_by(self, entries: models.QuerySet[UserPaper]) -> PaperQuerySet:
        """Annotate `library_filename`, `library_corrections`, `library_added_at` and
        `library_chosen_primary` (see `named_for`) from the first of *entries*: library entries
        filtered against `OuterRef("pk")`, the paper being annotated."""
        return self.annotate(
            library_filename=Subquery(entries.values("filename")[:1]),
            library_corrections=Subquery(entries.values("corrections")[:1]),
            library_added_at=Subquery(entries.values("added_at")[:1]),
            library_chosen_primary=Subquery(entries.values("chosen_primary")[:1]),
        )

    def ready(self, *, embedding_model: str) -> PaperQuerySet:
        """Papers whose chunks for *embedding_model* are complete. The caller names the model (in
        practice `indexing.embeddings.configured_model_name()`): which model is configured is the
        indexing layer's business, and papers sit below it."""
        return self.filter(index_status=Paper.IndexStatus.READY, embedding_model=embedding_model)

    def with_extraction_warning(self) -> PaperQuerySet:
        """Papers indexed without some of their pages (image-only or garbled ones)."""
        return self.exclude(extraction_warning="")

    def unreadable(self) -> PaperQuerySet:
        """Papers that failed because of the file itself (`index_error_code` set)."""
        return self.filter(index_status=Paper.IndexStatus.FAILED).exclude(index_error_code="")

    def not_ready(self, *, embedding_model: str) -> PaperQuerySet:
        """The complement of `ready`."""
        return self.filter(~Q(index_status=Paper.IndexStatus.READY) | ~Q(embedding_model=embedding_model))


class Paper(models.Model):
    class IndexStatus(models.TextChoices):
        PENDING = "pending", "Queued"
        INDEXING = "indexing", "Indexing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    sha256 = models.CharField(max_length=64, unique=True)
    file = models.FileField(upload_to=paper_upload_to)
    file_size = models.PositiveBigIntegerField(default=0, help_text="Bytes.")
    # Metadata as the PDF (or a lookup) gives it; a user's corrections live on their UserPaper.
    title = models.CharField(max_length=500, blank=True)
    # "A, B, C": `author_list` joined, the form `papers.citation` reads.
    authors = models.CharField(max_length=1000, blank=True)
    author_list = models.JSONField(default=list, blank=True, help_text="Authors in printed order.")
    year = models.PositiveSmallIntegerField(null=True, blank=True)
    venue = models.CharField(max_length=300, blank=True, help_text='Journal or proceedings: "OSDI 2006".')
    volume = models.CharField(max_length=50, blank=True)
    pages = models.CharField(max_length=50, blank=True, help_text='Printed page range: "4969\u20134983".')
    abstract = models.TextField(blank=True)
    doi = models.CharField(max_length=255, blank=True)
    arxiv_id = models.CharField(max_length=50, blank=True, help_text='Without its version: "2302.07302".')
    pmid = models.CharField(max_length=20, blank=True)
    keywords = models.JSONField(default=list, blank=True)
    # Field name -> where its value came from: "pdf" or "lookup" (a user's are on UserPaper).
    metadata_sources = models.JSONField(default=dict, blank=True)
    # The work this file holds (`papers.metadata.doc_key`): DOI, else arXiv id, else PMID, else
    # "sha256:..."; "" before indexing has read the file.
    doc_key = models.CharField(max_length=300, blank=True, db_index=True)
    # A supplement of the work (`papers.works.read_supplement`, set by indexing): attached to the
    # work, never one of its versions; its `title` is the work's, shown as "Supplement to <title>".
    is_supplement = models.BooleanField(default=False)
    page_count = models.PositiveIntegerField(default=0)

    index_status = models.CharField(max_length=16, choices=IndexStatus.choices, default=IndexStatus.PENDING)
    index_error = models.TextField(blank=True, help_text="Why indexing failed, in words a researcher can act on.")
    index_error_code = models.CharField(
        max_length=40,
        blank=True,
        help_text="Set when indexing failed because of the file itself (pdf_encrypted, pdf_no_text, ...): "
        "retrying the same bytes with the same settings cannot help.",
    )
    # Chunks carry the version they were written under; retrieval reads only the current one, so a
    # re-index swaps a paper's chunks in one row update. A version is a random token (uuid4 hex, ""
    # before the first build), never a counter: two databases or two workers never make the same one.
    index_version = models.CharField(max_length=32, blank=True, default="")
    # The build that holds the paper: the version it writes, and until when (a lease its worker
    # renews). An expired claim belongs to a worker that is gone; any worker may take it over.
    index_claim = models.CharField(max_length=32, blank=True, default="")
    index_claimed_until = models.DateTimeField(null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)
    chunk_count = models.PositiveIntegerField(default=0)
    # Extraction quality, one dict per physical page (`indexing.pdf.PageReport.as_dict()`): status
    # ok / little_text / garbled / image_only, counts, shares, columns, script, printed page number.
    page_report = models.JSONField(default=list, blank=True)
    extraction_warning = models.TextField(
        blank=True, help_text='Pages left out of the index: "pages 3-4 have no text layer ... and are not searched".'
    )
    indexed_at = models.DateTimeField(null=True, blank=True)

    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = PaperQuerySet.as_manager()

    class Meta:
        ordering = ["title", "pk"]

    def __str__(self) -> str:
        return self.display_title

    @property
    def display_title(self) -> str:
        """The viewer's corrected title, else the title found in the PDF, else the viewer's own
        file name (both when the paper was fetched through `PaperQuerySet.named_for` or
        `in_library_of`), else "Paper <id>". A supplement's is "Supplement to <the work's title>"
        (`papers.works.supplement_label`), "Supplement: <that>" when its title names no work."""
        title = self.cited.title or getattr(self, "library_filename", None) or f"Paper {self.pk}"
        if self.is_supplement:
            return supplement_label(self.cited.title) or f"Supplement: {title}"
        return title

    @property
    def cited(self) -> CitedMetadata:
        """The metadata the viewer sees: the paper's, with the viewer's corrections over it when
        the paper was fetched through `PaperQuerySet.named_for` (or `in_library_of`)."""
        return CitedMetadata.of(self, getattr(self, "library_corrections", None) or {})

    @property
    def unreadable_pages(self) -> list[int]:
        """1-based physical pages whose text could not be read (image-only or garbled), which
        retrieval therefore never searches."""
        return [entry["page"] for entry in self.page_report if entry.get("status") in ("garbled", "image_only")]

    @property
    def ocr_pages(self) -> list[int]:
        """1-based physical pages whose text was recognised by OCR from the page image: quotes
        from them are labelled "OCR text"."""
        return [entry["page"] for entry in self.page_report if entry.get("ocr")]

    def is_ocr_page(self, page_number: int) -> bool:
        """Whether physical page *page_number* (1-based) was read by OCR."""
        return 1 <= page_number <= len(self.page_report) and bool(self.page_report[page_number - 1].get("ocr"))

    def unreadable_pages_note(self) -> str:
        """What an answer about this paper must admit, or "": "2 pages of *Title* could not be read"."""
        count = len(self.unreadable_pages)
        if not count:
            return ""
        return f"{count} page{'s' if count > 1 else ''} of {self.display_title} could not be read"

    def printed_page(self, page_number: int) -> str:
        """The page number printed on physical page *page_number* (1-based), "" when unknown."""
        if 1 <= page_number <= len(self.page_report):
            return str(self.page_report[page_number - 1].get("printed", ""))
        return ""

    def page_for_printed(self, printed: str) -> int | None:
        """The first physical page (1-based) whose printed page number is *printed* ("379",
        "xii"), None when no page prints it."""
        wanted = printed.strip().casefold()
        for entry in self.page_report:
            if wanted and str(entry.get("printed", "")).casefold() == wanted:
                return int(entry["page"])
        return None

    def page_facts(self, page_number: int) -> dict[str, object]:
        """What a citation of physical page *page_number* shows besides the page: `printed`, the
        printed page number when known and different ("" otherwise), and `ocr`, whether the page's
        text was recognised by OCR (its quotes are labelled "OCR text")."""
        printed = self.printed_page(page_number)
        return {"printed": "" if printed == str(page_number) else printed, "ocr": self.is_ocr_page(page_number)}

    def page_label(self, page_number: int) -> str:
        """A citation's page: "p. 6", or "p. 6 (printed 379)" when the printed number differs."""
        printed = self.printed_page(page_number)
        if printed and printed != str(page_number):
            return f"p. {page_number} (printed {printed})"
        return f"p. {page_number}"


CORRECTABLE_FIELDS = ("title", "authors", "year", "venue", "doi")


@dataclass(frozen=True)
class CitedMetadata:
    """A paper's metadata as one viewer sees it. `authors` in order; `sources` maps each field to
    "pdf", "lookup" or "user" (a corrected field)."""

    title: str
    authors: list[str]
    year: int | None
    venue: str
    doi: str
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def first_author(self) -> str:
        return self.authors[0] if self.authors else ""

    @property
    def authors_text(self) -> str:
        return ", ".join(self.authors)

    @classmethod
    def of(cls, paper: Paper, corrections: dict[str, Any]) -> CitedMetadata:
        """*paper*'s metadata with *corrections* (`UserPaper.corrections`) over it."""
        authors = list(paper.author_list) or author_names_of(paper.authors)
        values: dict[str, Any] = {
            "title": paper.title,
            "authors": authors,
            "year": paper.year,
            "venue": paper.venue,
            "doi": paper.doi,
        }
        sources = {name: paper.metadata_sources.get(name, "pdf") for name, value in values.items() if value}
        for name in CORRECTABLE_FIELDS:
            if name in corrections:
                values[name] = corrections[name]
                sources[name] = "user"
        return cls(**values, sources=sources)


class UserPaper(models.Model):
    """A paper in a user's library."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="library_links")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="library_links")
    # The name of the file this user uploaded: theirs alone, never shown to anyone else.
    filename = models.CharField(max_length=255, blank=True)
    # This user's corrections of the paper's metadata, field -> value (fields of
    # CORRECTABLE_FIELDS; "authors" a list, "year" an int or null): theirs alone.
    corrections = models.JSONField(default=dict, blank=True)
    # This user chose this file as the primary version of its work (`papers.works`): the one
    # retrieval reads where they added the work's versions. Theirs alone, like `corrections`.
    chosen_primary = models.BooleanField(default=False)
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "paper"], name="unique_library_paper")]
        ordering = ["-added_at", "pk"]

    def __str__(self) -> str:
        return f"{self.user} · {self.paper}"


def figure_upload_to(figure: Figure, filename: str) -> str:
    """Figure images sit beside nothing else of theirs: `figures/<2 hex>/<sha256>/<filename>`, the
    paper's content hash (never a user's file name) and a name `replace_figures` makes unique."""
    sha256 = figure.paper.sha256
    return f"figures/{sha256[:2]}/{sha256}/{filename}"


class FigureQuerySet(models.QuerySet["Figure"]):
    def of_papers(self, paper_ids: Iterable[int]) -> FigureQuerySet:
        """The figures of the papers *paper_ids*, in each paper's order."""
        return self.filter(paper_id__in=list(paper_ids)).order_by("paper_id", "position", "pk")


class Figure(models.Model):
    """A captioned figure or table of a paper, cropped from its page to a PNG image at indexing
    (`indexing.figures`); a paper's figures are replaced whenever it is indexed again."""

    class Kind(models.TextChoices):
        FIGURE = "figure", "Figure"
        TABLE = "table", "Table"

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="figures")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    label = models.CharField(max_length=40, help_text='The normal form of the printed label: "Figure 1", "Table IV".')
    page_number = models.PositiveIntegerField(help_text="1-based physical page.")
    caption = models.TextField(blank=True, help_text="The caption as printed.")
    bbox = models.JSONField(help_text="The crop, [x0, top, x1, bottom] in PDF points from the page's top-left corner.")
    image = models.FileField(upload_to=figure_upload_to, max_length=255)
    width = models.PositiveIntegerField(help_text="Pixels.")
    height = models.PositiveIntegerField(help_text="Pixels.")
    position = models.PositiveIntegerField(default=0, help_text="Order in the paper, from 0.")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = FigureQuerySet.as_manager()

    class Meta:
        ordering = ["paper", "position", "pk"]
        constraints = [models.UniqueConstraint(fields=["paper", "label"], name="unique_figure_label")]

    def __str__(self) -> str:
        return f"{self.label}, p. {self.page_number}"


class AuthorProfile(models.Model):
    """The names a user publishes under ("Sanjay Ghemawat", "S. Ghemawat"), for "my papers"."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="author_profile")
    names = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return f"{self.user}: {', '.join(self.names)}"
