"""The chunk index: the MongoDB collection `paperchunks`, through pymongo. The only module that
talks to MongoDB.

Chunk records are `{paperId, paperSha256, chunkIndex, pageNumber, text, contextualBlurb,
embedding, embeddingModel, indexVersion}`; `embedding` is a BSON binary float32 vector
(`Binary.from_vector`, subtype 9), `indexVersion` a random token (uuid4 hex) and `paperSha256` the
SHA-256 of the paper's PDF. A paper's chunks are written under a new `indexVersion` and the old
version is deleted only after the new one is complete; readers ask for the version and content hash
the paper row names, so they never see a half-written paper, nor another paper's chunks.

One chunk index belongs to one Django database. Paper ids are that database's, so a second database
(a reset SQLite file, staging next to production) would give the same ids to other papers. The
collection `meta` holds the document `{_id: "installation", installationId}`, written on first use
with the id of `indexing.models.Installation`; every access checks that it matches and raises
ChunkIndexBindingError when it does not.

With `MONGODB_URI` unset, the embedded default runs a SecantusDB server (MongoDB wire protocol over
WiredTiger) as a separate process with its data under `EMBEDDED_MONGO_DIR`. Whichever process needs
it first (web, worker, command) starts it; the others find it through `server.json` in that folder.
Its store admits one process, so the server is shared, never started twice.

The collection `paperpacks` holds each paper version's chunks once more, packed for a cold start:
what a project index needs of the paper in one document (`PaperPack`: chunk texts and pages, the
vectors as one float32 matrix, the BM25 statistics of `indexing.lexical`), since reading one
document per paper costs a small part of reading one per chunk. A pack is keyed by paper id, index
version and `tokenizerVersion`, carries the content hash and model as chunks do, and goes whenever
the chunks of its version go (every `delete_chunks*` here deletes the matching packs too). A pack
larger than `PACK_PART_BYTES` is stored as parts of consecutive chunks (`part` of `parts`), each
with its own statistics; a pack is read only when every part is there.

The collection `sentenceembeddings` caches sentence embeddings (the extractive answer's candidate
sentences) across processes: `{_id: "<embedding model>:<SHA-256 of the text>", embeddingModel,
embedding}`, `embedding` the vector's float32 little-endian bytes (1,536 bytes for a 384-d vector).
Entries are never stale (a text's vector under one model does not change), so they are only added;
they name no paper, so they need no binding to a database.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import bson
import numpy as np
from bson.binary import Binary, BinaryVectorDtype
from django.conf import settings
from pymongo import ASCENDING, DeleteMany, MongoClient, ReplaceOne
from pymongo.collection import Collection
from pymongo.errors import BulkWriteError, ConnectionFailure, DuplicateKeyError, PyMongoError

from annotagent.errors import ServiceUnavailableError
from indexing.lexical import TOKENIZER_VERSION, LexicalStats, merge_statistics

logger = logging.getLogger(__name__)

COLLECTION = "paperchunks"
PACK_COLLECTION = "paperpacks"
# A pack document stays under this size (MongoDB refuses documents over 16 MiB); a larger pack is
# stored in parts.
PACK_PART_BYTES = 8 * 2**20
SENTENCE_COLLECTION = "sentenceembeddings"
# MongoDB's duplicate key error: a sentence another process stored first.
_DUPLICATE_KEY = 11000


class ChunkStoreError(ServiceUnavailableError):
    """The chunk index (MongoDB) could not be reached or refused the operation."""

    code = "chunk_index_unavailable"


class ChunkIndexBindingError(ChunkStoreError):
    """The chunk index belongs to another database (installation); nothing is read or written."""

    code = "chunk_index_of_another_database"


class PaperVersion(NamedTuple):
    """What a paper row says its current chunks are: the index version and the paper's SHA-256."""

    version: str
    sha256: str


@dataclass(frozen=True)
class ChunkRecord:
    """One chunk as stored. `page_number` is the 1-based physical PDF page the chunk starts on."""

    paper_id: int
    paper_sha256: str
    chunk_index: int
    page_number: int
    text: str
    contextual_blurb: str
    embedding: np.ndarray
    embedding_model: str
    index_version: str

    def metadata(self) -> dict[str, Any]:
        """The stored document without its vector: a chunk as `load_chunks` returns it."""
        return {
            "paperId": self.paper_id,
            "paperSha256": self.paper_sha256,
            "chunkIndex": self.chunk_index,
            "pageNumber": self.page_number,
            "text": self.text,
            "contextualBlurb": self.contextual_blurb,
            "embeddingModel": self.embedding_model,
            "indexVersion": self.index_version,
        }

    def to_document(self) -> dict[str, Any]:
        return {
            **self.metadata(),
            "embedding": Binary.from_vector(self.embedding.astype(np.float32).tolist(), BinaryVectorDtype.FLOAT32),
        }


