"""The chunk index module against real MongoDB-wire servers: errors are ours and readable."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from indexing import store
from tests.support.indexing import closed_port_uri


@pytest.fixture
def no_mongo(settings):
    settings.MONGODB_URI, settings.MONGODB_TIMEOUT_MS = closed_port_uri(), 200
    yield
    store.reset_client()


def test_a_missing_mongo_server_is_a_chunk_store_error_with_a_readable_message(no_mongo):
    with pytest.raises(store.ChunkStoreError) as error:
        store.count_chunks(1)

    assert error.value.code == "chunk_index_unavailable"
    assert error.value.message == (
        "Could not count chunks: the MongoDB server of MONGODB_URI is not reachable (ServerSelectionTimeoutError). "
        "Check that it is running and that MONGODB_URI is right."
    )


def test_ensure_indexes_reports_a_missing_server_without_a_traceback(no_mongo):
    with pytest.raises(CommandError, match=r"^Could not create the chunk index's indexes: the MongoDB server"):
        call_command("ensure_indexes", stdout=io.StringIO())


@pytest.mark.django_db
def test_ensure_indexes_is_idempotent_and_leaves_nothing_missing(chunk_store):
    chunk_store.drop_indexes()
    chunk_store.database[store.PACK_COLLECTION].drop_indexes()
    assert store.missing_indexes() == list(store.REQUIRED_INDEXES)

    call_command("ensure_indexes", stdout=io.StringIO())
    call_command("ensure_indexes", stdout=io.StringIO())

    assert store.missing_indexes() == []


def test_the_atlas_vector_index_filters_on_paper_version_and_model():
    definition = store.vector_index_definition(1536)

    assert definition["fields"][0] == {
        "type": "vector",
        "path": "embedding",
        "numDimensions": 1536,
        "similarity": "cosine",
    }
    assert [field["path"] for field in definition["fields"][1:]] == ["paperId", "indexVersion", "embeddingModel"]


@pytest.mark.django_db
def test_clients_of_two_servers_live_side_by_side(chunk_store, settings):
    reachable = settings.MONGODB_URI
    settings.MONGODB_URI, settings.MONGODB_TIMEOUT_MS = closed_port_uri(), 200
    with pytest.raises(store.ChunkStoreError):
        store.ping()

    settings.MONGODB_URI = reachable
    store.ping()  # the first client was not closed by the detour


def records(paper_id: int, version: str, sha256: str, texts: list[str]) -> list[store.ChunkRecord]:
    return [
        store.ChunkRecord(paper_id, sha256, i, 1, text, "", np.full(4, paper_id, np.float32), "m", version)
        for i, text in enumerate(texts)
    ]


@pytest.mark.django_db
def test_chunks_and_packs_of_many_papers_are_read_in_batches_at_exactly_the_versions_asked(chunk_store, monkeypatch):
    monkeypatch.setattr(store, "PAPERS_PER_QUERY", 2)
    for paper_id in (1, 2, 3, 4, 5):
        current = records(
            paper_id, f"v{paper_id}", f"sha{paper_id}", [f"paper {paper_id} one", f"paper {paper_id} two"]
        )
        store.write_chunks(current)
        store.write_pack(store.PaperPack.of_records(current))
    superseded = records(2, "v1", "sha2", ["paper 2 old"])  # another paper's version string, of paper 2
    other_file = records(3, "v3", "another file", ["paper 3 of another database"])
    for planted in (superseded, other_file):
        store.write_chunks([dataclasses.replace(r, chunk_index=9) for r in planted])
    store.write_pack(store.PaperPack.of_records(superseded))
    versions = {paper_id: store.PaperVersion(f"v{paper_id}", f"sha{paper_id}") for paper_id in (1, 2, 3, 5)}

    matrix = store.load_chunks(versions, embedding_model="m")
    packs = store.load_packs(versions, embedding_model="m")

    expected = [f"paper {paper_id} {n}" for paper_id in (1, 2, 3, 5) for n in ("one", "two")]
    assert [chunk["text"] for chunk in matrix.chunks] == expected
    assert matrix.embeddings[:, 0].tolist() == [1, 1, 2, 2, 3, 3, 5, 5]
    assert sorted(packs) == [1, 2, 3, 5]
    assert [chunk["text"] for paper_id in sorted(packs) for chunk in packs[paper_id].chunk_documents()] == expected
