"""The labelled extraction set: small PDFs drawn (fpdf2) to reproduce one layout or font fault
each, with the text a reader sees on them.

`CASES` maps a case name to an `ExtractionCase`; `case.build()` returns the PDF bytes. The tests in
tests/test_extraction.py check each case, and `python -m benchmarks.extraction` reports the
character error rate of the extracted text against `expected` per case.
"""

from __future__ import annotations

import io
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fpdf import FPDF

from tests.support.pdfs import make_pdf_bytes

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")

LEFT_COLUMN = (
    "Alpha column text begins the story of the left side. It explains how quorum leases let any "
    "replica answer reads locally while the lease holds, and why the lease must expire before a "
    "new leader accepts writes from clients."
)
RIGHT_COLUMN = (
    "Beta column text continues on the right side. It measures read latency under contention "
    "with five replicas spread over three regions and reports the median and the tail for each "
    "protocol that was compared."
)
MIDDLE_COLUMN = (
    "Gamma column text sits in the middle. It lists the failure cases that the evaluation "
    "injects, from crashed followers to partitioned leaders and slow disks on one replica."
)
ABSTRACT = (
    "Abstract. This full-width abstract spans both columns of the page and summarises the "
    "contribution before the body text starts in two columns below it."
)
ARABIC = "انواع الخطوط العربية"
MATH = "For every ε > 0 there is δ ≤ ε such that x ∈ S and y ∉ T."
HEADER = "Journal of Careful Reading · Vol. 12 · Accepted manuscript"
BODY_PAGES = [
    "Gossip protocols spread updates by letting each node contact a few random peers per round.",
    "The fanout parameter controls how many peers a node contacts; we use a fanout of three.",
    "Churn is modelled by removing and adding nodes at a fixed rate of two percent per minute.",
    "Anti-entropy repair compares Merkle trees of key ranges and copies only differing leaves.",
]
FIRST_PRINTED_PAGE = 379


@dataclass(frozen=True)
class ExtractionCase:
    """One labelled PDF: `build()` draws it; `expected[i]` is the text of page i + 1 as a reader
    reads it ("" for a page with no readable text); `statuses[i]` the page's expected PageStatus."""

    build: Callable[[], bytes]
    expected: list[str]
    statuses: list[str]
    needs: list[Path] = field(default_factory=list)


def _twice(*texts: str) -> str:
    """Each text written out twice, in order: the body of one column (or of several, in turn)."""
    return " ".join(f"{text} {text}" for text in texts)


def _pdf(orientation: str = "P") -> FPDF:
    pdf = FPDF(orientation=orientation, unit="pt", format="A4")
    pdf.set_auto_page_break(auto=False)
    pdf.set_margins(0, 0, 0)
    return pdf


def _column(pdf: FPDF, text: str, x: float, y: float, width: float) -> None:
    pdf.set_xy(x, y)
    pdf.multi_cell(width, 13, text, align="L")


def off_centre_two_columns() -> bytes:
    """A4 (595 pt wide, centre 297.5): the gutter is 290-304, so right-column words cover the
    page centre."""
    pdf = _pdf()
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    _column(pdf, _twice(LEFT_COLUMN), 60, 80, 230)
    _column(pdf, _twice(RIGHT_COLUMN), 296, 80, 240)
    return bytes(pdf.output())


def three_columns() -> bytes:
    pdf = _pdf("L")
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    for index, text in enumerate((LEFT_COLUMN, MIDDLE_COLUMN, RIGHT_COLUMN)):
        _column(pdf, _twice(text), 40 + index * 260, 60, 230)
    return bytes(pdf.output())


def abstract_above_two_columns() -> bytes:
    pdf = _pdf()
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    _column(pdf, ABSTRACT, 60, 60, 475)
    _column(pdf, _twice(LEFT_COLUMN), 60, 110, 225)
    _column(pdf, _twice(RIGHT_COLUMN), 292, 110, 240)
    return bytes(pdf.output())


def fake_bold() -> bytes:
    pdf = _pdf()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    for dx in (0.0, 0.4):
        pdf.text(60 + dx, 80, "Our headline result")
    pdf.text(60, 100, "The lease protocol cuts read latency by 41 percent.")
    return bytes(pdf.output())


def rotated_table() -> bytes:
    """A landscape table turned 90 degrees anticlockwise on a portrait page."""
    pdf = _pdf()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    with pdf.rotation(90, x=100, y=700):
        for row, line in enumerate(ROTATED_ROWS):
            pdf.text(100, 700 + row * 16, line)
    return bytes(pdf.output())


ROTATED_ROWS = ["System Precision Recall", "Marlin 0.802 0.790", "Osprey 0.611 0.587"]


def _unicode_pdf(lines: list[str], *, visual_rtl: bool = False) -> bytes:
    from bidi import get_display

    pdf = _pdf()
    pdf.add_page()
    pdf.add_font("DejaVu", fname=str(DEJAVU))
    pdf.set_font("DejaVu", size=12)
    for index, line in enumerate(lines):
        # A PDF draws right-to-left text in visual order, as the eye sees it left to right.
        pdf.text(60, 80 + index * 20, get_display(line) if visual_rtl else line)
    return bytes(pdf.output())


def arabic() -> bytes:
    return _unicode_pdf([ARABIC], visual_rtl=True)