@dataclass(frozen=True)
class ChunkMatrix:
    """The chunks of some papers, embeddings stacked for an exact scan.

    `embeddings` has shape (n, d), float32; row i belongs to `chunks[i]` (metadata without vectors).
    `lexical` holds the BM25 statistics of the rows when they were read from packs, one per paper
    in row order (their row counts add up to n); empty when the rows were read from chunks, whose
    texts must then be tokenised.
    """

    chunks: list[dict[str, Any]]
    embeddings: np.ndarray
    lexical: tuple[LexicalStats, ...] = ()


@dataclass(frozen=True, eq=False)
class PaperPack:
    """One paper version's chunks packed for a project index: row i is the chunk `chunk_indexes[i]`
    (ascending), on page `page_numbers[i]`, with `texts[i]` and `blurbs[i]`, its vector
    `embeddings[i]` ((n, d) float32; (n, 0) when read without vectors) and its row of `lexical`,
    the BM25 statistics of `tokenizer_version`."""

    paper_id: int
    paper_sha256: str
    index_version: str
    embedding_model: str
    chunk_indexes: np.ndarray
    page_numbers: np.ndarray
    texts: tuple[str, ...]
    blurbs: tuple[str, ...]
    embeddings: np.ndarray
    lexical: LexicalStats
    tokenizer_version: int = TOKENIZER_VERSION

    @property
    def size(self) -> int:
        return len(self.texts)

    @classmethod
    def of_chunks(cls, chunks: Sequence[dict[str, Any]], embeddings: np.ndarray) -> PaperPack:
        """The pack of one paper version's *chunks* (documents as `load_chunks` returns them, at
        least one, ordered by chunk index) and their vectors *embeddings* (row i is `chunks[i]`'s);
        tokenises the texts."""
        return cls(
            **_paper_version(chunks[0]),
            chunk_indexes=np.array([chunk["chunkIndex"] for chunk in chunks], dtype=np.int32),
            page_numbers=np.array([chunk["pageNumber"] for chunk in chunks], dtype=np.int32),
            texts=tuple(chunk["text"] for chunk in chunks),
            blurbs=tuple(chunk.get("contextualBlurb", "") for chunk in chunks),
            embeddings=np.asarray(embeddings, dtype=np.float32).reshape(len(chunks), -1),
            lexical=LexicalStats.of_documents(chunks),
        )

    @classmethod
    def of_records(cls, records: Sequence[ChunkRecord]) -> PaperPack:
        """The pack of *records* (one paper version's, at least one, ordered by chunk index)."""
        return cls.of_chunks([record.metadata() for record in records], np.vstack([r.embedding for r in records]))

    def chunk_documents(self) -> list[dict[str, Any]]:
        """Its chunks as `load_chunks` returns them (without vectors)."""
        return [
            {
                "paperId": self.paper_id,
                "paperSha256": self.paper_sha256,
                "chunkIndex": chunk_index,
                "pageNumber": page_number,
                "text": text,
                "contextualBlurb": blurb,
                "embeddingModel": self.embedding_model,
                "indexVersion": self.index_version,
            }
            for chunk_index, page_number, text, blurb in zip(
                self.chunk_indexes.tolist(), self.page_numbers.tolist(), self.texts, self.blurbs, strict=True
            )
        ]


def _paper_version(document: dict[str, Any]) -> dict[str, Any]:
    """The `PaperPack` fields naming the paper version a stored chunk or pack *document* is of."""
    return {
        "paper_id": document["paperId"],
        "paper_sha256": document["paperSha256"],
        "index_version": document["indexVersion"],
        "embedding_model": document["embeddingModel"],
    }


def join_packs(packs: Sequence[PaperPack], *, with_embeddings: bool = True) -> ChunkMatrix:
    """The rows of *packs* in order, as one matrix with their statistics (see `ChunkMatrix`);
    without *with_embeddings* (or without rows) the matrix is (n, 0)."""
    chunks = [chunk for pack in packs for chunk in pack.chunk_documents()]
    if with_embeddings and chunks:
        embeddings = np.vstack([pack.embeddings for pack in packs if pack.size])
    else:
        embeddings = np.zeros((len(chunks), 0), dtype=np.float32)
    return ChunkMatrix(chunks=chunks, embeddings=embeddings, lexical=tuple(pack.lexical for pack in packs))


# --- connection -----------------------------------------------------------------------------------

# One client per URI: pymongo pools connections per client, and a client in use must not be closed
# because a setting changed.
_clients: dict[str, MongoClient] = {}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ping(uri: str, timeout_ms: int = 500) -> bool:
    try:
        probe: MongoClient = MongoClient(uri, serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms)
        with probe:
            probe.admin.command("ping")
        return True
    except PyMongoError:
        return False


def _uri_for(port: int) -> str:
    return f"mongodb://127.0.0.1:{port}/?directConnection=true"


