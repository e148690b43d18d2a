"""Indexing workflow: PDF -> pages (and figure crops) -> chunks -> blurbs -> embeddings -> `paperchunks`,
and the paper's pack (`store.PaperPack`: its chunks, vectors and BM25 statistics in one document) in
`paperpacks`.

Also the operator workflows on the chunk index: choosing the papers a backfill must index
(`papers_needing_index`) or pack (`papers_needing_pack`), and reading a project's chunks from packs,
making the packs that are missing (`read_project_chunks`). Consistency checks and repairs live in
`indexing.health`.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from functools import partial
from http import HTTPStatus

from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotagent.errors import AnnotagentError
from indexing import lexical, store
from indexing.blurbs import make_blurbs
from indexing.chunking import chunk_pages, dehyphenate
from indexing.embeddings import EmbeddingError, configured_model_name, get_embedder
from indexing.lookup import checked_with_lookup
from indexing.metadata import PaperMetadata
from indexing.notifications import notify_paper_status
from indexing.pdf import PaperText, PdfError, PdfInterruptedError, PdfResourceError, extract_metadata, extract_text
from indexing.signals import paper_indexed
from papers.metadata import doc_key
from papers.models import Paper
from papers.services import replace_figures
from papers.works import read_supplement

logger = logging.getLogger(__name__)

INTERRUPTED_REASON = "Indexing was interrupted before it finished; it will run again."


class PaperBusyError(AnnotagentError):
    """Another worker is indexing this paper."""

    code = "paper_being_indexed"
    status = HTTPStatus.CONFLICT

    def __init__(self, message: str = "", *, claimed_until: datetime) -> None:
        super().__init__(message)
        self.claimed_until = claimed_until


class ClaimLostError(AnnotagentError):
    """This build's claim expired and another worker took the paper over; this build was dropped."""

    code = "index_claim_lost"
    status = HTTPStatus.CONFLICT


@dataclass(frozen=True)
class IndexClaim:
    """One build's hold on a paper. `version` is the index version the build writes (uuid4 hex), and
    the claim's token; `claimed_until` is when the claim lapses unless renewed; `replaced` is the
    version of an expired claim this one took over ("" when there was none)."""

    paper_id: int
    version: str
    claimed_until: datetime
    replaced: str = ""


def claim_paper(*, paper_id: int) -> IndexClaim:
    """Claim *paper_id* for one index build, for INDEX_CLAIM_SECONDS.

    One compare-and-set row update, so two workers never both win, on any database. A claim whose
    time has passed belongs to a worker that is gone (killed, or stalled past its lease) and is
    taken over. Raises PaperBusyError while another build's claim runs; Paper.DoesNotExist.
    """
    paper = Paper.objects.only("index_claim", "index_claimed_until").get(pk=paper_id)
    now = timezone.now()
    held_until = paper.index_claimed_until
    if paper.index_claim and held_until is not None and held_until > now:
        raise PaperBusyError(f"Paper {paper_id} is being indexed by another worker.", claimed_until=held_until)
    claim = IndexClaim(
        paper_id=paper_id,
        version=uuid.uuid4().hex,
        claimed_until=now + timedelta(seconds=settings.INDEX_CLAIM_SECONDS),
        replaced=paper.index_claim,
    )
    won = Paper.objects.filter(pk=paper_id, index_claim=paper.index_claim, index_claimed_until=held_until).update(
        index_claim=claim.version, index_claimed_until=claim.claimed_until
    )
    if not won:
        current = Paper.objects.only("index_claimed_until").get(pk=paper_id)
        raise PaperBusyError(
            f"Paper {paper_id} is being indexed by another worker.",
            claimed_until=current.index_claimed_until or now,
        )
    return claim


def renew_claim(claim: IndexClaim) -> bool:
    """Push *claim*'s end INDEX_CLAIM_SECONDS ahead. False when it is no longer this build's."""
    until = timezone.now() + timedelta(seconds=settings.INDEX_CLAIM_SECONDS)
    return bool(Paper.objects.filter(pk=claim.paper_id, index_claim=claim.version).update(index_claimed_until=until))


