"""The DOI lookup (`METADATA_LOOKUP`) against a local stub HTTP server: Crossref and OpenAlex
records, a timeout, a 404, malformed JSON, the cache, and the title check that keeps a cited
paper's DOI from rewriting this paper's metadata."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.cache import cache

from indexing.lookup import MetadataLookupError, checked_with_lookup, lookup_doi
from indexing.metadata import PaperMetadata

CROSSREF = {
    "message": {
        "DOI": "10.1145/3149.214121",
        "title": ["Impossibility of distributed consensus with one faulty process"],
        "author": [
            {"given": "Michael J.", "family": "Fischer"},
            {"given": "Nancy A.", "family": "Lynch"},
            {"given": "Michael S.", "family": "Paterson"},
        ],
        "container-title": ["Journal of the ACM"],
        "published": {"date-parts": [[1985, 4, 1]]},
        "volume": "32",
        "page": "374-382",
    }
}
OPENALEX = {
    "doi": "https://doi.org/10.1145/3149.214121",
    "title": "Impossibility of distributed consensus with one faulty process",
    "publication_year": 1985,
    "authorships": [{"author": {"display_name": "Michael J. Fischer"}}, {"author": {"display_name": "Nancy Lynch"}}],
    "primary_location": {"source": {"display_name": "Journal of the ACM"}},
    "biblio": {"volume": "32", "first_page": "374", "last_page": "382"},
}


class Stub:
    """What the stub answers per path suffix: ("json", body) | ("status", code) | ("raw", text) |
    ("sleep", seconds); the requests it saw (path, User-Agent)."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[str, object]] = {}
        self.seen: list[tuple[str, str]] = []


@pytest.fixture
def stub(settings) -> Iterator[Stub]:
    state = Stub()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.seen.append((self.path, self.headers.get("User-Agent", "")))
            kind, value = next((r for suffix, r in state.routes.items() if self.path.endswith(suffix)), ("status", 404))
            if kind == "sleep":
                time.sleep(float(value))  # type: ignore[arg-type]
                kind, value = "json", CROSSREF
            if kind == "status":
                self.send_response(int(value))  # type: ignore[call-overload]
                self.end_headers()
                return
            body = json.dumps(value).encode() if kind == "json" else str(value).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.METADATA_LOOKUP = "crossref"
    settings.METADATA_LOOKUP_URL = f"http://127.0.0.1:{server.server_address[1]}"
    settings.METADATA_LOOKUP_MAILTO = "ops@example.org"
    settings.METADATA_LOOKUP_TIMEOUT_SECONDS = 0.5
    cache.clear()
    yield state
    server.shutdown()
    server.server_close()
    cache.clear()


def test_crossref_record_is_read_with_a_polite_user_agent_and_cached(stub):
    stub.routes["/works/10.1145/3149.214121"] = ("json", CROSSREF)
    record = lookup_doi("10.1145/3149.214121")
    assert record is not None
    assert record.authors == ("Michael J. Fischer", "Nancy A. Lynch", "Michael S. Paterson")
    assert (record.year, record.venue, record.volume, record.pages) == (1985, "Journal of the ACM", "32", "374-382")
    assert record.sources["year"] == "lookup"
    assert stub.seen[0][1] == "Annotagent/1.0 (mailto:ops@example.org)"
    assert lookup_doi("10.1145/3149.214121") == record
    assert len(stub.seen) == 1


def test_openalex_record_is_read(stub, settings):
    settings.METADATA_LOOKUP = "openalex"
    stub.routes["/works/https://doi.org/10.1145/3149.214121"] = ("json", OPENALEX)
    record = lookup_doi("10.1145/3149.214121")
    assert record is not None
    assert (record.authors[0], record.year, record.pages) == ("Michael J. Fischer", 1985, "374\u2013382")


def test_an_unknown_doi_is_none_and_remembered(stub):
    assert lookup_doi("10.9999/missing") is None
    assert lookup_doi("10.9999/missing") is None
    assert len(stub.seen) == 1


def test_a_slow_service_times_out(stub):
    stub.routes["/works/10.1/slow"] = ("sleep", 2)
    with pytest.raises(MetadataLookupError, match="timed out"):
        lookup_doi("10.1/slow")


def test_malformed_json_and_server_errors_are_lookup_errors(stub):
    stub.routes["/works/10.1/broken"] = ("raw", "{not json")
    stub.routes["/works/10.1/down"] = ("status", 503)
    stub.routes["/works/10.1/empty"] = ("json", {"status": "ok"})
    for doi in ("10.1/broken", "10.1/down", "10.1/empty"):
        with pytest.raises(MetadataLookupError):
            lookup_doi(doi)


def test_the_record_corrects_the_pdf_reading_when_the_titles_agree(stub):
    stub.routes["/works/10.1145/3149.214121"] = ("json", CROSSREF)
    read = PaperMetadata(
        title="Impossibility of Distributed Consensus with One Faulty Process",
        authors=("Michael J. Fischer",),
        year=1999,
        doi="10.1145/3149.214121",
        sources={"title": "pdf", "authors": "pdf", "year": "pdf", "doi": "pdf"},
    )
    checked = checked_with_lookup(read)
    assert (checked.year, len(checked.authors), checked.venue) == (1985, 3, "Journal of the ACM")
    assert (checked.sources["year"], checked.sources["doi"]) == ("lookup", "pdf")


def test_a_doi_of_another_paper_or_a_failed_lookup_changes_nothing(stub):
    stub.routes["/works/10.1145/3149.214121"] = ("json", CROSSREF)
    stub.routes["/works/10.1/broken"] = ("raw", "{not json")
    other = PaperMetadata(title="The Google File System", year=2003, doi="10.1145/3149.214121")
    assert checked_with_lookup(other) == other
    broken = PaperMetadata(title="X Y", year=2003, doi="10.1/broken")
    assert checked_with_lookup(broken) == broken


def test_lookups_are_off_by_default(settings):
    settings.METADATA_LOOKUP = "none"
    assert lookup_doi("10.1145/3149.214121") is None
