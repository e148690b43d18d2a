"""Figure and table labels, and the cropped figure images indexing hands to the papers app.

Pure (no Django): `indexing.figures` runs in the PDF parsing child process and builds `FigureImage`s;
`papers.services.replace_figures` stores them; chat reads `mentioned_labels` to show a cited
passage's figure.

A label is the normal form of what a paper prints: "Figure 3" for "Figure 3", "Fig. 3", "FIG. 3" or
"FIGURE 3"; "Table 2" for "Table 2", "TABLE 2" or "Tab. 2"; roman numerals upper-cased ("TABLE IV"
-> "Table IV"); a supplementary prefix kept ("Figure S1").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

FIGURE = "figure"
TABLE = "table"

# The words that name a figure or a table, and the number after them (digits with an optional
# one-letter prefix, "S1"; or a roman numeral, IEEE's "TABLE IV"). A letter after the digits
# ("3a", a panel) is matched and dropped.
NAME_PATTERN = r"(?P<name>Figures?|Figs?\.?|FIGURES?|FIGS?\.?|Tables?|TABLES?|Tabs?\.)"
NUMBER_PATTERN = r"(?P<number>[A-Z]?\d{1,3}|[IVXL]{1,6})(?P<panel>[a-z])?"
_MENTION = re.compile(rf"(?<![\w.]){NAME_PATTERN}\s?{NUMBER_PATTERN}(?![\w])")


@dataclass(frozen=True)
class FigureImage:
    """One figure or table of a paper, cropped from its page.

    `page` is the 1-based physical page; `kind` FIGURE or TABLE; `label` the normal form ("Figure
    1"); `caption` the caption's text as printed ("Figure 1: GFS Architecture"); `bbox` the crop
    (x0, top, x1, bottom) in PDF points from the page's top-left corner; `png` the rendered crop,
    `width` x `height` pixels.
    """

    page: int
    kind: str
    label: str
    caption: str
    bbox: tuple[float, float, float, float]
    png: bytes
    width: int
    height: int


def figure_label(name: str, number: str) -> tuple[str, str]:
    """(kind, label) for a printed *name* ("Fig.", "TABLE") and *number* ("3", "iv", "S1")."""
    kind = FIGURE if name[:1].upper() == "F" else TABLE
    return kind, f"{'Figure' if kind == FIGURE else 'Table'} {number.upper()}"


def mentioned_labels(text: str) -> list[str]:
    """The labels *text* names, in order of first mention, without repeats: "as Fig. 3 and Table
    II show" -> ["Figure 3", "Table II"]. A roman numeral counts only after "Table" or "TABLE"
    (IEEE numbers tables so; "Figure I" is rare and "Table I" a real label)."""
    found: list[str] = []
    for match in _MENTION.finditer(text):
        number = match["number"]
        kind, label = figure_label(match["name"], number)
        if number.isalpha() and kind != TABLE:
            continue
        if label not in found:
            found.append(label)
    return found


def first_mentioned(texts: Iterable[str], labels: Iterable[str]) -> str | None:
    """The first label of *labels* mentioned in *texts* (read in order: a quoted sentence before its
    passage), or None."""
    known = set(labels)
    for text in texts:
        for label in mentioned_labels(text):
            if label in known:
                return label
    return None
