"""Bibliographic lookup by DOI: Crossref or OpenAlex, when `METADATA_LOOKUP` names one.

Off by default (`METADATA_LOOKUP=none`): indexing then never leaves the machine. With a service
configured, indexing asks it for the DOI printed on page 1 and, when the record's title agrees
with the PDF's (so the DOI is this paper's and not a cited one's), takes the record's title,
authors, year, venue, volume and pages (source "lookup"); otherwise the PDF's reading stands.

Requests carry a polite User-Agent with a contact address (`METADATA_LOOKUP_MAILTO`, both
services ask for one), time out after `METADATA_LOOKUP_TIMEOUT_SECONDS`, and answers are cached
(`CACHES`: found records for 30 days, "not found" for a day). `METADATA_LOOKUP_URL` overrides the
service's base URL (a mirror, or a local stub in tests).
"""

from __future__ import annotations

import json
import logging
import socket
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import replace
from typing import Any

from django.conf import settings
from django.core.cache import cache

from annotagent.errors import AnnotagentError
from indexing.metadata import PaperMetadata, fold

logger = logging.getLogger(__name__)

SERVICES = ("none", "crossref", "openalex")
BASE_URLS = {"crossref": "https://api.crossref.org", "openalex": "https://api.openalex.org"}
FOUND_SECONDS = 30 * 24 * 3600
NOT_FOUND_SECONDS = 24 * 3600
_NOT_FOUND = "not-found"


class MetadataLookupError(AnnotagentError):
    """The lookup service timed out, failed or answered with something that is not a record."""

    code = "metadata_lookup_failed"


def configured_service() -> str:
    """ "crossref", "openalex" or "none" (`METADATA_LOOKUP`)."""
    return str(settings.METADATA_LOOKUP or "none").lower()


def _get_json(url: str) -> Any | None:
    """The JSON at *url*; None for 404. Raises MetadataLookupError on a timeout, another HTTP
    error, a connection failure or a body that is not JSON."""
    agent = (
        f"Annotagent/1.0 (mailto:{settings.METADATA_LOOKUP_MAILTO})"
        if settings.METADATA_LOOKUP_MAILTO
        else ("Annotagent/1.0")
    )
    request = urllib.request.Request(url, headers={"User-Agent": agent, "Accept": "application/json"})  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=settings.METADATA_LOOKUP_TIMEOUT_SECONDS) as response:  # noqa: S310
            body = response.read(2_000_000)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise MetadataLookupError(f"The metadata lookup answered HTTP {exc.code}.") from exc
    except TimeoutError as exc:
        raise MetadataLookupError("The metadata lookup timed out.") from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, (TimeoutError, socket.timeout)):
            raise MetadataLookupError("The metadata lookup timed out.") from exc
        raise MetadataLookupError(f"The metadata lookup could not be reached ({exc.reason}).") from exc
    try:
        return json.loads(body)
    except ValueError as exc:
        raise MetadataLookupError("The metadata lookup answered with something that is not JSON.") from exc


def _first(values: Any) -> str:
    if isinstance(values, list):
        return str(values[0]) if values else ""
    return str(values or "")


def from_crossref(body: Any) -> PaperMetadata:
    """PaperMetadata of a Crossref `/works/{doi}` answer. Raises MetadataLookupError when it has
    no record."""
    record = body.get("message") if isinstance(body, dict) else None
    if not isinstance(record, dict):
        raise MetadataLookupError("The Crossref answer holds no record.")
    authors = tuple(
        " ".join(part for part in (a.get("given", ""), a.get("family", "")) if part)
        for a in record.get("author", [])
        if isinstance(a, dict) and a.get("family")
    )
    dates = (record.get("published") or record.get("issued") or {}).get("date-parts") or [[None]]
    year = dates[0][0] if dates and dates[0] and isinstance(dates[0][0], int) else None
    return _looked_up(
        title=_first(record.get("title")),
        authors=authors,
        year=year,
        venue=_first(record.get("container-title")),
        volume=str(record.get("volume", "")),
        pages=str(record.get("page", "")),
        doi=str(record.get("DOI", "")),
    )