def _end_claim(claim: IndexClaim, *, expire: bool = False) -> bool:
    """Release *claim* (or, with *expire*, let it lapse now so a watching worker takes the paper over
    at once). False when it was no longer this build's."""
    changes: dict[str, object] = {"index_claimed_until": timezone.now()}
    if not expire:
        changes = {"index_claim": "", "index_claimed_until": None}
    return bool(Paper.objects.filter(pk=claim.paper_id, index_claim=claim.version).update(**changes))


class _ClaimKeeper:
    """Renews a claim from a background thread every third of INDEX_CLAIM_SECONDS while a build runs,
    so the lease can be short (a killed worker's paper is picked up soon) while a build may take
    long (a 180 s parse, an hour of chat-model blurbs). The thread uses its own database connection
    and closes it."""

    def __init__(self, claim: IndexClaim) -> None:
        self.claim = claim
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"claim-{claim.paper_id}", daemon=True)

    def __enter__(self) -> _ClaimKeeper:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        try:
            while not self._stop.wait(settings.INDEX_CLAIM_SECONDS / 3):
                if not renew_claim(self.claim):
                    # The build's own swap releases the claim (work after it, such as warming
                    # caches, may still run): that is the end of the lease, not a takeover.
                    finished = Paper.objects.filter(pk=self.claim.paper_id, index_version=self.claim.version)
                    if not finished.exists():
                        logger.warning("Paper %s: this build lost its claim to another worker.", self.claim.paper_id)
                    return
        except Exception:
            logger.warning("Paper %s: could not renew the index claim", self.claim.paper_id, exc_info=True)
        finally:
            connection.close()


# Share of the work done when each stage starts, for the status chip's progress bar (percent).
_STAGE_PERCENT = {"parsing": 0, "chunking": 10, "embedding": 10, "writing": 90, "swapping": 95, "done": 100}
# A progress event goes out when the percentage moves at least this much (or the stage changes), so a
# 2,000-chunk paper sends ~20 events rather than one per embedding batch.
_PUBLISH_STEP_PERCENT = 5


@dataclass(frozen=True)
class IndexProgress:
    """A progress report of one indexing run.

    `stage` is one of parsing, chunking, embedding, writing (the new chunks are being stored),
    swapping (every new chunk is stored; the paper is about to switch to them), done, failed.
    `pages` and `chunks` are totals once known; `done_pages` counts pages read so far while parsing
    (`ocr_pages` of them by OCR); `done_chunks` counts chunks embedded so far.
    """

    paper_id: int
    stage: str
    pages: int = 0
    chunks: int = 0
    done_chunks: int = 0
    message: str = ""
    done_pages: int = 0
    ocr_pages: int = 0

    @property
    def percent(self) -> int:
        """Overall progress, 0..100. Embedding dominates the cost, so it spans 10..90; parsing
        spans 0..10 (its pages may need OCR, seconds each)."""
        if self.stage == "embedding" and self.chunks:
            return 10 + int(80 * self.done_chunks / self.chunks)
        if self.stage == "parsing" and self.pages:
            return int(10 * self.done_pages / self.pages)
        return _STAGE_PERCENT.get(self.stage, 0)


ProgressCallback = Callable[[IndexProgress], None]


class _ProgressPublisher:
    """Forwards progress to the caller's callback and, throttled, to the paper's status group."""

    def __init__(self, paper: Paper, callback: ProgressCallback | None) -> None:
        self.paper = paper
        self.callback = callback
        self.last: tuple[str, int] | None = None

    def __call__(self, event: IndexProgress) -> None:
        if self.callback is not None:
            self.callback(event)
        if event.stage in ("done", "failed"):
            return  # the final status event carries these
        if self.last is None or self.last[0] != event.stage or event.percent - self.last[1] >= _PUBLISH_STEP_PERCENT:
            self.last = (event.stage, event.percent)
            notify_paper_status(self.paper, progress=event.percent)


def _set_status(paper: Paper, status: str, error: str = "", code: str = "") -> None:
    paper.index_status = status
    paper.index_error = error
    paper.index_error_code = code
    Paper.objects.filter(pk=paper.pk).update(
        index_status=status, index_error=error, index_error_code=code, updated_at=timezone.now()
    )
    notify_paper_status(paper)