def ensure_embedded_server(data_dir: Path | None = None, *, wait_seconds: float = 30.0) -> str:
    """Return the URI of the embedded server for *data_dir*, starting it if no process has.

    A file lock on `<data_dir>/server.lock` makes concurrent starters agree on one server; the
    server runs detached and outlives the process that started it. Raises ChunkStoreError if it
    does not answer within *wait_seconds*.
    """
    data_dir = Path(data_dir or settings.EMBEDDED_MONGO_DIR)
    data_dir.mkdir(parents=True, exist_ok=True)
    state_file = data_dir / "server.json"
    with open(data_dir / "server.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        running = embedded_server_uri(data_dir)
        if running:
            return running
        port = _free_port()
        uri = _uri_for(port)
        log = open(data_dir / "server.log", "ab")
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from secantus.cli import main; sys.exit(main())",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--storage-path",
                str(data_dir / "store"),
                "--log-level",
                "WARNING",
            ],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + wait_seconds
        while time.monotonic() < deadline:
            if _ping(uri, 300):
                state_file.write_text(json.dumps({"uri": uri, "pid": process.pid}))
                logger.info("Started the embedded MongoDB-wire server (pid %s) at %s", process.pid, uri)
                return uri
            if process.poll() is not None:
                break
            time.sleep(0.2)
        process.kill()
        raise ChunkStoreError(
            f"The embedded chunk index did not start; see {data_dir / 'server.log'}. "
            "Set MONGODB_URI to use an existing MongoDB server."
        )


def stop_embedded_server(data_dir: Path | None = None) -> bool:
    """Stop the embedded server of *data_dir* if one runs. Returns whether one was stopped."""
    data_dir = Path(data_dir or settings.EMBEDDED_MONGO_DIR)
    state_file = data_dir / "server.json"
    if not state_file.exists():
        return False
    pid = json.loads(state_file.read_text()).get("pid")
    state_file.unlink()
    try:
        os.kill(pid, 15)
    except (ProcessLookupError, TypeError):
        return False
    return True


# The embedded server's URI per data folder, once this process has found (or started) it: finding
# it takes a file lock and a ping, too much for every query. Forgotten on a connection failure, so
# the next call finds the server again (or starts a new one).
_embedded_uris: dict[Path, str] = {}


def mongodb_uri() -> str:
    """`MONGODB_URI`, or the embedded server's URI (started on first use)."""
    if settings.MONGODB_URI:
        return settings.MONGODB_URI
    data_dir = Path(settings.EMBEDDED_MONGO_DIR)
    if data_dir not in _embedded_uris:
        _embedded_uris[data_dir] = ensure_embedded_server(data_dir)
    return _embedded_uris[data_dir]


def get_client() -> MongoClient:
    """The process-wide pymongo client of the current URI, built lazily."""
    uri = mongodb_uri()
    client = _clients.get(uri)
    if client is None:
        timeout = settings.MONGODB_TIMEOUT_MS
        client = MongoClient(uri, serverSelectionTimeoutMS=timeout, connectTimeoutMS=timeout, socketTimeoutMS=60_000)
        _clients[uri] = client
    return client


def reset_client() -> None:
    """Close and forget every cached client and binding check (tests that point at another server,
    or after a fork)."""
    _embedded_uris.clear()
    _bound.clear()
    while _clients:
        _clients.popitem()[1].close()


META_COLLECTION = "meta"
INSTALLATION_DOCUMENT = "installation"
# (URI, database name) pairs whose binding to this installation this process has checked: the
# binding of an index never changes once written, so it is checked once per process.
_bound: set[tuple[str, str]] = set()


def index_installation_id() -> str | None:
    """The installation id the chunk index is bound to, or None while it is unbound."""
    try:
        return _bound_installation()
    except PyMongoError as exc:
        raise _error("Could not read the chunk index's installation id", exc) from exc


def _bound_installation() -> str | None:
    document = get_client()[settings.MONGODB_DB][META_COLLECTION].find_one({"_id": INSTALLATION_DOCUMENT})
    return None if document is None else str(document["installationId"])


def check_binding() -> None:
    """Bind the chunk index to this database's installation on first use; raise
    ChunkIndexBindingError when it is bound to another, ChunkStoreError when it is unreachable."""
    try:
        _check_binding()
    except PyMongoError as exc:
        raise _error("Could not check which database the chunk index belongs to", exc) from exc


def _check_binding() -> None:
    """`check_binding`, letting pymongo's errors through for the caller to word."""
    from indexing.models import Installation

    key = (mongodb_uri(), settings.MONGODB_DB)
    if key in _bound:
        return
    theirs = _bound_installation()
    ours = Installation.current_id()
    if theirs is None:
        try:
            get_client()[settings.MONGODB_DB][META_COLLECTION].insert_one(
                {"_id": INSTALLATION_DOCUMENT, "installationId": ours, "boundAt": time.time()}
            )
        except DuplicateKeyError:
            pass  # another process of some database bound it first: compared below
        theirs = _bound_installation()
    if theirs != ours:
        raise ChunkIndexBindingError(
            f"The chunk index (MongoDB database {settings.MONGODB_DB!r}) belongs to another database: it "
            f"was made by installation {theirs}, and this database is installation {ours}. Sharing it would "
            "mix up papers that have the same ids in the two databases. Give this database its own chunk "
            "index (MONGODB_DB, MONGODB_URI or EMBEDDED_MONGO_DIR)."
        )
    _bound.add(key)


