"""Figures and tables of a PDF, found by their captions and cropped to PNG images.

Imports no Django: the parse child (`indexing.pdfparse`) runs it under the parse's memory and time
limits, page by page while each page's layout is loaded (`FigureFinder.add_page`), then renders the
crops with PDFium (`render_figures`). `extract_figures` does both for a path (tests, benchmarks).

How a figure is found on a page (pdfplumber's objects; coordinates in points from the page's
top-left corner):

1. Lines: words grouped into rows and cut where a gap is wider than LINE_GAP_RATIO of the text
   size, so the two columns of a row are two lines and a table row is several.
2. Captions: a line of at least MIN_CAPTION_SIZE points starting with a label ("Figure 3",
   "Fig. 3", "FIGURE 3", "Table 2", "TABLE II") followed by ":", "|" or a dash; or by ".", a
   capital or nothing when the label is set apart from the page's body text (another font or
   size: a bold "Fig. 3." or "Table 2 Results"), so "... in Table 2. We ..." wrapped onto a new
   line is not a caption. The caption runs on over the lines right below it, within its first
   line's extent, in the same size.
3. Stoppers: prose lines (at least PROSE_MIN_WORDS words over PROSE_MIN_WIDTH_SHARE of the page
   width, not framed by drawn edges; with the short last line of their paragraph) and the other
   captions: a region never reaches past one. For a table, prose-like lines between rules are
   its long cells, not stoppers, and headings (HEADING_SIZE_STEP larger than the body) are.
4. Candidates: from the caption's edge, up and down, take the drawn objects (images, rects,
   lines, curves) and text lines of the caption's column one by one, nearest first, while the
   gap to the next is at most MAX_GAP_RATIO body text sizes and no stopper comes first; then grow
   over drawn objects of the column within that gap whose addition crosses no stopper, and take in
   the text near the result (axis labels, tick numbers). A figure needs a drawn object; a table a
   drawn rule or MIN_TABLE_LINES lines of text. The column is the page's full width when the
   caption crosses the page's middle or the page is set in one column, else the half it is in.
5. Choice: each caption takes its cheapest candidate that no cheaper caption took (cost: distance
   from the caption, more on the side its kind's captions are not usually on: below a figure,
   above a table), so a table captioned below it and one captioned above it, stacked, each get
   their own.
6. Across pages: running headers and footers (the outermost lines of the page margins recurring
   on several pages) are cut off the crops, and each label is kept once, at its first page.

The crop is padded (glyphs may be drawn past their boxes), rendered, and trimmed to its ink.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from papers.figures import FIGURE, NAME_PATTERN, NUMBER_PATTERN, TABLE, FigureImage, figure_label

Box = tuple[float, float, float, float]
"""(x0, top, x1, bottom) in PDF points from the page's top-left corner."""

# Words further apart than this many text sizes on one row are on different lines; words whose tops
# differ by at most this share of the text size are on one row.
LINE_GAP_RATIO = 1.2
ROW_TOLERANCE_RATIO = 0.35
# A prose line: at least this many words spanning at least this share of the page's width.
PROSE_MIN_WORDS = 6
PROSE_MIN_WIDTH_SHARE = 0.3
# The widest gap, in body text sizes, between neighbouring parts of one figure (and between a
# caption and its figure: twice that).
MAX_GAP_RATIO = 2.6
# A caption runs on over lines whose top is at most this many text sizes below the line before.
CAPTION_LINE_GAP_RATIO = 0.8
CAPTION_MAX_LINES = 15
CAPTION_MAX_CHARS = 2000
# A prose-like line with rules spanning it above and below, each within this many text sizes, is a
# table's row (a long cell), which a table's region may take in.
TABLE_RULE_REACH_LINES = 25
# Captions are set in at least this size (points); smaller labelled text is inside a figure (a
# screenshot of a paper showing its own "Figure 1").
MIN_CAPTION_SIZE = 6.5
# A line set at least this much larger than the body text (points) is a heading: a table never
# reaches past one.
HEADING_SIZE_STEP = 1.0
# Running headers and footers sit in the top and bottom MARGIN_SHARE of a page; a line there is
# one when it recurs on at least RUNNING_MIN_PAGES pages and RUNNING_MIN_SHARE of them (odd and
# even pages often differ).
MARGIN_SHARE = 0.12
RUNNING_MIN_PAGES = 3
RUNNING_MIN_SHARE = 0.2
# A table without a drawn rule has at least this many lines of text.
MIN_TABLE_LINES = 3
# Room left around a crop, points; crops smaller than the minimum are not figures.
CROP_PADDING = 2.0
MIN_CROP_WIDTH = 24.0
MIN_CROP_HEIGHT = 12.0
# Drawn objects at least this long (points) are rules and frames (`_Edges`).
RULE_MIN_LENGTH = 30.0
# A pixel darker than this (0..255 grey) is ink when a render is trimmed to its content.
INK_LEVEL = 245
# Drawn objects covering more of the page than this are backgrounds or frames, not figures.
MAX_OBJECT_PAGE_SHARE = 0.8
# Pages with more drawn objects than this (a plot of a million points) are left alone.
MAX_OBJECTS_PER_PAGE = 20_000