def is_searchable(paper: Paper) -> bool:
    """Whether retrieval reads *paper*: `ready`, with a complete chunk set of the configured model."""
    return (
        paper.index_status == Paper.IndexStatus.READY
        and paper.embedding_model == configured_model_name()
        and bool(paper.index_version)
    )


def index_paper(
    *,
    paper_id: int,
    progress: ProgressCallback | None = None,
    on_claim: Callable[[IndexClaim], None] | None = None,
) -> Paper:
    """(Re)build the chunks of one paper with the configured embedding model and make them the ones
    retrieval reads.

    The build first claims the paper (`claim_paper`; PaperBusyError while another build holds it)
    and renews the claim while it runs; *on_claim* is called with the claim before any work (the
    task worker schedules a check that picks the paper up again should this process die). An
    expired claim taken over has its partial chunks deleted.

    New chunks are written under the claim's new version, with the paper's content hash; the paper
    row switches to that version (and model) in one update, only once every chunk is stored and
    only while the claim is still this build's (else ClaimLostError), and older versions are
    deleted after. A paper that is searchable when the rebuild starts stays `ready` on its old
    chunks throughout, so a question asked meanwhile reads the old chunks; any other paper is
    `indexing` meanwhile. Once the paper is searchable its figures are replaced by those cropped
    from the file (`papers.services.replace_figures`), then `indexing.signals.paper_indexed` is sent.

    On failure the partial new chunks are removed and the error is raised again: a paper that was
    searchable stays `ready` on its old chunks with the reason in `index_error`; any other paper
    ends `failed` with a readable reason. PdfError is permanent; ChunkStoreError and EmbeddingError
    are worth retrying (`is_permanent_failure`). An interruption (KeyboardInterrupt, SystemExit)
    leaves the paper `pending` (or `ready` on its old chunks), never `ready` on partial chunks.
    Raises Paper.DoesNotExist when the paper is gone (also when it is deleted mid-run).
    """
    claim = claim_paper(paper_id=paper_id)
    if on_claim is not None:
        on_claim(claim)
    if transaction.get_connection().in_atomic_block:
        # Inside a transaction the claim is invisible to other connections until commit, so there is
        # nothing for a renewing thread to see (it would wait on the row lock).
        return _build(claim, progress)
    with _ClaimKeeper(claim):
        return _build(claim, progress)


_PAPER_FIELDS = {"authors": "author_list"}


def take_metadata(paper: Paper, metadata: PaperMetadata, *, first_page: str = "") -> list[str]:
    """Copy what *metadata* found onto *paper* (unsaved) and return the model fields to save.

    A field the PDF or a lookup gave before is replaced by what they give now (extraction
    improves); a field set another way (by hand, without a recorded source) is kept. Users'
    corrections are on their library entries and never touched here. Whether the file is a
    supplement is read from its title and *first_page* (the text of page 1,
    `papers.works.read_supplement`); a supplement's title read from the PDF becomes the title of
    the work it supplements, when it names one.
    """
    sources = dict(paper.metadata_sources)
    changed = {"metadata_sources"}
    for name, value in asdict(metadata).items():
        if name == "sources" or not value:
            continue
        attribute = _PAPER_FIELDS.get(name, name)
        current = getattr(paper, attribute)
        if current and sources.get(name) not in ("pdf", "lookup"):
            continue
        if name == "authors":
            paper.authors = metadata.authors_text[:1000]
            changed.add("authors")
        setattr(paper, attribute, list(value) if isinstance(value, tuple) else value)
        sources[name] = metadata.sources.get(name, "pdf")
        changed.add(attribute)
    work_title = read_supplement(title=paper.title, first_page=first_page)
    paper.is_supplement = work_title is not None
    if work_title and (not paper.title or sources.get("title") in ("pdf", "lookup")):
        paper.title = work_title[:500]
        sources["title"] = "pdf"
        changed.add("title")
    paper.metadata_sources = sources
    paper.doc_key = doc_key(doi=paper.doi, arxiv_id=paper.arxiv_id, pmid=paper.pmid, sha256=paper.sha256)
    return sorted(changed | {"doc_key", "is_supplement"})


