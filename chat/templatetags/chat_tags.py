"""Rendering of chat messages: plain text with `[N]` markers turned into citation links.

Message text comes from a model or from papers, so it is always escaped; only the markup built
here (links and their popups) is trusted. `chat/static/chat/chat.js` builds the same markup for
live answers.
"""

from __future__ import annotations

import re
from typing import Any

from django import template
from django.urls import reverse
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString

register = template.Library()

MARKER = re.compile(r"\[(\d+)\]")


EXCERPT_CHARS = 200


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """*text* with white space folded, cut at a word boundary to at most *limit* characters ("…" added)."""
    folded = " ".join(text.split())
    if len(folded) <= limit:
        return folded
    return folded[:limit].rsplit(" ", 1)[0] + "…"


def citation_link(n: str, citation: dict[str, Any]) -> SafeString:
    """`<a class="citation">[N]<span class="citation-popup">Label, page P</span></a>` for one marker.

    The label is the paper's title, with first author and year when another paper of the project
    has the same title. A citation of a figure's caption, or of text that mentions a figure
    (`figure`), shows the figure's thumbnail before the title. Citations saved with a hover card
    (`cite`, see `chat.events`) add the quoted text, the first author and year, and two copy
    actions (author-year citation, BibTeX), which `chat.js` wires up; older citations show the
    title and page only.
    """
    paper_id, page = int(citation["paper_id"]), int(citation["page"])
    title = str(citation.get("label") or citation.get("title") or f"Paper {paper_id}")
    href = f"{reverse('papers:reader', args=[paper_id])}?page={page}"
    page_text = page_words(page, str(citation.get("printed") or ""))
    card = format_html('<span class="citation-title">{}</span>, {}', title, page_text)
    if citation.get("ocr"):
        card = format_html('{} <span class="label label-ocr">OCR text</span>', card)
    card = format_html("{}{}", figure_thumbnail(citation.get("figure")), card)
    if citation.get("cite"):
        quote = str(citation.get("quote") or "") or excerpt(str(citation.get("text") or ""))
        who = " ".join(str(part) for part in (citation.get("author"), citation.get("year")) if part)
        card = format_html(
            '{}{}{}<span class="citation-actions">'
            '<span class="copy-citation" role="button" tabindex="0" data-copy="{}">Copy citation</span> '
            '<span class="copy-citation" role="button" tabindex="0" data-copy="{}">Copy BibTeX</span></span>',
            format_html('<span class="citation-quote">“{}”</span>', quote) if quote else "",
            card,
            format_html('<span class="citation-meta">{}</span>', who) if who else "",
            citation["cite"],
            citation.get("bibtex") or "",
        )
    return format_html(
        '<a class="citation" href="{}" data-title="{}" data-page="{}" data-quote="{}" title="{}, {}">[{}]'
        '<span class="citation-popup" role="tooltip">{}</span></a>',
        href,
        title,
        page,
        highlight_quote(citation),
        title,
        page_text,
        n,
        card,
    )


def figure_thumbnail(figure: object) -> SafeString:
    """The hover card's `<img class="citation-figure">` of a citation's `figure` ({"url", "label"},
    see `chat.events`), or nothing. Only a same-origin path is shown (the CSP allows no other)."""
    if not isinstance(figure, dict):
        return SafeString("")
    url, label = str(figure.get("url") or ""), str(figure.get("label") or "")
    if not url.startswith("/") or url.startswith("//"):
        return SafeString("")
    return format_html('<img class="citation-figure" src="{}" alt="{}" loading="lazy">', url, label)


HIGHLIGHT_CHARS = 300


def highlight_quote(citation: dict[str, Any]) -> str:
    """The passage the reader highlights when the citation is clicked: the quoted sentence, else
    the start of the cited passage (`chat.js`'s highlightQuote says the same)."""
    return excerpt(str(citation.get("quote") or citation.get("text") or ""), HIGHLIGHT_CHARS)


def page_words(page: int, printed: str) -> str:
    """ "page 6", or "page 6 (printed 379)" when the page prints another number (`chat.js`'s
    pageWords says the same)."""
    return f"page {page} (printed {printed})" if printed and printed != str(page) else f"page {page}"


# A quoted sentence right before a marker (the extractive answer's “...” [N]).
QUOTED_BEFORE = re.compile(r"\u201c([^\u201c\u201d]{20,})\u201d\s*$")


def _with_own_quote(citation: dict[str, Any], before: str) -> dict[str, Any]:
    """*citation* with the sentence its marker quotes as its quote, when the text *before* the
    marker ends with one: two sentences citing one passage each show (and highlight) their own."""
    quoted = QUOTED_BEFORE.search(before)
    return {**citation, "quote": quoted.group(1)} if quoted else citation


@register.filter(name="with_citations")
def with_citations(text: str, citations: dict[str, Any] | None) -> SafeString:
    """Escape *text* and link each `[N]` whose N is a key of *citations*; other markers stay text."""
    citations = citations or {}
    parts: list[SafeString] = []
    position = 0
    for match in MARKER.finditer(text or ""):
        citation = citations.get(match.group(1))
        if not isinstance(citation, dict):
            continue
        before = text[position : match.start()]
        parts.append(escape(before))
        parts.append(citation_link(match.group(1), _with_own_quote(citation, before)))
        position = match.end()
    parts.append(escape((text or "")[position:]))
    return format_html_join("", "{}", ((part,) for part in parts))
