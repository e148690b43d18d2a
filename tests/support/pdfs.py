"""Small PDFs generated for edge cases (fpdf2): text pages, encrypted, image-only, huge pages."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from fpdf import FPDF

CREATED = datetime(2024, 1, 1, tzinfo=UTC)


def make_pdf_bytes(
    pages: list[str],
    *,
    title: str = "",
    author: str = "",
    user_password: str | None = None,
    image_only: bool = False,
) -> bytes:
    """A PDF with one page per string in *pages* (Latin-1 text, Helvetica 11pt).

    *user_password* encrypts it so it needs that password to open; *image_only* draws each page as
    a raster image with no text layer.
    """
    pdf = FPDF()
    pdf.set_creation_date(CREATED)  # the same pages make the same bytes, whenever the test runs
    pdf.set_auto_page_break(auto=True, margin=15)
    if title:
        pdf.set_title(title)
    if author:
        pdf.set_author(author)
    for text in pages:
        pdf.add_page()
        if image_only:
            pdf.image(_png(), x=20, y=20, w=100)
            continue
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, text)
    if user_password is not None:
        pdf.set_encryption(owner_password="owner-" + user_password, user_password=user_password)
    return bytes(pdf.output())


def _png() -> io.BytesIO:
    """A 2x2 grey PNG, built by hand (no imaging library needed)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\x80\x80" for _ in range(2))
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )
    return io.BytesIO(png)


# --- a paper with figures -------------------------------------------------------------------------

# Where `figure_pdf_bytes` draws things, in points from the page's top-left corner: (x0, top, x1, bottom).
VECTOR_DRAWING = (150.0, 160.0, 450.0, 300.0)
VECTOR_CAPTION_TOP = 315.0
TABLE_CAPTION_TOP = 450.0
TABLE_RULES = (150.0, 468.0, 450.0, 528.0)
RASTER_IMAGE = (156.0, 150.0, 456.0, 300.0)
RASTER_CAPTION_TOP = 312.0
PROSE = (
    "Replicated state machines keep several servers in agreement about an ordered log of commands, "
    "and a client submits each command to the group and waits until a majority has stored it. As "
    "Figure 1 shows, the client talks to one server at a time while the others follow its lead, and "
    "network partitions may delay progress but must never allow two conflicting decisions."
)


def figure_pdf_bytes(*, prose: str = PROSE) -> bytes:
    """A two-page US Letter PDF (points) with body text around three captioned things: on page 1 a
    vector drawing (rectangles, lines, an ellipse, labels) at VECTOR_DRAWING captioned "Figure 1:
    ..." below it, and a ruled table captioned "Table 1: ..." above it; on page 2 a raster image
    (an RGB gradient) at RASTER_IMAGE captioned "Fig. 2." in bold below it. *prose* is the body
    text, printed above and below each of them."""
    from PIL import Image

    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(auto=False)

    def paragraph(top: float, text: str) -> None:
        pdf.set_font("Helvetica", size=10)
        pdf.set_xy(72, top)
        pdf.multi_cell(468, 12, text)

    def caption(top: float, label: str, text: str, *, bold_label: bool = False) -> None:
        pdf.set_xy(150, top)
        pdf.set_font("Helvetica", "B" if bold_label else "", 9)
        pdf.cell(text=label)
        pdf.set_font("Helvetica", size=9)
        pdf.cell(text=text)

    pdf.add_page()
    paragraph(72, prose)
    x0, top, x1, bottom = VECTOR_DRAWING
    pdf.set_line_width(1)
    pdf.rect(x0, top, x1 - x0, bottom - top)
    pdf.rect(170, 180, 100, 40)
    pdf.rect(330, 180, 100, 40)
    pdf.line(270, 200, 330, 200)
    pdf.ellipse(260, 240, 80, 40)
    pdf.set_font("Helvetica", size=8)
    pdf.text(200, 203, "Client")
    pdf.text(362, 203, "Server")
    pdf.text(285, 263, "Log")
    caption(VECTOR_CAPTION_TOP, "Figure 1:", " A client and a server, drawn with vector shapes.")
    paragraph(350, prose)
    caption(TABLE_CAPTION_TOP, "Table 1:", " Measured latencies of two operations.")
    tx0, ttop, tx1, tbottom = TABLE_RULES
    pdf.line(tx0, ttop, tx1, ttop)
    pdf.line(tx0, ttop + 20, tx1, ttop + 20)
    pdf.line(tx0, tbottom, tx1, tbottom)
    pdf.set_font("Helvetica", size=9)
    for row, cells in enumerate(
        (("Operation", "Read", "Write"), ("open", "1.0 ms", "2.0 ms"), ("close", "3.0 ms", "4.0 ms"))
    ):
        baseline = ttop + 14 + row * 18 + (4 if row else 0)
        for column, cell in enumerate(cells):
            pdf.text(tx0 + 10 + column * 110, baseline, cell)
    paragraph(570, prose)

    pdf.add_page()
    paragraph(72, prose)
    gradient = Image.new("RGB", (300, 150))
    gradient.putdata([(x * 255 // 299, y * 255 // 149, 128) for y in range(150) for x in range(300)])
    ix0, itop, ix1, ibottom = RASTER_IMAGE
    pdf.image(gradient, x=ix0, y=itop, w=ix1 - ix0, h=ibottom - itop)
    caption(RASTER_CAPTION_TOP, "Fig. 2.", " A raster gradient image.", bold_label=True)
    paragraph(350, prose)
    return bytes(pdf.output())
