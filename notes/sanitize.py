"""Note HTML: the server-side sanitiser every write goes through, and pure conversions between
note HTML, plain text and cited answers.

The sanitiser is nh3 (Rust `ammonia`): tags and attributes from the allow-lists below, `class` values
limited to the editor's own (`ql-…`) and the citation link's, URLs limited to http(s), mailto and
relative ones, every link given `rel="noopener"`. Scripts and styles are dropped with their content;
`style` and event-handler attributes (`onerror=…`) are never allowed, whatever the source (editor,
API, an accepted suggestion).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

import nh3
from django.urls import reverse

# What the editor (Quill 2, `notes/static/notes/vendor/`) writes, and what a model may suggest.
ALLOWED_TAGS = {
    "p", "br", "strong", "b", "em", "i", "u", "s", "code", "pre", "blockquote",
    "h1", "h2", "h3", "ul", "ol", "li", "a", "span", "sup", "sub", "div",
}  # fmt: skip
# `class` is allowed through ALLOWED_CLASSES only (ammonia refuses it in both).
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title", "data-paper-id", "data-page"},
    "li": {"data-list"},
}
ALLOWED_CLASSES = {
    "a": {"citation"},
    "li": {f"ql-indent-{n}" for n in range(1, 9)},
    "p": {"ql-align-center", "ql-align-right", "ql-align-justify", *(f"ql-indent-{n}" for n in range(1, 9))},
    "pre": {"ql-syntax"},
    "div": {"ql-code-block-container", "ql-code-block"},
    "span": {"ql-ui"},
}
URL_SCHEMES = {"http", "https", "mailto"}
MAX_NOTE_HTML_CHARS = 200_000


def sanitize_html(value: str) -> str:
    """*value* with only allow-listed markup left (see the module docstring). Idempotent."""
    return nh3.clean(
        value or "",
        tags=ALLOWED_TAGS,
        clean_content_tags={"script", "style"},
        attributes=ALLOWED_ATTRIBUTES,
        allowed_classes=ALLOWED_CLASSES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener",
        strip_comments=True,
    )


_BLOCK_END = re.compile(r"</(p|h[1-6]|li|blockquote|pre|div)>|<br\s*/?>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")
_BLANKS = re.compile(r"\n{3,}")


def html_to_text(value: str) -> str:
    """The text of note HTML, one line per block (paragraph, heading, list item), tags stripped
    and entities decoded: what the model reads and what a suggestion's line diff compares."""
    text = _BLOCK_END.sub("\n", value or "")
    text = html.unescape(_TAG.sub("", text)).replace("\xa0", " ")
    lines = [line.rstrip() for line in text.splitlines()]
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip()


_MARKER = re.compile(r"\[(\d+)\]")


def citation_anchor(n: str, citation: Mapping[str, Any]) -> str:
    """`<a class="citation" href="/papers/P/read/?page=N">[n]</a>`: a citation kept in a note."""
    paper_id, page = int(citation["paper_id"]), int(citation["page"])
    href = f"{reverse('papers:reader', args=[paper_id])}?page={page}"
    title = html.escape(f"{citation.get('title') or f'Paper {paper_id}'}, page {page}", quote=True)
    return f'<a class="citation" href="{href}" data-paper-id="{paper_id}" data-page="{page}" title="{title}">[{n}]</a>'


def link_citations(fragment: str, citations: Mapping[str, Any]) -> str:
    """*fragment* (HTML, or escaped text) with each `[N]` whose N is a key of *citations* made a
    link to the cited paper and page; other markers stay text. Markers inside existing tags'
    attributes are not touched (only text between tags is rewritten)."""
    parts = re.split(r"(<[^>]*>)", fragment)
    for index, part in enumerate(parts):
        if part.startswith("<"):
            continue
        parts[index] = _MARKER.sub(
            lambda m: (
                citation_anchor(m.group(1), citations[m.group(1)])
                if isinstance(citations.get(m.group(1)), Mapping)
                else m.group(0)
            ),
            part,
        )
    return "".join(parts)


def text_to_html(text: str, citations: Mapping[str, Any] | None = None) -> str:
    """Plain *text* (an answer) as note HTML: one paragraph per line, escaped, `[N]` citations
    linked through *citations*. The result is sanitised."""
    paragraphs = [line for line in (text or "").splitlines() if line.strip()]
    body = "".join(f"<p>{link_citations(html.escape(line, quote=False), citations or {})}</p>" for line in paragraphs)
    return sanitize_html(body)