def _build(claim: IndexClaim, progress: ProgressCallback | None) -> Paper:
    paper = Paper.objects.get(pk=claim.paper_id)
    keep_serving = is_searchable(paper)
    report = _ProgressPublisher(paper, progress)
    if keep_serving:
        # The old chunks stay live until the swap; the chip learns about the rebuild from progress events.
        Paper.objects.filter(pk=paper.pk).update(index_error="", updated_at=timezone.now())
        paper.index_error = ""
    else:
        _set_status(paper, Paper.IndexStatus.INDEXING)
    new_version = claim.version
    try:
        store.check_binding()  # a chunk index of another database: refuse before any work
        if claim.replaced:  # the partial chunks of a build whose worker is gone
            store.delete_chunks_of_version(paper.pk, claim.replaced)
        report(IndexProgress(paper.pk, "parsing"))
        ocr_done = 0

        def parsed_page(page: int, pages: int, ocr: bool) -> None:
            nonlocal ocr_done
            ocr_done += ocr
            message = f"page {page} of {pages} read by OCR" if ocr else ""
            report(
                IndexProgress(paper.pk, "parsing", pages=pages, done_pages=page, ocr_pages=ocr_done, message=message)
            )

        text = extract_text(paper.file.path, progress=parsed_page)
        metadata_fields = take_metadata(
            paper, checked_with_lookup(extract_metadata(text)), first_page=text.pages[0] if text.pages else ""
        )
        paper.page_count = len(text.pages)
        # Extraction quality (issue 11): the per-page report, and the pages left out, for the chip.
        paper.page_report = [report.as_dict() for report in text.reports]
        paper.extraction_warning = text.warning
        paper.save(
            update_fields=[
                *metadata_fields,
                *("page_count", "updated_at"),
                *("page_report", "extraction_warning"),
            ]
        )

        chunks = chunk_pages(
            text.pages, chunk_tokens=settings.CHUNK_TOKENS, overlap_tokens=settings.CHUNK_OVERLAP_TOKENS
        )
        pages = len(text.pages)
        report(IndexProgress(paper.pk, "chunking", pages=pages, chunks=len(chunks)))
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
                    paper_sha256=paper.sha256,
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
            report(IndexProgress(paper.pk, "embedding", pages=pages, chunks=len(chunks), done_chunks=len(records)))
        report(IndexProgress(paper.pk, "writing", pages=pages, chunks=len(chunks), done_chunks=len(records)))
        store.write_chunks(records)
        if records:
            store.write_pack(store.PaperPack.of_records(records))
        report(IndexProgress(paper.pk, "swapping", pages=pages, chunks=len(chunks), done_chunks=len(records)))
        with transaction.atomic():
            swapped = Paper.objects.filter(pk=paper.pk, index_claim=claim.version).update(
                index_status=Paper.IndexStatus.READY,
                index_error="",
                index_error_code="",
                index_version=new_version,
                index_claim="",
                index_claimed_until=None,
                embedding_model=embedder.model_name,
                chunk_count=len(records),
                indexed_at=timezone.now(),
                updated_at=timezone.now(),
            )
        if not swapped:
            if not Paper.objects.filter(pk=paper.pk).exists():  # deleted: its chunks must not outlive it
                store.delete_chunks(paper.pk)
                raise Paper.DoesNotExist(f"Paper {paper.pk} was deleted while it was being indexed.")
            raise ClaimLostError(f"Paper {paper.pk}: another worker took over this build after its claim expired.")
        # Keep the new version and the one a build claiming the paper right now writes.
        live_claim = Paper.objects.filter(pk=paper.pk).values_list("index_claim", flat=True).first() or ""
        store.delete_chunks(paper.pk, keep_versions=(new_version, live_claim))
    except Paper.DoesNotExist:
        raise
    except ClaimLostError:
        # The paper's status is the other build's to set; only this build's chunks go.
        store.delete_chunks_of_version(paper.pk, new_version)
        raise
    except AnnotagentError as exc:
        _fail(paper, claim, exc.message, keep_serving=keep_serving, code=unreadable_code(exc))
        report(IndexProgress(paper.pk, "failed", message=exc.message))
        raise
    except Exception as exc:
        logger.exception("Indexing paper %s failed", paper.pk)
        reason = f"Indexing failed unexpectedly ({type(exc).__name__})."
        _fail(paper, claim, reason, keep_serving=keep_serving)
        report(IndexProgress(paper.pk, "failed", message=reason))
        raise
    except BaseException:
        # Ctrl-C in a command, or the worker shutting down: leave the paper to be picked up again.
        _fail(paper, claim, INTERRUPTED_REASON, keep_serving=keep_serving, status=Paper.IndexStatus.PENDING)
        raise
    _store_figures(paper, text)
    paper.refresh_from_db()
    notify_paper_status(paper)
    report(IndexProgress(paper.pk, "done", pages=paper.page_count, chunks=paper.chunk_count))
    # After the paper is searchable: warming caches must neither delay nor fail the build.
    for receiver, result in paper_indexed.send_robust(sender=Paper, paper=paper):
        if isinstance(result, Exception):
            logger.warning("Paper %s: %r failed after indexing", paper.pk, receiver, exc_info=result)
    return paper


