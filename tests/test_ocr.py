"""OCR of pages without readable text (issue 11): image-only papers become ready with their pages
marked as OCR'd, answers cite the right page and label its quotes "OCR text"; the engine setting,
the second run for garbled pages, and the printed page numbers citations show."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
from django.urls import reverse
from fpdf import FPDF

from indexing.ocr import make_engine, tesseract_lines
from indexing.pdf import PdfError, PdfGarbledError, extract_text
from indexing.services import IndexProgress, index_paper
from papers.models import Paper
from tests.conftest import shared_case
from tests.support.extraction_cases import CASES, FAILING_CASES, FIRST_PRINTED_PAGE
from tests.support.indexing import stored_paper

SCANNED_PAGES = [
    [
        "Field Survey of the Northern Basin",
        "The survey team measured sediment cores at",
        "twelve stations across the northern basin.",
    ],
    [
        "Results",
        "The glacier terminus retreated by forty one",
        "metres between the spring and autumn surveys.",
        "Meltwater turbidity rose sharply in August.",
    ],
]


def _page_image(lines: list[str]) -> io.BytesIO:
    """An A4 page at 150 dpi with *lines* drawn in black: a scan of a typed page."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", (1240, 1754), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=34)  # Pillow's bundled font: no system fonts needed
    for row, line in enumerate(lines):
        draw.text((110, 140 + 60 * row), line, font=font, fill=0)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    buffer.seek(0)
    return buffer


def image_only_pdf(pages: list[list[str]] = SCANNED_PAGES) -> bytes:
    """A PDF whose every page is one page-sized image of text and nothing else."""
    pdf = FPDF()
    for lines in pages:
        pdf.add_page()
        pdf.image(_page_image(lines), x=0, y=0, w=210, h=297)
    return bytes(pdf.output())


@pytest.fixture
def rapidocr(settings):
    settings.OCR_ENGINE = "rapidocr"
    return settings


def write(tmp_path: Path, data: bytes, name: str = "scan.pdf") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_an_image_only_pdf_is_read_by_ocr_page_by_page_with_progress(rapidocr, tmp_path):
    seen: list[tuple[int, int, bool]] = []
    text = extract_text(write(tmp_path, image_only_pdf()), progress=lambda *step: seen.append(step))
    assert seen == [(1, 2, True), (2, 2, True)]
    assert [report.status for report in text.reports] == ["ok", "ok"]
    assert text.ocr_pages == [1, 2]
    assert all(report.ocr and report.ocr_confidence and report.ocr_confidence > 0.8 for report in text.reports)
    page_two = " ".join(text.pages[1].split())
    assert "glacier terminus retreated by forty one" in page_two.lower()
    assert text.warning == ""


def test_with_ocr_off_an_image_only_pdf_still_fails_asking_for_ocr(settings, tmp_path):
    settings.OCR_ENGINE = "none"
    with pytest.raises(PdfError) as raised:
        extract_text(write(tmp_path, image_only_pdf()))
    assert "no text layer" in raised.value.message and "OCR" in raised.value.message


def test_pages_of_images_without_text_stay_unread_after_ocr(rapidocr, tmp_path):
    with pytest.raises(PdfError) as raised:
        extract_text(write(tmp_path, image_only_pdf([[], []])))
    assert raised.value.message == "The PDF has no text layer (its pages are images) and OCR found no text on them."


def test_a_page_whose_glyphs_draw_no_letters_stays_refused_after_ocr(rapidocr, tmp_path):
    # The case's font draws symbols for its unmapped glyphs: OCR reads "!\"#...", which is no text.
    build, _ = FAILING_CASES["unmapped-glyphs"]
    with pytest.raises(PdfGarbledError) as raised:
        extract_text(write(tmp_path, build()))
    assert "cannot be read" in raised.value.message


def test_ocr_runs_within_the_parsers_memory_limit(rapidocr, tmp_path):
    rapidocr.PDF_PARSE_MEMORY_MB = 400  # enough to parse, far below what the OCR models need
    with pytest.raises(PdfError) as raised:
        extract_text(write(tmp_path, image_only_pdf()))
    assert raised.value.code == "pdf_too_complex"


def test_an_unknown_engine_name_is_refused():
    with pytest.raises(ValueError):
        make_engine("paddle")


def test_tesseract_output_is_read_line_by_line():
    tsv = (
        "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"
        "5\t1\t1\t1\t1\t1\t10\t20\t50\t12\t96\tGlacier\n"
        "5\t1\t1\t1\t1\t2\t64\t20\t40\t12\t90\tretreat\n"
        "5\t1\t1\t1\t2\t1\t10\t40\t30\t12\t80\trates\n"
    )
    lines = tesseract_lines(tsv)
    assert [line.text for line in lines] == ["Glacier retreat", "rates"]
    assert (lines[0].x0, lines[0].x1, lines[0].confidence) == (10.0, 104.0, 0.93)


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract program is not installed")
def test_the_system_tesseract_reads_an_image_only_pdf(settings, tmp_path):
    settings.OCR_ENGINE = "tesseract"
    text = extract_text(write(tmp_path, image_only_pdf()))
    assert text.ocr_pages == [1, 2]
    assert "forty one" in " ".join(text.pages[1].split()).lower()


