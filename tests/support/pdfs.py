"""Small PDFs generated for edge cases (fpdf2): text pages, encrypted, image-only, huge pages."""

from __future__ import annotations

import io

from fpdf import FPDF


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
