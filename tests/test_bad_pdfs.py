"""Each kind of bad PDF fails alone, with a reason a researcher can act on; other papers are untouched."""

from __future__ import annotations

import pytest

from indexing import store
from indexing.pdf import PdfError
from indexing.pdfparse import MAX_DETAIL_CHARS, clipped
from indexing.services import index_paper
from papers.models import Paper
from papers.services import NotAPdfError, add_paper_to_library
from tests.support.indexing import indexed_paper, new_paper, use_stub_embeddings

pytestmark = pytest.mark.django_db

GOOD_TEXT = "Paxos reaches agreement among unreliable processors as long as a majority stays up."


@pytest.fixture
def good_paper(alice, settings, openai_stub, chunk_store):
    use_stub_embeddings(settings, openai_stub)
    return indexed_paper(alice, [GOOD_TEXT], title="Good")


def fail_with(alice, data: bytes) -> Paper:
    """Index a paper whose stored file holds *data*; return it after the expected PdfError."""
    paper = new_paper(alice, ["placeholder text long enough to be a real page"])
    with open(paper.file.path, "wb") as handle:
        handle.write(data)
    with pytest.raises(PdfError):
        index_paper(paper_id=paper.pk)
    paper.refresh_from_db()
    assert paper.index_status == "failed"
    assert store.count_chunks(paper.pk) == 0
    return paper


def assert_untouched(paper: Paper, alice) -> None:
    before = Paper.objects.get(pk=paper.pk)
    assert (before.index_status, before.index_version) == ("ready", paper.index_version)
    assert store.count_chunks(paper.pk, index_version=paper.index_version) == paper.chunk_count > 0
    # and the next paper in line indexes as usual
    assert indexed_paper(alice, ["Raft splits consensus into leader election and log replication."]).index_status == (
        "ready"
    )


def test_a_zero_byte_upload_is_refused_before_anything_is_stored(alice, good_paper):
    with pytest.raises(NotAPdfError, match=r"The file is empty\."):
        add_paper_to_library(user=alice, data=b"", filename="empty.pdf")
    assert Paper.objects.count() == 1


def test_a_stored_file_that_became_empty_fails_as_unreadable(alice, good_paper):
    paper = fail_with(alice, b"")
    assert paper.index_error.startswith("The PDF could not be read")
    assert_untouched(good_paper, alice)


def test_a_truncated_pdf_fails_as_unreadable(alice, good_paper, make_pdf):
    data = make_pdf([GOOD_TEXT] * 3)
    paper = fail_with(alice, data[: len(data) // 2])
    assert paper.index_error.startswith("The PDF could not be read")
    assert len(paper.index_error) <= 250  # a reason, not the parser's dump of the damaged bytes
    assert_untouched(good_paper, alice)


def test_a_parsers_long_error_text_is_clipped_to_one_short_line():
    dump = "PSSyntaxError: " + " ".join(f"b'\\x{n:02x}'" for n in range(400)) + "\nmore"
    short = clipped(dump)
    assert len(short) <= MAX_DETAIL_CHARS + 1 and short.endswith("\u2026") and "\n" not in short
    assert clipped("Unexpected EOF") == "Unexpected EOF"


def test_a_pdf_encrypted_with_a_user_password_fails_asking_for_the_password(alice, good_paper, make_pdf):
    paper = fail_with(alice, make_pdf([GOOD_TEXT], user_password="secret"))
    assert paper.index_error == "The PDF is encrypted and needs a password to open."
    assert_untouched(good_paper, alice)


def test_an_image_only_pdf_fails_asking_for_ocr(alice, good_paper, make_pdf):
    paper = fail_with(alice, make_pdf(["", ""], image_only=True))
    assert "no text layer" in paper.index_error and "OCR" in paper.index_error
    assert_untouched(good_paper, alice)


def test_a_page_with_an_enormous_text_run_fails_naming_the_page(alice, settings, good_paper, make_pdf):
    settings.PDF_MAX_PAGE_CHARS = 2_000
    paper = fail_with(alice, make_pdf([GOOD_TEXT, "x" * 5_000]))
    assert paper.index_error.startswith("Page 2 holds")
    assert "more than the 2,000 a page may hold" in paper.index_error
    assert_untouched(good_paper, alice)


def test_a_paper_over_the_parse_time_limit_fails_with_that_reason(alice, settings, good_paper, make_pdf):
    settings.PDF_PARSE_TIMEOUT_SECONDS = 0.05  # less than the parser's own start-up
    paper = fail_with(alice, make_pdf([GOOD_TEXT]))
    assert paper.index_error == "Reading the PDF took longer than 0.05 s, the limit per paper."
    settings.PDF_PARSE_TIMEOUT_SECONDS = 60
    assert_untouched(good_paper, alice)


def test_a_paper_over_the_parse_memory_limit_fails_with_that_reason(alice, settings, good_paper, make_pdf):
    settings.PDF_PARSE_MEMORY_MB = 20  # less than the parser needs to load
    paper = fail_with(alice, make_pdf([GOOD_TEXT]))
    assert paper.index_error == "Reading the PDF needed more than 20 MB of memory, the limit per paper."
    settings.PDF_PARSE_MEMORY_MB = 2048
    assert_untouched(good_paper, alice)