def from_openalex(body: Any) -> PaperMetadata:
    """PaperMetadata of an OpenAlex `/works/https://doi.org/{doi}` answer. Raises
    MetadataLookupError when it has no record."""
    if not isinstance(body, dict) or "title" not in body:
        raise MetadataLookupError("The OpenAlex answer holds no record.")
    authors = tuple(
        str(a["author"]["display_name"])
        for a in body.get("authorships", [])
        if isinstance(a, dict) and isinstance(a.get("author"), dict) and a["author"].get("display_name")
    )
    source = ((body.get("primary_location") or {}).get("source") or {}).get("display_name", "")
    biblio = body.get("biblio") or {}
    pages = "–".join(p for p in (biblio.get("first_page") or "", biblio.get("last_page") or "") if p)  # noqa: RUF001
    year = body.get("publication_year")
    return _looked_up(
        title=str(body.get("title") or ""),
        authors=authors,
        year=year if isinstance(year, int) else None,
        venue=str(source or ""),
        volume=str(biblio.get("volume") or ""),
        pages=pages,
        doi=str(body.get("doi") or "").removeprefix("https://doi.org/"),
    )


def _looked_up(**fields: Any) -> PaperMetadata:
    found = PaperMetadata(**fields)
    return replace(found, sources={name: "lookup" for name, value in fields.items() if value})


def lookup_doi(doi: str) -> PaperMetadata | None:
    """The configured service's record for *doi* (cached), None when lookups are off or the
    service has no such DOI. Raises MetadataLookupError (see `_get_json`, `from_crossref`)."""
    service = configured_service()
    if service == "none" or not doi:
        return None
    if service not in BASE_URLS:
        raise MetadataLookupError(f"Unknown METADATA_LOOKUP {service!r}: use one of {', '.join(SERVICES)}.")
    key = f"metadata-lookup:{service}:{doi.lower()}"
    cached = cache.get(key)
    if cached == _NOT_FOUND:
        return None
    if isinstance(cached, dict):
        return PaperMetadata(**{**cached, "authors": tuple(cached["authors"]), "keywords": tuple(cached["keywords"])})
    base = (settings.METADATA_LOOKUP_URL or BASE_URLS[service]).rstrip("/")
    quoted = urllib.parse.quote(doi, safe="/")
    url = f"{base}/works/{quoted}" if service == "crossref" else f"{base}/works/https://doi.org/{quoted}"
    body = _get_json(url)
    if body is None:
        cache.set(key, _NOT_FOUND, NOT_FOUND_SECONDS)
        return None
    found = from_crossref(body) if service == "crossref" else from_openalex(body)
    cache.set(key, {**found.__dict__, "authors": list(found.authors), "keywords": list(found.keywords)}, FOUND_SECONDS)
    return found


def checked_with_lookup(metadata: PaperMetadata) -> PaperMetadata:
    """*metadata* (read from the PDF) filled and verified from the lookup of its DOI: when the
    record's title agrees with the PDF's (or the PDF gave none), the record's title, authors,
    year, venue, volume and pages replace the PDF's; otherwise *metadata* is returned unchanged.
    A failed lookup is logged and changes nothing: indexing never fails for it."""
    try:
        record = lookup_doi(metadata.doi)
    except MetadataLookupError:
        logger.warning("Metadata lookup for DOI %s failed", metadata.doi, exc_info=True)
        return metadata
    if record is None or not record.title:
        return metadata
    if metadata.title and fold(record.title).rstrip(".") != fold(metadata.title).rstrip("."):
        logger.info("DOI %s names %r, not this paper (%r): lookup ignored", metadata.doi, record.title, metadata.title)
        return metadata
    taken = {name: getattr(record, name) for name in record.sources if name != "doi"}
    return replace(metadata, **taken, sources={**metadata.sources, **{name: "lookup" for name in taken}})