def _store_figures(paper: Paper, text: PaperText) -> None:
    """Make the figures the parse cropped *paper*'s figures (replacing those of an earlier build).
    Figures are an extra: once the paper is searchable, failing to store them is logged and leaves
    the paper as it is."""
    if text.figure_error:
        logger.warning("Paper %s: figures stopped being cropped (%s)", paper.pk, text.figure_error)
    try:
        stored = replace_figures(paper=paper, figures=text.figures)
    except Exception:
        logger.exception("Paper %s: its figures could not be stored", paper.pk)
        return
    logger.info("Paper %s: %d figures and tables cropped in %.2f s", paper.pk, len(stored), text.figure_seconds)


def _fail(
    paper: Paper,
    claim: IndexClaim,
    reason: str,
    *,
    keep_serving: bool,
    status: str = Paper.IndexStatus.FAILED,
    code: str = "",
) -> None:
    try:
        store.delete_chunks_of_version(paper.pk, claim.version)
    except store.ChunkStoreError:
        # Harmless: no paper row names this version, and `check_index --fix` removes it.
        logger.warning("Could not remove partial chunks of paper %s (version %s)", paper.pk, claim.version)
    # Interrupted: the claim lapses now, so the worker that watches it builds the paper again.
    if not _end_claim(claim, expire=status == Paper.IndexStatus.PENDING):
        return  # another build took the paper over; its status is that build's to set
    if keep_serving:
        _set_status(paper, Paper.IndexStatus.READY, f"Re-indexing failed; the previous index is still used. {reason}")
    else:
        _set_status(paper, status, reason, code)


def unreadable_code(exc: BaseException) -> str:
    """The stable code of *exc* when the file itself is the problem (a PdfError other than running
    out of parse time or memory, which new limits may cure), else "": what `index_error_code`
    records, so a backfill or a new project link does not retry the same bytes for nothing."""
    if isinstance(exc, PdfError) and not isinstance(exc, PdfResourceError):
        return exc.code
    return ""


def is_permanent_failure(exc: BaseException) -> bool:
    """Whether retrying cannot help: the PDF itself is the problem (PdfError), or the error is not
    one of the known transient ones (ChunkStoreError, EmbeddingError, PdfInterruptedError)."""
    if isinstance(exc, PdfError):
        return True
    return not isinstance(exc, store.ChunkStoreError | EmbeddingError | PdfInterruptedError)


def mark_for_reindex(*, paper: Paper) -> None:
    """Queue *paper* for a rebuild after commit, keeping it searchable on its old chunks if it is.

    A paper that is not searchable goes back to `pending` with no failure reason.
    """
    if not is_searchable(paper):
        _set_status(paper, Paper.IndexStatus.PENDING)
    queue_index(paper_id=paper.pk, rebuild=True)


# --- queueing (run by the signal hooks in `indexing.receivers`) -------------------------------------

_caller_indexes: ContextVar[bool] = ContextVar("caller_indexes", default=False)


