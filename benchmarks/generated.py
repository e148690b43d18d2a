"""Small PDFs for the evaluation's generated project: text that is not an English prose sentence.

- `results-table.pdf`: a made-up paper whose second page is a results table ("Marlin 0.850 0.760
  0.802"), rows of numbers rather than sentences;
- `short-lines.pdf`: three pages of one short line each ("Lantern crawler: default fanout 12.");
- `cjk-notes.pdf`: a page of Chinese sentences ending in 。, wrapped mid-sentence as Chinese
  typesetting does.

The first two are drawn with fpdf2 (Helvetica). fpdf2 needs a TrueType font for Chinese and this
machine has none with CJK glyphs, so `cjk_pdf` writes the PDF by hand: a Type 0 font naming the
Adobe-GB1 standard font STSong-Light (not embedded; readers substitute a system font) with the
predefined `UniGB-UCS2-H` encoding (two-byte UCS-2 codes), which text extractors map back to
Unicode through the Adobe-GB1 tables (PDF 1.7, ISO 32000-1, 9.7.5.2 and 9.10.2). A ToUnicode map
is left out on purpose: pdfminer applies it to CIDs, not to codes, and would misread the text.

The questions about these files are in `questions.json` with `"corpus": "generated"`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF

TABLE_TITLE = "Marlin: Fast Approximate Record Linkage"
TABLE_PROSE = (
    "We present Marlin, a record linkage system that compares blocked record pairs with learned "
    "string kernels. We evaluate Marlin against two baselines, Dedupe and Magellan, on the CORA "
    "citation benchmark. Table 3 reports precision, recall and F1 for each system; Table 4 reports "
    "the running time per million records on one machine."
)
TABLE_RESULTS = [
    ("System", "Precision", "Recall", "F1"),
    ("Marlin", "0.850", "0.760", "0.802"),
    ("Dedupe", "0.812", "0.701", "0.752"),
    ("Magellan", "0.790", "0.744", "0.766"),
]
TABLE_TIMES = [("System", "Minutes"), ("Marlin", "14"), ("Dedupe", "41"), ("Magellan", "29")]

SHORT_LINES = [
    "Lantern crawler: default fanout 12.",
    "Politeness delay: 2 s per host",
    "Maximum crawl depth: 6 links",
]

CJK_TITLE = "Storage notes"
CJK_SENTENCES = [
    "本系统把每个文件切分为固定大小的数据块。",
    "每个数据块默认保存三个副本，分布在不同的机架上。",  # noqa: RUF001 (Chinese punctuation)
    "主节点只保存元数据，不保存文件内容。",  # noqa: RUF001
    "客户端直接与数据节点交换文件数据。",
    "数据节点每五秒向主节点发送一次心跳消息。",
    "如果主节点在一分钟内没有收到心跳，就认为该节点已经失效。",  # noqa: RUF001
]
CJK_CHARS_PER_LINE = 24
# A fixed creation date keeps the files byte-identical across runs (a paper is one file by hash).
CREATED = datetime(2026, 1, 1, tzinfo=UTC)


def table_pdf() -> bytes:
    """Page 1: title and prose; page 2: two results tables drawn as cells (one row a line)."""
    pdf = FPDF()
    pdf.set_creation_date(CREATED)
    pdf.set_title(TABLE_TITLE)
    pdf.set_author("A. Example")
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 14)
    pdf.multi_cell(0, 8, TABLE_TITLE, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, TABLE_PROSE)
    pdf.add_page()
    for caption, rows in (
        ("Table 3: Record linkage results on the CORA benchmark.", TABLE_RESULTS),
        ("Table 4: Running time per million records.", TABLE_TIMES),
    ):
        pdf.set_font("Helvetica", size=11)
        pdf.cell(0, 8, caption, new_x="LMARGIN", new_y="NEXT")
        for row in rows:
            for cell in row:
                pdf.cell(30, 7, cell)
            pdf.ln(7)
        pdf.ln(6)
    return bytes(pdf.output())


def short_lines_pdf() -> bytes:
    """One short line (fewer than 40 characters) on each page."""
    pdf = FPDF()
    pdf.set_creation_date(CREATED)
    pdf.set_title("Lantern crawler settings")
    for line in SHORT_LINES:
        pdf.add_page()
        pdf.set_font("Helvetica", size=11)
        pdf.cell(0, 8, line)
    return bytes(pdf.output())


def cjk_pdf() -> bytes:
    """One page: an English title, then `CJK_SENTENCES` run together and wrapped every
    `CJK_CHARS_PER_LINE` characters (so sentences break across lines)."""
    text = "".join(CJK_SENTENCES)
    lines = [text[i : i + CJK_CHARS_PER_LINE] for i in range(0, len(text), CJK_CHARS_PER_LINE)]
    content = [f"BT /F1 14 Tf 72 770 Td ({CJK_TITLE}) Tj ET"]
    for number, line in enumerate(lines):
        hex_codes = line.encode("utf-16-be").hex().upper()
        content.append(f"BT /F2 12 Tf 72 {740 - 18 * number} Td <{hex_codes}> Tj ET")
    stream = "\n".join(content).encode("ascii")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /UniGB-UCS2-H /DescendantFonts [7 0 R] >>",
        b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light "
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (GB1) /Supplement 2 >> /FontDescriptor 8 0 R /DW 1000 >>",
        b"<< /Type /FontDescriptor /FontName /STSong-Light /Flags 6 /FontBBox [-25 -254 1000 880] "
        b"/ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 880 /StemV 93 >>",
    ]
    return _assemble(objects)


def _assemble(objects: list[bytes]) -> bytes:
    """A PDF file of *objects* (numbered from 1, the first the catalog) with its xref table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


GENERATED: dict[str, Callable[[], bytes]] = {
    "results-table.pdf": table_pdf,
    "short-lines.pdf": short_lines_pdf,
    "cjk-notes.pdf": cjk_pdf,
}


def write_generated(folder: Path) -> list[Path]:
    """Write every generated PDF into *folder* (created if needed); returns their paths. The bytes
    are deterministic for a given fpdf2 version, so re-running skips papers already ingested."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, build in GENERATED.items():
        path = folder / name
        data = build()
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        paths.append(path)
    return paths
