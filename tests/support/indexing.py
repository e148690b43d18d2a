"""Helpers for indexing tests: papers from generated PDFs, indexed with stub embeddings."""

from __future__ import annotations

from indexing.services import ProgressCallback, index_paper, indexed_by_caller
from papers.models import Paper
from papers.services import add_paper_to_library
from tests.support.pdfs import make_pdf_bytes


def use_stub_embeddings(settings, stub, *, model: str = "stub-embed-a", dimension: int = 32) -> None:
    """Embed through the OpenAI stub as *model* (vectors of *dimension*); blurbs stay heuristic."""
    settings.EMBEDDING_BACKEND = "openai"
    settings.OPENAI_EMBED_MODEL = model
    settings.CONTEXTUAL_BLURBS = "heuristic"
    stub.dimension = dimension


def stored_paper(user, data: bytes, filename: str) -> Paper:
    """The PDF *data* added to *user*'s library as *filename*, not indexed (status pending, nothing
    queued: the test indexes it itself)."""
    with indexed_by_caller():
        return add_paper_to_library(user=user, data=data, filename=filename).paper


def new_paper(user, pages: list[str], *, title: str = "") -> Paper:
    """A paper in *user*'s library made of *pages*, not indexed (status pending, nothing queued)."""
    return stored_paper(user, make_pdf_bytes(pages, title=title), f"{title or 'paper'}.pdf")


def indexed_paper(user, pages: list[str], *, title: str = "", progress: ProgressCallback | None = None) -> Paper:
    """`new_paper`, indexed with the configured embeddings."""
    return index_paper(paper_id=new_paper(user, pages, title=title).pk, progress=progress)


def replace_pdf(paper: Paper, pages: list[str]) -> None:
    """Overwrite the stored file of *paper* (as if its text had changed) so a re-index yields new chunks."""
    with open(paper.file.path, "wb") as handle:
        handle.write(make_pdf_bytes(pages))


def closed_port_uri() -> str:
    """A MongoDB URI nobody listens on."""
    from tests.support.live_server import free_port

    return f"mongodb://127.0.0.1:{free_port()}/?directConnection=true"