@contextmanager
def indexed_by_caller() -> Iterator[None]:
    """Within this block a new paper is not queued for indexing: the caller indexes it itself right
    away (`ingest_papers`, tests). A paper joining a project is still queued when it has no chunks."""
    token = _caller_indexes.set(True)
    try:
        yield
    finally:
        _caller_indexes.reset(token)


@dataclass(frozen=True)
class _Enqueue:
    """The on-commit callback that enqueues the `index_paper` task; equal callbacks queue the same work."""

    paper_id: int
    rebuild: bool = False

    def __call__(self) -> None:
        from indexing.tasks import index_paper as index_paper_task  # the tasks module imports this one

        if self.rebuild:
            index_paper_task.enqueue(paper_id=self.paper_id, rebuild=True)
        else:
            index_paper_task.enqueue(paper_id=self.paper_id)


def queue_index(*, paper_id: int, rebuild: bool = False) -> None:
    """Enqueue the `index_paper` task for *paper_id* once the current transaction commits (at once
    outside one), at most once per transaction: an upload to a project both creates the paper and
    links it, and each of those events asks for it."""
    callback = _Enqueue(paper_id, rebuild)
    connection = transaction.get_connection()
    # `run_on_commit` holds the callbacks still waiting for this transaction (those of a rolled-back
    # savepoint are dropped from it), so an equal callback there means the task is coming already.
    if connection.in_atomic_block and any(entry[1] == callback for entry in connection.run_on_commit):
        return
    transaction.on_commit(callback)


def queue_new_paper(*, paper_id: int) -> None:
    """Queue a paper just stored for its first indexing, unless inside `indexed_by_caller`."""
    if not _caller_indexes.get():
        queue_index(paper_id=paper_id)


def queue_unindexed(*, paper_ids: Iterable[int]) -> None:
    """Lazy backfill, when papers join a project: each of *paper_ids* with no complete chunks for the
    configured embedding model (never indexed, failed, indexed by another model, or pending with its
    task lost) goes back to `pending` and is queued after commit. A paper being indexed right now is
    left to that run; one already ready is left alone, and so is one that failed because of the file
    itself (`Paper.objects.unreadable()`: the same bytes would fail again)."""
    ready = Paper.objects.ready(embedding_model=configured_model_name())
    papers = (
        Paper.objects.filter(pk__in=set(paper_ids))
        .exclude(index_status=Paper.IndexStatus.INDEXING)
        .exclude(pk__in=ready.values("pk"))
        .exclude(pk__in=Paper.objects.unreadable().values("pk"))
    )
    to_queue = list(papers.order_by("pk").values_list("pk", flat=True))
    Paper.objects.filter(pk__in=to_queue).update(
        index_status=Paper.IndexStatus.PENDING, index_error="", index_error_code=""
    )
    for paper_id in to_queue:
        queue_index(paper_id=paper_id)


def delete_chunks_after_commit(*, paper_id: int) -> None:
    """Delete every chunk of *paper_id* (a paper row deleted) once the transaction commits.
    The store's ChunkStoreError then reaches whoever committed; `check_index --fix` removes
    chunks left behind."""
    transaction.on_commit(partial(store.delete_chunks, paper_id))


def papers_needing_index(papers: QuerySet[Paper], *, check_store: bool = True) -> tuple[list[Paper], list[Paper]]:
    """Split *papers* into (to index, already done) for the configured embedding model.

    A paper is done when it is searchable and, with *check_store*, the chunk index holds exactly
    `chunk_count` chunks of its current version and the configured model. Everything else (pending,
    failed, interrupted, indexed by another model, chunks lost from the store) is to index.
    Raises ChunkStoreError when *check_store* and the chunk index cannot be read.
    """
    papers_list = list(papers.order_by("pk"))
    counts: dict[store.ChunkGroup, int] = {}
    if check_store:
        counts = store.chunk_counts_by_paper([paper.pk for paper in papers_list if is_searchable(paper)])
    to_index: list[Paper] = []
    done: list[Paper] = []
    for paper in papers_list:
        key = store.ChunkGroup(paper.pk, paper.index_version, paper.embedding_model, paper.sha256)
        stored = counts.get(key, 0)
        complete = is_searchable(paper) and (not check_store or stored == paper.chunk_count)
        (done if complete else to_index).append(paper)
    return to_index, done