def get_collection() -> Collection:
    """The `paperchunks` collection, once the index is known to belong to this database
    (`check_binding`). Raises ChunkIndexBindingError, or pymongo's errors for the caller to word."""
    _check_binding()
    return get_client()[settings.MONGODB_DB][COLLECTION]


def is_atlas() -> bool:
    """Whether the chunk index is on MongoDB Atlas, where `$vectorSearch` exists."""
    return ".mongodb.net" in settings.MONGODB_URI or settings.MONGODB_URI.startswith("mongodb+srv://")


def _error(action: str, exc: PyMongoError) -> ChunkStoreError:
    """Our error for a pymongo failure: a short, credential-free sentence rather than pymongo's
    topology dump, which names every server it tried."""
    if isinstance(exc, ConnectionFailure):
        _embedded_uris.clear()
        where = "the MongoDB server of MONGODB_URI" if settings.MONGODB_URI else "the embedded chunk index server"
        return ChunkStoreError(
            f"{action}: {where} is not reachable ({type(exc).__name__}). "
            "Check that it is running and that MONGODB_URI is right."
        )
    return ChunkStoreError(f"{action}: {exc}")


def ping() -> None:
    """Raise ChunkStoreError unless the chunk index answers within `MONGODB_TIMEOUT_MS`."""
    try:
        get_client().admin.command("ping")
    except PyMongoError as exc:
        raise _error("Could not reach the chunk index", exc) from exc


# --- operations -----------------------------------------------------------------------------------


# name -> (collection, keys, options) of every index the chunk index needs.
REQUIRED_INDEXES: dict[str, tuple[str, list[tuple[str, int]], dict[str, Any]]] = {
    "paperId": (COLLECTION, [("paperId", ASCENDING)], {}),
    "paper_version_chunk": (
        COLLECTION,
        [("paperId", ASCENDING), ("indexVersion", ASCENDING), ("chunkIndex", ASCENDING)],
        {"unique": True},
    ),
    "embeddingModel": (COLLECTION, [("embeddingModel", ASCENDING)], {}),
    "pack_paper_version_part": (
        PACK_COLLECTION,
        [("paperId", ASCENDING), ("indexVersion", ASCENDING), ("tokenizerVersion", ASCENDING), ("part", ASCENDING)],
        {"unique": True},
    ),
}


def ensure_indexes() -> list[str]:
    """Create the chunk index's indexes (idempotent). Returns their names."""
    try:
        database = get_collection().database
        return [
            database[collection].create_index(keys, name=name, **options)
            for name, (collection, keys, options) in REQUIRED_INDEXES.items()
        ]
    except PyMongoError as exc:
        raise _error("Could not create the chunk index's indexes", exc) from exc


def missing_indexes() -> list[str]:
    """Names of `REQUIRED_INDEXES` the collections lack (all of them when they do not exist yet)."""
    try:
        database = get_collection().database
        present = {
            (collection, index["name"])
            for collection in {collection for collection, _, _ in REQUIRED_INDEXES.values()}
            for index in database[collection].list_indexes()
        }
    except PyMongoError as exc:
        raise _error("Could not list the chunk index's indexes", exc) from exc
    return [name for name, (collection, _, _) in REQUIRED_INDEXES.items() if (collection, name) not in present]


def vector_index_definition(dimension: int) -> dict[str, Any]:
    """The Atlas Vector Search index on `embedding` (cosine, *dimension*) with the filter fields
    `$vectorSearch` uses (`paperId`, `indexVersion`, `embeddingModel`)."""
    return {
        "fields": [
            {"type": "vector", "path": "embedding", "numDimensions": dimension, "similarity": "cosine"},
            {"type": "filter", "path": "paperId"},
            {"type": "filter", "path": "indexVersion"},
            {"type": "filter", "path": "embeddingModel"},
        ]
    }


def vector_index_problem(dimension: int) -> str:
    """On Atlas: "" when `MONGODB_ATLAS_VECTOR_INDEX` exists with *dimension* and every filter field,
    else what is wrong. Raises ChunkStoreError when the search indexes cannot be listed."""
    name = settings.MONGODB_ATLAS_VECTOR_INDEX
    try:
        found = list(get_collection().list_search_indexes(name))
    except PyMongoError as exc:
        raise _error("Could not list the Atlas search indexes", exc) from exc
    if not found:
        return f"The Atlas vector search index {name!r} does not exist."
    definition = found[0].get("latestDefinition") or found[0].get("definition") or {}
    fields = {field.get("path"): field for field in definition.get("fields", [])}
    vector = fields.get("embedding", {})
    if vector.get("numDimensions") != dimension:
        return f"The Atlas vector search index {name!r} has {vector.get('numDimensions')} dimensions, not {dimension}."
    missing = [path for path in ("paperId", "indexVersion", "embeddingModel") if path not in fields]
    if missing:
        return f"The Atlas vector search index {name!r} lacks the filter fields {', '.join(missing)}."
    return ""