_CAPTION = re.compile(rf"^{NAME_PATTERN}\s?{NUMBER_PATTERN}(?:\s*(?P<delimiter>[:.|\u2014\u2013-])|\s+(?P<next>\S)|$)")
_CAPTION_HINT = re.compile(r"Fig|FIG|Tab|TAB")


@dataclass(frozen=True)
class FigureRegion:
    """A figure or table found on a page: `page` 1-based, `kind` FIGURE or TABLE, `label` the
    normal form ("Figure 3"), `caption` its text as printed, `bbox` the crop (points from the
    page's top-left), `view` the page's crop box in the same coordinates (what PDFium renders)."""

    page: int
    kind: str
    label: str
    caption: str
    bbox: Box
    view: Box


@dataclass(frozen=True)
class _Line:
    words: tuple[dict[str, Any], ...]
    box: Box
    size: float

    @property
    def text(self) -> str:
        return " ".join(str(word["text"]) for word in self.words)


@dataclass(frozen=True)
class _Item:
    """A drawn object or a text line a region may take in."""

    box: Box
    drawn: bool


@dataclass(frozen=True)
class _Caption:
    kind: str
    label: str
    text: str
    box: Box
    lines: tuple[_Line, ...]


# --- geometry -------------------------------------------------------------------------------------


def _union(boxes: Iterable[Box]) -> Box:
    x0s, tops, x1s, bottoms = zip(*boxes, strict=True)
    return min(x0s), min(tops), max(x1s), max(bottoms)


def _intersects(a: Box, b: Box, slack: float = 0.0) -> bool:
    """Whether *a* and *b* overlap by more than *slack* points on both axes."""
    return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


def _gap(a: Box, b: Box) -> float:
    """The distance between two boxes (0 when they touch or overlap): the larger axis gap."""
    return max(b[0] - a[2], a[0] - b[2], b[1] - a[3], a[1] - b[3], 0.0)


def _flipped(box: Box) -> Box:
    """*box* mirrored top to bottom, so that looking down from a caption is looking up."""
    return box[0], -box[3], box[2], -box[1]


def _in_band(box: Box, band: tuple[float, float]) -> bool:
    """Whether *box* belongs to the column *band* (x0, x1): its middle is in it, or half of it is."""
    middle = (box[0] + box[2]) / 2
    overlap = min(box[2], band[1]) - max(box[0], band[0])
    return band[0] <= middle <= band[1] or overlap >= 0.5 * (box[2] - box[0])


# --- lines and captions ---------------------------------------------------------------------------


def _lines(words: Sequence[dict[str, Any]]) -> list[_Line]:
    """Upright words in lines: rows of words whose tops are within ROW_TOLERANCE_RATIO of the
    text size of the row's first word (a tall word in one column must not chain the rows of the
    other), cut at wide gaps."""
    rows: list[list[dict[str, Any]]] = []
    for word in sorted(words, key=lambda w: (w["top"], w["x0"])):
        if rows and word["top"] - rows[-1][0]["top"] <= ROW_TOLERANCE_RATIO * float(rows[-1][0].get("size", 10)):
            rows[-1].append(word)
        else:
            rows.append([word])
    lines: list[_Line] = []
    for row in rows:
        row.sort(key=lambda w: w["x0"])
        current = [row[0]]
        for word in row[1:]:
            size = max(float(word.get("size", 10)), float(current[-1].get("size", 10)))
            if word["x0"] - current[-1]["x1"] > LINE_GAP_RATIO * size:
                lines.append(_line(current))
                current = []
            current.append(word)
        lines.append(_line(current))
    return lines