def math_symbols() -> bytes:
    return _unicode_pdf([MATH])


def partial_scan() -> bytes:
    """Pages 1-2 text; pages 3-4 a page-sized image and nothing else."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for page in BODY_PAGES[:2]:
        pdf.add_page()
        pdf.multi_cell(0, 6, page)
    for _ in range(2):
        pdf.add_page()
        pdf.image(_grey_png(), x=0, y=0, w=210, h=297)
    return bytes(pdf.output())


def _grey_png() -> io.BytesIO:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("L", (60, 80), 200).save(buffer, format="PNG")
    buffer.seek(0)
    return buffer


def one_word() -> bytes:
    return make_pdf_bytes(["Retracted."])


GARBLED_LINES = [
    "Consensus needs a majority of acceptors to agree on one value.",
    "A proposer picks a ballot number and asks the acceptors to promise.",
    "Each acceptor answers with the highest proposal it has accepted so far.",
]


def _without(data: bytes, *keys: bytes) -> bytes:
    """*data* with each "/Key n 0 R" entry blanked out in place (same length, so the xref offsets
    stay right)."""
    for key in keys:
        data = re.sub(rb"/" + key + rb" \d+ 0 R", lambda m: b" " * len(m.group(0)), data)
    return data


def unmapped_glyphs() -> bytes:
    """A CID font with neither a ToUnicode map nor an embedded program: every glyph extracts as
    "(cid:N)", and nothing says which letter it is."""
    return _without(_unicode_pdf(GARBLED_LINES), b"ToUnicode", b"FontFile2")


def wrong_letters() -> bytes:
    """An embedded subset font without its ToUnicode map: its own (subset) cmap maps the glyphs to
    the wrong letters, so the page reads as words that are not words."""
    return _without(_unicode_pdf(GARBLED_LINES), b"ToUnicode")


def running_headers() -> bytes:
    """Four pages, each with a two-line running header and a footer printing the journal's page
    number (379-382), and /PageLabels saying the same."""
    pdf = FPDF()
    pdf.set_auto_page_break(auto=False)
    for index, body in enumerate(BODY_PAGES):
        pdf.add_page()
        if index == 0:
            pdf.set_page_label(label_style="D", label_start=FIRST_PRINTED_PAGE)
        pdf.set_font("Helvetica", size=8)
        pdf.text(20, 12, HEADER)
        pdf.text(20, 16, "Licensed for personal use only.")
        pdf.set_font("Helvetica", size=11)
        pdf.set_xy(20, 30)
        pdf.multi_cell(170, 6, body)
        pdf.set_font("Helvetica", size=8)
        pdf.text(100, 285, str(FIRST_PRINTED_PAGE + index))
    return bytes(pdf.output())


def form_fields() -> bytes:
    """A one-page form, written by hand: a label drawn as text and an AcroForm text field whose
    value ("Ada Lovelace") is only in the field."""
    content = b"BT /F1 12 Tf 72 720 Td (Applicant name and signature line below.) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [5 0 R] >> >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 6 0 R >> >> /Annots [5 0 R] >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(zlib.compress(content))
        + zlib.compress(content)
        + b"\nendstream",
        b"<< /Type /Annot /Subtype /Widget /FT /Tx /T (Applicant) /V (Ada Lovelace) /Rect [72 680 300 700] /P 3 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


CASES: dict[str, ExtractionCase] = {
    "off-centre-two-columns": ExtractionCase(
        off_centre_two_columns, [f"{_twice(LEFT_COLUMN)} {_twice(RIGHT_COLUMN)}"], ["ok"]
    ),
    "three-columns": ExtractionCase(
        three_columns, [" ".join(_twice(text) for text in (LEFT_COLUMN, MIDDLE_COLUMN, RIGHT_COLUMN))], ["ok"]
    ),
    "abstract-above-two-columns": ExtractionCase(
        abstract_above_two_columns, [" ".join((ABSTRACT, _twice(LEFT_COLUMN), _twice(RIGHT_COLUMN)))], ["ok"]
    ),
    "fake-bold": ExtractionCase(
        fake_bold, ["Our headline result The lease protocol cuts read latency by 41 percent."], ["ok"]
    ),
    "rotated-table": ExtractionCase(rotated_table, [" ".join(ROTATED_ROWS)], ["ok"]),
    "arabic": ExtractionCase(arabic, [ARABIC], ["little_text"], needs=[DEJAVU]),
    "math-symbols": ExtractionCase(math_symbols, [MATH], ["ok"], needs=[DEJAVU]),
    "partial-scan": ExtractionCase(partial_scan, [*BODY_PAGES[:2], "", ""], ["ok", "ok", "image_only", "image_only"]),
    "one-word": ExtractionCase(one_word, ["Retracted."], ["little_text"]),
    "running-headers": ExtractionCase(running_headers, list(BODY_PAGES), ["ok"] * 4),
    "form-fields": ExtractionCase(
        form_fields, ["Applicant name and signature line below. Applicant: Ada Lovelace"], ["ok"]
    ),
}
# Cases whose every page is unusable: extraction fails, with this error code.
FAILING_CASES: dict[str, tuple[Callable[[], bytes], str]] = {
    "unmapped-glyphs": (unmapped_glyphs, "pdf_garbled"),
    "wrong-letters": (wrong_letters, "pdf_garbled"),
}