def create_vector_index(dimension: int) -> None:
    """Create (or, when it exists, redefine) the Atlas vector search index for *dimension*."""
    from pymongo.operations import SearchIndexModel

    name = settings.MONGODB_ATLAS_VECTOR_INDEX
    definition = vector_index_definition(dimension)
    try:
        collection = get_collection()
        if list(collection.list_search_indexes(name)):
            collection.update_search_index(name, definition)
        else:
            collection.create_search_index(SearchIndexModel(definition=definition, name=name, type="vectorSearch"))
    except PyMongoError as exc:
        raise _error("Could not create the Atlas vector search index", exc) from exc


def _delete(query: dict[str, Any], action: str) -> int:
    """Delete the chunks matching *query* and the packs matching it. Returns how many chunks went."""
    try:
        deleted = get_collection().delete_many(query).deleted_count
        _packs().delete_many(query)
    except PyMongoError as exc:
        raise _error(action, exc) from exc
    return int(deleted)


def delete_chunks_not_of(paper_id: int, *, paper_sha256: str) -> int:
    """Delete the chunks (and packs) stored under *paper_id* that were not made from the file
    *paper_sha256* (another database's paper of the same id). Returns how many chunks went."""
    query = {"paperId": paper_id, "paperSha256": {"$ne": paper_sha256}}
    return _delete(query, f"Could not delete chunks of paper {paper_id}")


def delete_chunks_of_other_models(paper_id: int, *, embedding_model: str) -> int:
    """Delete a paper's chunks (and packs) made by any model but *embedding_model*. Returns how
    many chunks went."""
    query = {"paperId": paper_id, "embeddingModel": {"$ne": embedding_model}}
    return _delete(query, f"Could not delete chunks of paper {paper_id}")


def write_chunks(records: Sequence[ChunkRecord]) -> int:
    """Insert *records* (all of one paper and index version). Returns how many were written."""
    if not records:
        return 0
    try:
        get_collection().insert_many([record.to_document() for record in records], ordered=False)
    except PyMongoError as exc:
        raise _error("Could not write chunks", exc) from exc
    return len(records)


def delete_chunks(paper_id: int, *, keep_versions: Iterable[str] = ()) -> int:
    """Delete a paper's chunks (and packs), all of them or all but those of *keep_versions*.
    Returns how many chunks went."""
    query: dict[str, Any] = {"paperId": paper_id}
    keep = [version for version in keep_versions if version]
    if keep:
        query["indexVersion"] = {"$nin": keep}
    return _delete(query, f"Could not delete chunks of paper {paper_id}")


def count_chunks(paper_id: int, *, index_version: str | None = None, embedding_model: str | None = None) -> int:
    query: dict[str, Any] = {"paperId": paper_id}
    if index_version is not None:
        query["indexVersion"] = index_version
    if embedding_model is not None:
        query["embeddingModel"] = embedding_model
    try:
        return get_collection().count_documents(query)
    except PyMongoError as exc:
        raise _error("Could not count chunks", exc) from exc


# Papers per query when reading chunks or packs by paper. The embedded server cannot use an index
# for an `$or` of (paper, version, hash) clauses, so it scanned every chunk (6 s for one paper among
# 60k chunks); it does for `paperId: {$in: ...}`, but checks each document against the whole list,
# so a query for a thousand papers costs far more than ten for a hundred each.
PAPERS_PER_QUERY = 100


def _current_documents(
    collection: Collection,
    versions: dict[int, PaperVersion],
    query: dict[str, Any],
    projection: dict[str, int],
) -> list[dict[str, Any]]:
    """The documents of *collection* matching *query* that belong to a paper in *versions* at the
    version and content hash it names (`is_current`), read by paper id in batches."""
    ids = sorted(versions)
    documents: list[dict[str, Any]] = []
    for start in range(0, len(ids), PAPERS_PER_QUERY):
        batch = ids[start : start + PAPERS_PER_QUERY]
        batch_query = {
            "paperId": {"$in": batch},
            "indexVersion": {"$in": sorted({versions[paper_id].version for paper_id in batch})},
            **query,
        }
        documents.extend(doc for doc in collection.find(batch_query, projection) if is_current(doc, versions))
    return documents


def is_current(chunk: dict[str, Any], versions: dict[int, PaperVersion]) -> bool:
    """The read-back check: *chunk* is of a paper in *versions*, at the version the paper row names,
    and made from that paper's file (its content hash matches)."""
    expected = versions.get(chunk["paperId"])
    return (
        expected is not None
        and chunk.get("indexVersion") == expected.version
        and chunk.get("paperSha256") == expected.sha256
    )