# --- through indexing and answers -----------------------------------------------------------------


def index_bytes(user, data: bytes, filename: str, **kwargs) -> Paper:
    return index_paper(paper_id=stored_paper(user, data, filename).pk, **kwargs)


@pytest.mark.django_db(transaction=True)
def test_an_image_only_paper_becomes_ready_by_ocr_and_is_answered_from_the_right_page(
    alice, chunk_store, rapidocr, client_for
):
    from chat.services import answer_question
    from projects.services import add_papers_to_project, create_project

    events: list[IndexProgress] = []
    paper = index_bytes(alice, image_only_pdf(), "survey-scan.pdf", progress=events.append)
    assert paper.index_status == Paper.IndexStatus.READY, paper.index_error
    assert paper.ocr_pages == [1, 2] and paper.extraction_warning == ""
    assert [e.message for e in events if e.stage == "parsing" and e.message] == [
        "page 1 of 2 read by OCR",
        "page 2 of 2 read by OCR",
    ]
    project = create_project(owner=alice, name="Scans")
    add_papers_to_project(project=project, papers=[paper], user=alice)

    answer = answer_question(
        project=project, user=alice, question="How far did the glacier terminus retreat?", chat=True
    )

    assert "forty one" in answer.text.lower()
    assert {reference.page for reference in answer.references} == {2}
    client = client_for(alice)
    page = client.get(reverse("projects:detail", args=[project.pk])).content.decode()
    assert '<span class="label label-ocr">OCR text</span>' in page
    library = client.get(reverse("papers:library")).content.decode()
    assert re.search(r'<span class="chip-ocr" data-pages="2"[^>]*> \(OCR\)</span>', library)
    assert client.get(f"/api/papers/{paper.pk}/").json()["ocr_pages"] == [1, 2]


@pytest.mark.django_db(transaction=True)
def test_the_partial_scan_case_is_answered_from_its_scanned_page(alice, chunk_store, rapidocr):
    from chat.services import answer_question
    from projects.services import add_papers_to_project, create_project

    paper = index_bytes(alice, shared_case("partial-scan.pdf").read_bytes(), "partial-scan.pdf")
    assert paper.index_status == Paper.IndexStatus.READY
    assert paper.ocr_pages == [3, 4] and paper.unreadable_pages == []
    project = create_project(owner=alice, name="Glaciers")
    add_papers_to_project(project=project, papers=[paper], user=alice)

    answer = answer_question(
        project=project, user=alice, question="How far did the glacier terminus retreat between 2019 and 2022?"
    )

    assert "38 metres" in answer.text
    assert answer.references[0].page == 3
    assert "could not be read" not in answer.text


# --- printed page numbers in citations ------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_citations_show_the_printed_page_and_copy_it(alice, chunk_store, client_for):
    from chat.services import answer_question
    from projects.services import add_papers_to_project, create_project

    paper = index_bytes(alice, CASES["running-headers"].build(), "gossip.pdf")
    project = create_project(owner=alice, name="Gossip")
    add_papers_to_project(project=project, papers=[paper], user=alice)
    answer = answer_question(project=project, user=alice, question="What fanout do the authors use?", chat=True)
    assert answer.references
    physical = answer.references[0].page
    printed = str(FIRST_PRINTED_PAGE + physical - 1)

    page = client_for(alice).get(reverse("projects:detail", args=[project.pk])).content.decode()

    assert f"page {physical} (printed {printed})" in page
    assert f", p. {printed})" in page  # the author-year citation to copy uses the printed page
    assert "OCR text" not in page


@pytest.mark.django_db
def test_the_reader_opens_a_page_by_its_printed_number(alice, chunk_store, client_for):
    paper = index_bytes(alice, CASES["running-headers"].build(), "gossip.pdf")
    client = client_for(alice)
    url = reverse("papers:reader", args=[paper.pk])
    by_printed = client.get(f"{url}?printed={FIRST_PRINTED_PAGE + 2}").content.decode()
    assert f"Page 3 of 4 (printed {FIRST_PRINTED_PAGE + 2})" in by_printed
    unknown = client.get(f"{url}?printed=9999&page=2").content.decode()
    assert f"Page 2 of 4 (printed {FIRST_PRINTED_PAGE + 1})" in unknown


@pytest.mark.django_db
def test_an_outsider_cannot_open_the_reader_by_printed_page(alice, mallory, chunk_store, client_for):
    paper = index_bytes(alice, CASES["running-headers"].build(), "gossip.pdf")
    response = client_for(mallory).get(reverse("papers:reader", args=[paper.pk]) + f"?printed={FIRST_PRINTED_PAGE}")
    assert response.status_code == 404
