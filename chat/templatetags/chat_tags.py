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


def citation_link(n: str, citation: dict[str, Any]) -> SafeString:
    """`<a class="citation">[N]<span class="citation-popup">Title, page P</span></a>` for one marker."""
    paper_id, page = int(citation["paper_id"]), int(citation["page"])
    title = str(citation.get("title") or f"Paper {paper_id}")
    href = f"{reverse('papers:reader', args=[paper_id])}?page={page}"
    return format_html(
        '<a class="citation" href="{}" data-title="{}" data-page="{}" title="{}, page {}">[{}]'
        '<span class="citation-popup" role="tooltip"><span class="citation-title">{}</span>, page {}</span></a>',
        href,
        title,
        page,
        title,
        page,
        n,
        title,
        page,
    )


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
        parts.append(escape(text[position : match.start()]))
        parts.append(citation_link(match.group(1), citation))
        position = match.end()
    parts.append(escape((text or "")[position:]))
    return format_html_join("", "{}", ((part,) for part in parts))