def load_chunks(
    versions: dict[int, PaperVersion], *, embedding_model: str, with_embeddings: bool = True
) -> ChunkMatrix:
    """Read the current chunks of some papers.

    *versions* maps paper id -> the index version and content hash to read. Only chunks of
    *embedding_model* are returned, so vectors of different models never meet. Rows are ordered by
    (paperId, chunkIndex).
    """
    if not versions:
        return ChunkMatrix(chunks=[], embeddings=np.zeros((0, 0), dtype=np.float32))
    projection: dict[str, int] = {"_id": 0} if with_embeddings else {"_id": 0, "embedding": 0}
    try:
        found = _current_documents(get_collection(), versions, {"embeddingModel": embedding_model}, projection)
        documents = sorted(found, key=lambda d: (d["paperId"], d["chunkIndex"]))
    except PyMongoError as exc:
        raise _error("Could not read chunks", exc) from exc
    if not with_embeddings:
        return ChunkMatrix(chunks=documents, embeddings=np.zeros((len(documents), 0), dtype=np.float32))
    rows = [np.frombuffer(bytes(doc.pop("embedding"))[2:], dtype=np.float32) for doc in documents]
    embeddings = np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32)
    return ChunkMatrix(chunks=documents, embeddings=embeddings)


def vector_search(
    query: np.ndarray, versions: dict[int, PaperVersion], *, embedding_model: str, limit: int
) -> list[tuple[dict[str, Any], float]]:
    """Atlas `$vectorSearch` over the papers in *versions*: best-first (chunk, cosine score) pairs.

    Needs the Atlas vector index `MONGODB_ATLAS_VECTOR_INDEX` on `embedding` with `paperId`,
    `indexVersion` and `embeddingModel` as filter fields. Atlas's cosine score is (1 + cos) / 2; it is
    mapped back to cosine similarity here.
    """
    pipeline = [
        {
            "$vectorSearch": {
                "index": settings.MONGODB_ATLAS_VECTOR_INDEX,
                "path": "embedding",
                "queryVector": Binary.from_vector(query.astype(np.float32).tolist(), BinaryVectorDtype.FLOAT32),
                "numCandidates": max(limit * 20, 200),
                "limit": limit,
                "filter": {"paperId": {"$in": list(versions)}, "embeddingModel": embedding_model},
            }
        },
        {"$project": {"_id": 0, "embedding": 0, "score": {"$meta": "vectorSearchScore"}}},
    ]
    try:
        documents = list(get_collection().aggregate(pipeline))
    except PyMongoError as exc:
        raise _error("Vector search failed", exc) from exc
    hits = []
    for doc in documents:
        if not is_current(doc, versions):
            continue
        score = float(doc.pop("score"))
        hits.append((doc, 2 * score - 1))
    return hits


class ChunkGroup(NamedTuple):
    """The chunks of one paper id, index version, embedding model and content hash."""

    paper_id: int
    index_version: str
    embedding_model: str
    paper_sha256: str


def chunk_counts_by_paper(paper_ids: Iterable[int] | None = None) -> dict[ChunkGroup, int]:
    """Counts of stored chunks per `ChunkGroup`. Chunks written before records carried a content
    hash have `paper_sha256` ""."""
    pipeline: list[dict[str, Any]] = []
    if paper_ids is not None:
        pipeline.append({"$match": {"paperId": {"$in": list(paper_ids)}}})
    pipeline.append(
        {
            "$group": {
                "_id": {"p": "$paperId", "v": "$indexVersion", "m": "$embeddingModel", "h": "$paperSha256"},
                "n": {"$sum": 1},
            }
        }
    )
    try:
        return {
            ChunkGroup(g["_id"]["p"], str(g["_id"]["v"]), g["_id"]["m"], g["_id"].get("h") or ""): g["n"]
            for g in get_collection().aggregate(pipeline)
        }
    except PyMongoError as exc:
        raise _error("Could not count chunks", exc) from exc


def delete_chunks_of_version(paper_id: int, index_version: str) -> int:
    """Delete one index version of a paper's chunks (and its packs): a failed or repeated build.
    Returns the count of chunks."""
    query = {"paperId": paper_id, "indexVersion": index_version}
    return _delete(query, f"Could not delete chunks of paper {paper_id}")


# --- packs ------------------------------------------------------------------------------------------


def _packs() -> Collection:
    """The `paperpacks` collection (bound like `get_collection`)."""
    return get_collection().database[PACK_COLLECTION]


def _binary(array: np.ndarray, dtype: str) -> Binary:
    return Binary(np.ascontiguousarray(array, dtype=dtype).tobytes())


def _pack_part(pack: PaperPack, start: int, stop: int) -> dict[str, Any]:
    """The document of rows [*start*, *stop*) of *pack* (`part` and `parts` left for the caller):
    arrays as little-endian bytes, the vocabulary one term a line (terms hold no whitespace)."""
    lexical = pack.lexical.rows(start, stop) if (start, stop) != (0, pack.size) else pack.lexical
    embeddings = pack.embeddings[start:stop]
    return {
        "paperId": pack.paper_id,
        "paperSha256": pack.paper_sha256,
        "indexVersion": pack.index_version,
        "embeddingModel": pack.embedding_model,
        "tokenizerVersion": pack.tokenizer_version,
        "part": 0,
        "parts": 1,
        "rows": stop - start,
        "chunkIndexes": _binary(pack.chunk_indexes[start:stop], "<i4"),
        "pageNumbers": _binary(pack.page_numbers[start:stop], "<i4"),
        "texts": list(pack.texts[start:stop]),
        "blurbs": list(pack.blurbs[start:stop]),
        "dimension": embeddings.shape[1],
        "vectors": _binary(embeddings, "<f4"),
        "terms": "\n".join(lexical.terms),
        "documentFrequencies": _binary(lexical.document_frequencies, "<i8"),
        "lengths": _binary(lexical.lengths, "<i4"),
        "offsets": _binary(lexical.offsets, "<i8"),
        "termIds": _binary(lexical.term_ids, "<i4"),
        "counts": _binary(lexical.counts, "<i4"),
    }