def select_papers(*, paper_ids: Iterable[int] = (), project_id: int | None = None) -> QuerySet[Paper]:
    """The papers an operator command works on: the given ids and the papers of the given project,
    or every paper when neither is given."""
    paper_ids = list(paper_ids)
    papers = Paper.objects.all()
    if not paper_ids and project_id is None:
        return papers
    from django.db.models import Q

    query = Q(pk__in=paper_ids)
    if project_id is not None:
        query |= Q(project_links__project_id=project_id)
    return papers.filter(query).distinct()


# --- packs -----------------------------------------------------------------------------------------


def make_packs(*, versions: dict[int, store.PaperVersion], embedding_model: str) -> list[store.PaperPack]:
    """The packs of the papers in *versions* (paper id -> index version and content hash) made from
    their stored chunks of *embedding_model*, in paper id order; a paper without such chunks gets
    none. Nothing is stored. Raises ChunkStoreError."""
    matrix = store.load_chunks(versions, embedding_model=embedding_model)
    packs = []
    start = 0
    for stop in range(1, len(matrix.chunks) + 1):  # rows come ordered by paper, then chunk index
        if stop == len(matrix.chunks) or matrix.chunks[stop]["paperId"] != matrix.chunks[start]["paperId"]:
            packs.append(store.PaperPack.of_chunks(matrix.chunks[start:stop], matrix.embeddings[start:stop]))
            start = stop
    return packs


def read_project_chunks(
    *, versions: dict[int, store.PaperVersion], embedding_model: str, with_embeddings: bool = True
) -> store.ChunkMatrix:
    """The current chunks of the papers in *versions* as one matrix, rows ordered by (paper id,
    chunk index) as `store.load_chunks` orders them, with their BM25 statistics (`ChunkMatrix`).

    Read from the papers' packs. A paper without one (indexed before packs were written, or packed
    by another tokenizer version) has its pack made from its chunks and stored, so the next process
    reads it; a pack that cannot be stored is logged and made again next time. Raises
    ChunkStoreError when the chunk index cannot be read.
    """
    packs = store.load_packs(versions, embedding_model=embedding_model, with_embeddings=with_embeddings)
    missing = {paper_id: version for paper_id, version in versions.items() if paper_id not in packs}
    if missing:
        made = make_packs(versions=missing, embedding_model=embedding_model)
        logger.info("Made the packs of %s paper(s) from their chunks", len(made))
        for pack in made:
            packs[pack.paper_id] = pack
            try:
                store.write_pack(pack)
            except store.ChunkStoreError:
                logger.warning("Could not store the pack of paper %s", pack.paper_id, exc_info=True)
    return store.join_packs([packs[paper_id] for paper_id in sorted(packs)], with_embeddings=with_embeddings)


def papers_needing_pack(papers: Iterable[Paper]) -> list[Paper]:
    """The searchable papers among *papers* whose current pack (their version, model and file, this
    tokenizer version) is missing, incomplete or holds another number of chunks than
    `Paper.chunk_count`. Raises ChunkStoreError."""
    searchable = [paper for paper in papers if is_searchable(paper)]
    rows = store.pack_rows_by_paper([paper.pk for paper in searchable])
    return [paper for paper in searchable if rows.get(_pack_group(paper)) != paper.chunk_count]


def _pack_group(paper: Paper) -> store.PackGroup:
    return store.PackGroup(
        paper.pk, paper.index_version, paper.embedding_model, paper.sha256, lexical.TOKENIZER_VERSION
    )


def pack_papers(*, papers: Iterable[Paper]) -> list[int]:
    """Make and store the current packs of the searchable ones of *papers* from their chunks,
    replacing any stored. Returns the ids of the papers packed (those with chunks). Raises
    ChunkStoreError."""
    packed = []
    for paper in papers:  # one at a time: a paper's rows and vectors are held only until stored
        if not is_searchable(paper):
            continue
        version = {paper.pk: store.PaperVersion(paper.index_version, paper.sha256)}
        for pack in make_packs(versions=version, embedding_model=paper.embedding_model):
            store.write_pack(pack)
            packed.append(pack.paper_id)
    return packed