def _line(words: list[dict[str, Any]]) -> _Line:
    sizes = sorted(float(w.get("size", 10)) for w in words)
    return _Line(
        words=tuple(words),
        box=_union((w["x0"], w["top"], w["x1"], w["bottom"]) for w in words),
        size=sizes[len(sizes) // 2],
    )


def _body_font(chars: Sequence[dict[str, Any]]) -> tuple[str, float]:
    """The (font name, size) most of the page's characters are set in."""
    counts = Counter(
        (str(c.get("fontname", "")), round(float(c.get("size", 0)), 1))
        for c in chars
        if float(c.get("size", 0)) >= MIN_CAPTION_SIZE
    )
    return counts.most_common(1)[0][0] if counts else ("", 0.0)


def _caption_start(line: _Line, body: tuple[str, float]) -> tuple[str, str] | None:
    """(kind, label) when *line* starts a caption (see the module docstring), else None."""
    match = _CAPTION.match(line.text)
    if match is None or line.size < MIN_CAPTION_SIZE:
        return None
    first = line.words[0]
    set_apart = str(first.get("fontname", "")) != body[0] or abs(float(first.get("size", 0)) - body[1]) >= 0.5
    delimiter, following = match["delimiter"], match["next"]
    if delimiter == "." or (delimiter is None and (following is None or following[:1].isupper())):
        if not set_apart:
            return None
    elif delimiter is None:  # a lower-case word follows: "Table 1 summarizes ..."
        return None
    if match["name"].endswith("s") and not match["name"].endswith("s."):
        return None  # "Figures 3 and 4": a mention, never a caption
    return figure_label(match["name"], match["number"])


def _continues(first: _Line, other: _Line) -> bool:
    """Whether *other*, a line below a caption's *first* line, may continue the caption: it lies
    within the first line's extent (a caption is justified, centred or indented under its first
    line), or starts where a first line holding the label alone ("FIGURE 3") starts. Body text of
    the column beside a short centred caption reaches past it and is not the caption's."""
    x0, x1 = first.box[0], first.box[2]
    if other.box[0] >= x0 - 2 and other.box[2] <= x1 + 2:
        return True
    return len(first.words) <= 3 and abs(other.box[0] - x0) <= first.size


def _captions(lines: Sequence[_Line], body: tuple[str, float]) -> list[_Caption]:
    """The captions among *lines*, each with the lines it runs on over."""
    captions: list[_Caption] = []
    taken: set[int] = set()
    for index, line in enumerate(lines):
        if index in taken:
            continue
        start = _caption_start(line, body)
        if start is None:
            continue
        block = [line]
        for other_index in range(index + 1, len(lines)):
            if len(block) >= CAPTION_MAX_LINES:
                break
            other, last = lines[other_index], block[-1]
            if other.box[1] > last.box[3] + CAPTION_LINE_GAP_RATIO * last.size:
                break
            if other.box[1] > last.box[1] + 1 and abs(other.size - line.size) < 0.6 and _continues(line, other):
                if _caption_start(other, body) is not None:
                    break
                block.append(other)
                taken.add(other_index)
        text = block[0].text
        for following in block[1:]:
            # A word broken over two lines ("Opera-" / "tion") is joined again.
            broken = text.endswith("-") and following.text[:1].islower()
            text = text[:-1] + following.text if broken else f"{text} {following.text}"
        captions.append(
            _Caption(
                kind=start[0],
                label=start[1],
                text=" ".join(text.split())[:CAPTION_MAX_CHARS],
                box=_union(b.box for b in block),
                lines=tuple(block),
            )
        )
    return captions


# --- regions --------------------------------------------------------------------------------------


def _drawn_objects(page: Any) -> list[Box]:
    """Boxes of the page's images, rects, lines and curves, without page-sized backgrounds."""
    page_area = float(page.width * page.height) or 1.0
    boxes: list[Box] = []
    for obj in (*page.images, *page.rects, *page.lines, *page.curves):
        box = (float(obj["x0"]), float(obj["top"]), float(obj["x1"]), float(obj["bottom"]))
        if obj.get("object_type") == "rect" and not (obj.get("fill") or obj.get("stroke")):
            continue  # a clipping or invisible rectangle
        if (box[2] - box[0]) * (box[3] - box[1]) > MAX_OBJECT_PAGE_SHARE * page_area:
            continue
        boxes.append(box)
    return boxes


def _walk(caption: Box, items: Sequence[_Item], gap: float) -> list[_Item]:
    """The *items* above *caption* reached one by one, nearest first, with gaps of at most *gap*
    (twice that to the first)."""
    edge = caption[1]
    found: list[_Item] = []
    for item in sorted(items, key=lambda i: -i.box[3]):
        if edge - item.box[3] > (gap if found else 2 * gap):
            break
        found.append(item)
        edge = min(edge, item.box[1])
    return found


def _grow(region: Box, boxes: Sequence[Box], stoppers: Sequence[Box], reach: float) -> Box:
    """*region* grown over those of *boxes* within *reach* of it, as long as the grown region
    overlaps no stopper."""
    pending = list(boxes)
    for _ in range(50):
        grown = False
        remaining: list[Box] = []
        for box in pending:
            if _gap(region, box) > reach:
                remaining.append(box)
                continue
            bigger = _union((region, box))
            if bigger != region and any(_intersects(bigger, stopper, slack=1.0) for stopper in stoppers):
                continue
            region, grown = bigger, True
        pending = remaining
        if not grown:
            break
    return region


@dataclass(frozen=True)
class _Scene:
    """What one caption's region is cut from: the page's `drawn` objects and `texts` (boxes), the
    `stoppers` it may not reach past, the caption's column `band` (x0, x1) and the widest `gap`."""

    drawn: Sequence[Box]
    texts: Sequence[Box]
    stoppers: Sequence[Box]
    band: tuple[float, float]
    gap: float

    def flipped(self) -> _Scene:
        """The scene mirrored top to bottom (see `_flipped`)."""
        return replace(
            self,
            drawn=[_flipped(b) for b in self.drawn],
            texts=[_flipped(b) for b in self.texts],
            stoppers=[_flipped(b) for b in self.stoppers],
        )


def _region_above(caption: Box, scene: _Scene, *, needs_drawing: bool) -> tuple[Box, float] | None:
    """The region above the *caption* box (see the module docstring) and its distance from it, or
    None."""
    above, band, gap = caption[1] + 1, scene.band, scene.gap
    limit = max((s[3] for s in scene.stoppers if s[3] <= above and _in_band(s, band)), default=float("-inf"))
    items = [_Item(box, True) for box in scene.drawn if box[3] <= above and _in_band(box, band)]
    items += [_Item(box, False) for box in scene.texts if box[3] <= above and _in_band(box, band)]
    items = [item for item in items if item.box[1] >= limit]
    seeds = [item.box for item in _walk(caption, items, gap) if item.drawn or not needs_drawing]
    if not seeds:
        return None
    region = _grow(_union(seeds), [i.box for i in items if i.drawn], scene.stoppers, gap)
    # Text close to the drawing is its labels (tick numbers, axis titles, panel captions).
    region = _grow(region, [i.box for i in items if not i.drawn], scene.stoppers, gap / 2)
    inside = [item for item in items if _within(item.box, region)]
    if not any(item.drawn for item in inside) and len(inside) < MIN_TABLE_LINES:
        return None  # a page number or a stray line below a caption is not a table
    return region, max(caption[1] - region[3], 0.0)


def _candidates(caption: _Caption, scene: _Scene) -> list[tuple[float, Box]]:
    """(cost, crop) of the regions *caption* may belong to: above it and below it, never
    overlapping it. The cost is the distance from the caption; the side a caption is not usually
    on costs more (much more for figures, whose captions are below them)."""
    found: list[tuple[float, Box]] = []
    for direction in ("up", "down"):
        if direction == "up":
            result = _region_above(caption.box, scene, needs_drawing=caption.kind == FIGURE)
        else:
            result = _region_above(_flipped(caption.box), scene.flipped(), needs_drawing=caption.kind == FIGURE)
        if result is None:
            continue
        region, distance = (result[0] if direction == "up" else _flipped(result[0])), result[1]
        preferred = "up" if caption.kind == FIGURE else "down"
        if direction != preferred:
            distance = distance * 3 + 2 * scene.gap if caption.kind == FIGURE else distance + 0.5
        # Padding and label text may reach the caption: the crop stops short of it.
        if direction == "up":
            region = (region[0], region[1], region[2], min(region[3], caption.box[1] - 0.5))
        else:
            region = (region[0], max(region[1], caption.box[3] + 0.5), region[2], region[3])
        found.append((distance, region))
    return found


def _padded(box: Box, *, page: Box, stoppers: Sequence[Box], side: float) -> Box:
    """*box* with CROP_PADDING around it and *side* more left and right (glyphs may be drawn wider
    than the PDF's widths say, and the render is trimmed to its ink after), inside *page*, each side
    kept back where it would reach a stopper it did not reach before."""
    x0, top, x1, bottom = box
    wanted = (
        max(x0 - CROP_PADDING - side, page[0]),
        max(top - CROP_PADDING, page[1]),
        min(x1 + CROP_PADDING + side, page[2]),
        min(bottom + CROP_PADDING, page[3]),
    )
    result = list(box)
    for index in range(4):
        trial = list(result)
        trial[index] = wanted[index]
        clear = not any(
            _intersects(tuple(trial), s, slack=0.5) and not _intersects(box, s, slack=0.5)  # type: ignore[arg-type]
            for s in stoppers
        )
        if clear:
            result = trial
    return result[0], result[1], result[2], result[3]


def _within(inner: Box, outer: Box, slack: float = 1.0) -> bool:
    return (
        inner[0] >= outer[0] - slack
        and inner[1] >= outer[1] - slack
        and inner[2] <= outer[2] + slack
        and inner[3] <= outer[3] + slack
    )


def _overlap_share(a: Box, b: Box) -> float:
    """The share of the smaller of *a* and *b* that the other covers."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return width * height / smaller if smaller > 0 else 1.0


@dataclass(frozen=True)
class _Layout:
    """What regions are cut from on one page (boxes in points): `bounds` the page, `body` its body
    font (name, size), `captions`, `drawn` objects, `prose` lines (stoppers), `ruled` prose-like
    lines between rules (a table's long cells), `headings` lines set larger than the body, `texts`
    the other text lines and rotated words; `one_column` whether most prose crosses the middle."""

    bounds: Box
    body: tuple[str, float]
    captions: list[_Caption]
    drawn: list[Box]
    prose: list[Box]
    ruled: list[Box]
    headings: list[Box]
    texts: list[Box]
    one_column: bool

    @property
    def gap(self) -> float:
        return MAX_GAP_RATIO * (self.body[1] or 10.0)

    def band(self, caption: _Caption) -> tuple[float, float]:
        """The column *caption* belongs to: the page's width, or the half it is in."""
        x0, _, x1, _ = self.bounds
        middle = (x0 + x1) / 2
        if self.one_column or caption.box[0] < middle < caption.box[2]:
            return x0, x1
        return (x0, middle) if caption.box[2] <= middle else (middle, x1)


def _layout(page: Any) -> _Layout | None:
    """The layout of a pdfplumber *page*, or None when it holds no caption (checked cheaply first:
    no "Fig" or "Tab" in its text) or more than MAX_OBJECTS_PER_PAGE drawn objects."""
    chars = page.chars
    if not chars or not _CAPTION_HINT.search("".join(c["text"] for c in chars)):
        return None
    drawn = _drawn_objects(page)
    if len(drawn) > MAX_OBJECTS_PER_PAGE:
        return None
    words = page.extract_words(x_tolerance_ratio=0.15, extra_attrs=["fontname", "size"])
    lines = _lines([w for w in words if w.get("upright", True)])
    body = _body_font(chars)
    captions = _captions(lines, body)
    if not captions:
        return None
    bounds: Box = tuple(float(v) for v in page.bbox)  # type: ignore[assignment]
    in_captions = {id(line) for caption in captions for line in caption.lines}
    edges = _Edges.of(drawn)
    prose_ids = {
        id(line)
        for line in lines
        if id(line) not in in_captions
        and len(line.words) >= PROSE_MIN_WORDS
        and line.box[2] - line.box[0] >= PROSE_MIN_WIDTH_SHARE * (bounds[2] - bounds[0])
        and not edges.encloses(line.box)
    }
    # The short last line of a paragraph is prose too: right below a prose line, starting where it
    # does (or left of it, below an indented first line) and ending before it does.
    for line in lines:
        if id(line) in prose_ids or id(line) in in_captions:
            continue
        if any(
            other.box[0] - 2 * other.size <= line.box[0] <= other.box[0] + 2
            and line.box[2] <= other.box[2] + 2
            and 0 <= line.box[1] - other.box[3] <= 0.6 * other.size
            for other in lines
            if id(other) in prose_ids
        ):
            prose_ids.add(id(line))
    prose = [line.box for line in lines if id(line) in prose_ids]
    middle = (bounds[0] + bounds[2]) / 2
    texts = [line.box for line in lines if id(line) not in in_captions and id(line) not in prose_ids]
    return _Layout(
        bounds=bounds,
        body=body,
        captions=captions,
        drawn=drawn,
        prose=prose,
        ruled=[
            line.box
            for line in lines
            if id(line) in prose_ids and edges.rules(line.box, reach=TABLE_RULE_REACH_LINES * line.size)
        ],
        headings=[
            line.box for line in lines if id(line) not in in_captions and line.size >= body[1] + HEADING_SIZE_STEP
        ],
        # Rotated words (a y axis title) are figure text too.
        texts=texts + [(w["x0"], w["top"], w["x1"], w["bottom"]) for w in words if not w.get("upright", True)],
        one_column=bool(prose) and sum(b[0] < middle < b[2] for b in prose) >= 0.5 * len(prose),
    )


def locate_figures(page: Any) -> list[FigureRegion]:
    """The figures and tables of one pdfplumber *page* that have a caption, in reading order of
    their captions (see the module docstring). Pages without "Fig"/"Tab" in their text return at
    once.

    Each caption takes its cheapest region (see `_candidates`) that no cheaper caption took:
    between a table whose caption is below it and a table below that caption, the nearer wins.
    """
    layout = _layout(page)
    if layout is None:
        return []
    options: list[tuple[float, int, Box]] = []
    for index, caption in enumerate(layout.captions):
        others = [other.box for other in layout.captions if other is not caption]
        if caption.kind == FIGURE:
            stoppers, texts = [*layout.prose, *others], layout.texts
        else:  # a table's long cells are its content; a heading above it is not
            ruled = set(layout.ruled)
            stoppers = [*(b for b in layout.prose if b not in ruled), *layout.headings, *others]
            texts = [*(b for b in layout.texts if b not in layout.headings), *layout.ruled]
        scene = _Scene(drawn=layout.drawn, texts=texts, stoppers=stoppers, band=layout.band(caption), gap=layout.gap)
        for cost, box in _candidates(caption, scene):
            box = _padded(box, page=layout.bounds, stoppers=[*stoppers, caption.box], side=layout.body[1] or 10.0)
            if box[2] - box[0] >= MIN_CROP_WIDTH and box[3] - box[1] >= MIN_CROP_HEIGHT:
                options.append((cost, index, box))
    chosen: dict[int, Box] = {}
    for _, index, box in sorted(options, key=lambda option: option[0]):
        if index not in chosen and all(_overlap_share(box, taken) < 0.5 for taken in chosen.values()):
            chosen[index] = box
    view: Box = tuple(float(v) for v in page.cropbox)  # type: ignore[assignment]
    return [
        FigureRegion(
            page=int(page.page_number),
            kind=layout.captions[index].kind,
            label=layout.captions[index].label,
            caption=layout.captions[index].text,
            bbox=(round(box[0], 2), round(box[1], 2), round(box[2], 2), round(box[3], 2)),
            view=view,
        )
        for index, box in sorted(chosen.items())
    ]


def margin_lines(page: Any) -> list[tuple[str, Box]]:
    """(key, box) of the outermost text lines of a pdfplumber *page*: those of the first row in
    its top MARGIN_SHARE and of the last row in its bottom one, where running headers and footers
    are. The key is the line's text with numbers as "#" and its rounded position, so the same
    header on every page has one key."""
    x0, top, x1, bottom = (float(v) for v in page.bbox)
    reach = MARGIN_SHARE * (bottom - top)
    found: list[tuple[str, Box]] = []
    for band, outermost in (((x0, top, x1, top + reach), min), ((x0, bottom - reach, x1, bottom), max)):
        words = [w for w in page.within_bbox(band).extract_words(x_tolerance_ratio=0.15) if w.get("upright", True)]
        if not words:
            continue
        edge = outermost(w["top"] for w in words)
        row = [w for w in words if abs(w["top"] - edge) <= ROW_TOLERANCE_RATIO * (w["bottom"] - w["top"])]
        for line in _lines(row):
            text = re.sub(r"\d+", "#", line.text.lower())
            found.append((f"{round(line.box[1] / 3)}:{text}", line.box))
    return found


class FigureFinder:
    """Collects the figures of a document page by page (`add_page`, while each pdfplumber page is
    loaded), then hands them out without running headers and footers (`regions`)."""

    def __init__(self) -> None:
        self._regions: list[FigureRegion] = []
        self._margins: dict[int, list[tuple[str, Box]]] = {}

    def add_page(self, page: Any) -> None:
        self._regions.extend(locate_figures(page))
        self._margins[int(page.page_number)] = margin_lines(page)

    def regions(self, *, max_figures: int) -> list[FigureRegion]:
        """The regions found, the first of each label only, at most *max_figures*, each cut back
        from any running line (a key on at least RUNNING_MIN_PAGES pages and RUNNING_MIN_SHARE of
        them) it reaches."""
        pages = Counter(key for lines in self._margins.values() for key in {key for key, _ in lines})
        needed = max(RUNNING_MIN_PAGES, RUNNING_MIN_SHARE * len(self._margins))
        trimmed: list[FigureRegion] = []
        for region in self._regions:
            running = [box for key, box in self._margins.get(region.page, []) if pages[key] >= needed]
            box = _without_lines(region.bbox, running)
            if box is not None:
                trimmed.append(replace(region, bbox=box))
        return select_figures(trimmed, max_figures=max_figures)


def _without_lines(box: Box, lines: Sequence[Box]) -> Box | None:
    """*box* cut back from each of *lines* it overlaps (from above for a line in its upper half,
    else from below); None when too little is left."""
    x0, top, x1, bottom = box
    for line in lines:
        if not _intersects((x0, top, x1, bottom), line, slack=0.5):
            continue
        if (line[1] + line[3]) / 2 < (top + bottom) / 2:
            top = line[3] + 0.5
        else:
            bottom = line[1] - 0.5
    if x1 - x0 < MIN_CROP_WIDTH or bottom - top < MIN_CROP_HEIGHT:
        return None
    return x0, top, x1, bottom


@dataclass(frozen=True)
class _Edges:
    """The long edges of a page's drawn objects: `horizontal` (x0, x1, y) at least
    RULE_MIN_LENGTH long, `vertical` (y0, y1, x) at least half that."""

    horizontal: tuple[tuple[float, float, float], ...]
    vertical: tuple[tuple[float, float, float], ...]

    @classmethod
    def of(cls, drawn: Sequence[Box]) -> _Edges:
        wide = [box for box in drawn if box[2] - box[0] >= RULE_MIN_LENGTH]
        tall = [box for box in drawn if box[3] - box[1] >= RULE_MIN_LENGTH / 2]
        return cls(
            horizontal=tuple({(b[0], b[2], y) for b in wide for y in (b[1], b[3])}),
            vertical=tuple({(b[1], b[3], x) for b in tall for x in (b[0], b[2])}),
        )

    def _spans(self, box: Box, *, above: bool, reach: float) -> bool:
        x0, top, x1, bottom = box
        for h0, h1, y in self.horizontal:
            if h0 <= x0 + 2 and h1 >= x1 - 2:
                distance = top - y if above else y - bottom
                if -1 <= distance <= reach:
                    return True
        return False

    def _beside(self, box: Box, *, left: bool) -> bool:
        x0, top, x1, bottom = box
        for v0, v1, x in self.vertical:
            if v0 <= top + 1 and v1 >= bottom - 1 and (x <= x0 + 1 if left else x >= x1 - 1):
                return True
        return False

    def encloses(self, box: Box) -> bool:
        """Whether edges frame *box* on all four sides: text in a drawn box (a framed listing)."""
        return (
            self._spans(box, above=True, reach=float("inf"))
            and self._spans(box, above=False, reach=float("inf"))
            and self._beside(box, left=True)
            and self._beside(box, left=False)
        )

    def rules(self, box: Box, *, reach: float) -> bool:
        """Whether rules span *box* above and below it, each within *reach* points: a table row."""
        return self._spans(box, above=True, reach=reach) and self._spans(box, above=False, reach=reach)


# --- selection and rendering ----------------------------------------------------------------------


def select_figures(regions: Iterable[FigureRegion], *, max_figures: int) -> list[FigureRegion]:
    """*regions* in page order, the first of each label only, at most *max_figures* of them."""
    seen: set[str] = set()
    chosen: list[FigureRegion] = []
    for region in regions:
        if region.label in seen:
            continue
        seen.add(region.label)
        chosen.append(region)
        if len(chosen) >= max_figures:
            break
    return chosen


def render_figures(
    path: str | Path, regions: Sequence[FigureRegion], *, dpi: int, max_pixels: int
) -> list[FigureImage]:
    """Render each of *regions* of the PDF at *path* to PNG with PDFium, at *dpi* but with neither
    side over *max_pixels* pixels."""
    import pypdfium2

    images: list[FigureImage] = []
    document = pypdfium2.PdfDocument(str(path))
    try:
        for region in regions:
            images.append(_render(document, region, dpi=dpi, max_pixels=max_pixels))
    finally:
        document.close()
    return images


def _render(document: Any, region: FigureRegion, *, dpi: int, max_pixels: int) -> FigureImage:
    """*region* rendered, then trimmed to its ink (keeping CROP_PADDING): the crop was padded
    for glyphs drawn past their boxes, and the trim takes the blank part of that back."""
    x0, top, x1, bottom = region.bbox
    v0, vtop, v1, vbottom = region.view
    scale = min(dpi / 72, max_pixels / max(x1 - x0, bottom - top))
    page = document[region.page - 1]
    try:
        # PDFium renders the crop box, and crops (left, bottom, right, top) from its edges.
        crop = (max(x0 - v0, 0.0), max(vbottom - bottom, 0.0), max(v1 - x1, 0.0), max(top - vtop, 0.0))
        image = page.render(scale=scale, crop=crop).to_pil()
    finally:
        page.close()
    ink = image.convert("L").point(lambda value: 255 if value < INK_LEVEL else 0).getbbox()
    if ink is not None:
        margin = round(CROP_PADDING * scale)
        kept = (
            max(ink[0] - margin, 0),
            max(ink[1] - margin, 0),
            min(ink[2] + margin, image.width),
            min(ink[3] + margin, image.height),
        )
        image = image.crop(kept)
        x0, top, x1, bottom = x0 + kept[0] / scale, top + kept[1] / scale, x0 + kept[2] / scale, top + kept[3] / scale
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return FigureImage(
        page=region.page,
        kind=region.kind,
        label=region.label,
        caption=region.caption,
        bbox=(round(x0, 2), round(top, 2), round(x1, 2), round(bottom, 2)),
        png=buffer.getvalue(),
        width=image.width,
        height=image.height,
    )


def extract_figures(
    path: str | Path, *, max_figures: int = 50, dpi: int = 150, max_pixels: int = 1600
) -> list[FigureImage]:
    """The captioned figures and tables of the PDF at *path*, cropped and rendered (see
    `FigureFinder`, `render_figures`). Raises what pdfplumber and PDFium raise for an unreadable
    file."""
    import pdfplumber

    finder = FigureFinder()
    with pdfplumber.open(str(path)) as pdf:
        for page in pdf.pages:
            finder.add_page(page)
            page.close()
    return render_figures(path, finder.regions(max_figures=max_figures), dpi=dpi, max_pixels=max_pixels)


__all__ = ["FIGURE", "TABLE", "FigureFinder", "FigureRegion", "extract_figures", "locate_figures", "render_figures"]