def _split(pack: PaperPack, start: int, stop: int) -> list[dict[str, Any]]:
    """Documents of consecutive rows covering [*start*, *stop*), each under PACK_PART_BYTES (halving)."""
    document = _pack_part(pack, start, stop)
    if stop - start > 1 and len(bson.encode(document)) > PACK_PART_BYTES:
        middle = (start + stop) // 2
        return _split(pack, start, middle) + _split(pack, middle, stop)
    return [document]


def pack_documents(pack: PaperPack) -> list[dict[str, Any]]:
    """The documents *pack* is stored as: one, or parts of consecutive rows under PACK_PART_BYTES."""
    documents = _split(pack, 0, pack.size)
    for part, document in enumerate(documents):
        document.update(part=part, parts=len(documents))
    return documents


def write_pack(pack: PaperPack) -> None:
    """Store *pack*, replacing a pack of the same paper, version and tokenizer version (written by
    another process meanwhile, or split otherwise). Raises ChunkStoreError."""
    documents = pack_documents(pack)
    key = {"paperId": pack.paper_id, "indexVersion": pack.index_version, "tokenizerVersion": pack.tokenizer_version}
    operations: list[Any] = [
        ReplaceOne({**key, "part": document["part"]}, document, upsert=True) for document in documents
    ]
    operations.append(DeleteMany({**key, "part": {"$gte": len(documents)}}))
    try:
        _packs().bulk_write(operations, ordered=True)
    except BulkWriteError as exc:
        # Two processes upserting the same new part: one insert loses to the other's, same content.
        if any(error.get("code") != _DUPLICATE_KEY for error in exc.details.get("writeErrors", [])):
            raise _error(f"Could not store the pack of paper {pack.paper_id}", exc) from exc
    except PyMongoError as exc:
        raise _error(f"Could not store the pack of paper {pack.paper_id}", exc) from exc


def _array(document: dict[str, Any], field: str, dtype: str) -> np.ndarray:
    return np.frombuffer(bytes(document[field]), dtype=dtype)


def _joined(parts: list[dict[str, Any]], *, with_embeddings: bool) -> PaperPack:
    """The pack stored as *parts* (all of them, in order)."""
    statistics = [
        LexicalStats(
            terms=tuple(part["terms"].split("\n")) if part["terms"] else (),
            document_frequencies=_array(part, "documentFrequencies", "<i8"),
            lengths=_array(part, "lengths", "<i4"),
            offsets=_array(part, "offsets", "<i8"),
            term_ids=_array(part, "termIds", "<i4"),
            counts=_array(part, "counts", "<i4"),
        )
        for part in parts
    ]
    rows = sum(part["rows"] for part in parts)
    if with_embeddings:
        embeddings = np.concatenate([_array(part, "vectors", "<f4") for part in parts]).reshape(rows, -1)
    else:
        embeddings = np.zeros((rows, 0), dtype=np.float32)
    return PaperPack(
        **_paper_version(parts[0]),
        chunk_indexes=np.concatenate([_array(part, "chunkIndexes", "<i4") for part in parts]),
        page_numbers=np.concatenate([_array(part, "pageNumbers", "<i4") for part in parts]),
        texts=tuple(text for part in parts for text in part["texts"]),
        blurbs=tuple(blurb for part in parts for blurb in part["blurbs"]),
        embeddings=embeddings,
        lexical=merge_statistics(statistics),
        tokenizer_version=parts[0]["tokenizerVersion"],
    )


def load_packs(
    versions: dict[int, PaperVersion], *, embedding_model: str, with_embeddings: bool = True
) -> dict[int, PaperPack]:
    """The stored packs of the papers in *versions* (paper id -> index version and content hash) of
    *embedding_model* and the current tokenizer version: paper id -> pack, for those papers whose
    pack is complete (every part there). Papers without one are left out. Raises ChunkStoreError."""
    if not versions:
        return {}
    query = {"embeddingModel": embedding_model, "tokenizerVersion": TOKENIZER_VERSION}
    projection = {"_id": 0} if with_embeddings else {"_id": 0, "vectors": 0}
    try:
        documents = _current_documents(_packs(), versions, query, projection)
    except PyMongoError as exc:
        raise _error("Could not read packs", exc) from exc
    by_paper: dict[int, list[dict[str, Any]]] = {}
    for document in documents:
        by_paper.setdefault(document["paperId"], []).append(document)
    packs = {}
    for paper_id, parts in by_paper.items():
        parts.sort(key=lambda part: part["part"])
        if [part["part"] for part in parts] == list(range(parts[0]["parts"])):
            packs[paper_id] = _joined(parts, with_embeddings=with_embeddings)
    return packs


class PackGroup(NamedTuple):
    """The packs of one paper id, index version, embedding model, content hash and tokenizer version."""

    paper_id: int
    index_version: str
    embedding_model: str
    paper_sha256: str
    tokenizer_version: int


def pack_rows_by_paper(paper_ids: Iterable[int] | None = None) -> dict[PackGroup, int | None]:
    """The rows of each stored pack, by `PackGroup`; None for a pack with parts missing. Raises
    ChunkStoreError."""
    query = {} if paper_ids is None else {"paperId": {"$in": list(paper_ids)}}
    fields = ("paperId", "indexVersion", "embeddingModel", "paperSha256", "tokenizerVersion", "part", "parts", "rows")
    try:
        documents = list(_packs().find(query, {"_id": 0, **dict.fromkeys(fields, 1)}))
    except PyMongoError as exc:
        raise _error("Could not count packs", exc) from exc
    parts: dict[PackGroup, list[dict[str, Any]]] = {}
    for document in documents:
        group = PackGroup(
            document["paperId"],
            str(document["indexVersion"]),
            document["embeddingModel"],
            document["paperSha256"],
            document["tokenizerVersion"],
        )
        parts.setdefault(group, []).append(document)
    return {
        group: sum(d["rows"] for d in found)
        if sorted(d["part"] for d in found) == list(range(found[0]["parts"]))
        else None
        for group, found in parts.items()
    }


def delete_pack(group: PackGroup) -> None:
    """Delete the pack of *group* (a stale one; its chunks stay). Raises ChunkStoreError."""
    query = {
        "paperId": group.paper_id,
        "indexVersion": group.index_version,
        "embeddingModel": group.embedding_model,
        "paperSha256": group.paper_sha256,
        "tokenizerVersion": group.tokenizer_version,
    }
    try:
        _packs().delete_many(query)
    except PyMongoError as exc:
        raise _error(f"Could not delete the pack of paper {group.paper_id}", exc) from exc


# --- sentence embeddings ----------------------------------------------------------------------------


def sentence_key(embedding_model: str, text: str) -> str:
    """The `_id` of *text*'s embedding under *embedding_model* in `sentenceembeddings`."""
    return f"{embedding_model}:{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()}"


def load_sentence_embeddings(embedding_model: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """The stored embeddings of those *texts* that have one under *embedding_model*: text -> vector
    (float32, as stored). Raises ChunkStoreError when the chunk index cannot be read."""
    keys = {sentence_key(embedding_model, text): text for text in texts}
    if not keys:
        return {}
    try:
        documents = get_client()[settings.MONGODB_DB][SENTENCE_COLLECTION].find(
            {"_id": {"$in": list(keys)}}, {"embedding": 1}
        )
        return {keys[doc["_id"]]: np.frombuffer(bytes(doc["embedding"]), dtype="<f4") for doc in documents}
    except PyMongoError as exc:
        raise _error("Could not read sentence embeddings", exc) from exc


def save_sentence_embeddings(embedding_model: str, vectors: dict[str, np.ndarray]) -> None:
    """Store *vectors* (text -> vector) under *embedding_model*; a text already stored (by another
    process meanwhile) keeps its vector. Raises ChunkStoreError when the chunk index refuses."""
    if not vectors:
        return
    documents = [
        {
            "_id": sentence_key(embedding_model, text),
            "embeddingModel": embedding_model,
            "embedding": Binary(np.asarray(vector, dtype="<f4").tobytes()),
        }
        for text, vector in vectors.items()
    ]
    try:
        get_client()[settings.MONGODB_DB][SENTENCE_COLLECTION].insert_many(documents, ordered=False)
    except BulkWriteError as exc:
        if any(error.get("code") != _DUPLICATE_KEY for error in exc.details.get("writeErrors", [])):
            raise _error("Could not store sentence embeddings", exc) from exc
    except PyMongoError as exc:
        raise _error("Could not store sentence embeddings", exc) from exc


def count_sentence_embeddings(embedding_model: str) -> int:
    """How many sentence embeddings are stored under *embedding_model*."""
    try:
        return get_client()[settings.MONGODB_DB][SENTENCE_COLLECTION].count_documents(
            {"embeddingModel": embedding_model}
        )
    except PyMongoError as exc:
        raise _error("Could not count sentence embeddings", exc) from exc


def embedded_server_uri(data_dir: Path | None = None) -> str | None:
    """The URI of the embedded server of *data_dir* if one answers, else None. Starts nothing."""
    state_file = Path(data_dir or settings.EMBEDDED_MONGO_DIR) / "server.json"
    if not state_file.exists():
        return None
    uri = json.loads(state_file.read_text())["uri"]
    return uri if _ping(uri) else None
