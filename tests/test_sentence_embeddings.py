"""Sentence embeddings computed once: the in-process LRU in front of the chunk index's
`sentenceembeddings`, pre-filled when a paper is indexed, with the real local model and the
embedded chunk index."""

import io
import json
import subprocess
import sys

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from chat.prefill import paper_candidate_texts
from chat.services import answer_question
from indexing import embedding_cache, store
from indexing.embedding_cache import SentenceEmbeddingCache, sentence_embeddings
from indexing.embeddings import get_embedder
from tests.conftest import PAXOS_PAGES, RAFT_PAGES
from tests.support.indexing import closed_port_uri, new_paper
from tests.support.live_server import ROOT, embedded_env

pytestmark = pytest.mark.django_db

SENTENCES = [
    "Raft elects a single leader for each term.",
    "An entry is committed once a majority of servers have stored it.",
    "Any two majorities intersect, so two different values can never both be chosen.",
]


class Counting:
    """The configured embedder, recording how many texts each call embeds."""

    def __init__(self) -> None:
        self.inner = get_embedder()
        self.model_name = self.inner.model_name
        self.dimension = self.inner.dimension
        self.calls: list[int] = []

    def embed(self, texts):
        self.calls.append(len(texts))
        return self.inner.embed(texts)


@pytest.fixture
def counting(monkeypatch):
    """The model as the cache sees it, counting what it embeds."""
    embedder = Counting()
    monkeypatch.setattr(embedding_cache, "get_embedder", lambda: embedder)
    return embedder


@pytest.fixture(autouse=True)
def _empty_process_layer():
    sentence_embeddings.clear()
    yield
    sentence_embeddings.clear()


def test_the_cache_gives_the_vectors_direct_embedding_gives(chunk_store):
    cached = SentenceEmbeddingCache().embed(SENTENCES)
    direct = get_embedder().embed(SENTENCES)
    assert cached.shape == direct.shape == (3, 384)
    assert cached.dtype == np.float32
    np.testing.assert_allclose(cached, direct, atol=1e-5)


def test_each_sentence_is_embedded_once_then_read_from_either_layer(chunk_store, counting):
    cache = SentenceEmbeddingCache()
    first = cache.embed([*SENTENCES, SENTENCES[0]])
    assert counting.calls == [3]  # the repeated sentence once
    again = cache.embed(SENTENCES[::-1])
    fresh_process_layer = SentenceEmbeddingCache().embed(SENTENCES)
    assert counting.calls == [3]
    np.testing.assert_array_equal(again, first[:3][::-1])
    np.testing.assert_array_equal(fresh_process_layer, first[:3])
    assert store.count_sentence_embeddings(counting.model_name) == 3


def test_stored_sentence_embeddings_survive_a_new_process(chunk_store, settings, tmp_path):
    vectors = SentenceEmbeddingCache().embed(SENTENCES)
    # A new interpreter whose model would fail if it ran: every vector must come from the store.
    script = f"""
import json, django
django.setup()
from indexing import embedding_cache
class NoModel:
    model_name = {get_embedder().model_name!r}
    dimension = 384
    def embed(self, texts):
        raise AssertionError("the model ran")
embedding_cache.get_embedder = NoModel
print(json.dumps(embedding_cache.SentenceEmbeddingCache().embed({SENTENCES!r}).tolist()))
"""
    env = embedded_env(
        tmp_path, MONGODB_URI=settings.MONGODB_URI, MONGODB_DB=settings.MONGODB_DB, ENV_FILE="", DEBUG="true"
    )
    env["DJANGO_SETTINGS_MODULE"] = "annotagent.settings"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    read = np.array(json.loads(done.stdout.strip().splitlines()[-1]), dtype=np.float32)
    np.testing.assert_array_equal(read, vectors)


def test_the_process_layer_holds_at_most_its_bound(chunk_store, counting, settings):
    settings.SENTENCE_EMBEDDING_CACHE_ENTRIES = 2
    cache = SentenceEmbeddingCache()
    cache.embed(SENTENCES)
    assert len(cache) == 2
    cache.embed([SENTENCES[2]])  # the newest stays in memory
    assert len(cache) == 2
    assert counting.calls == [3]


def test_the_cache_embeds_directly_when_the_chunk_index_is_unreachable(chunk_store, settings, counting):
    from tests.support.indexing import closed_port_uri

    settings.MONGODB_URI = closed_port_uri()
    settings.MONGODB_TIMEOUT_MS = 300
    store.reset_client()
    vectors = SentenceEmbeddingCache().embed(SENTENCES[:1])
    assert vectors.shape == (1, 384)
    assert counting.calls == [1]


def test_indexing_a_paper_prefills_its_candidate_sentences(alice, indexed_paper, counting):
    paper = indexed_paper(alice, RAFT_PAGES, title="Raft")
    texts = paper_candidate_texts(paper)
    assert len(texts) >= 4
    assert "Raft elects a single leader for each term." in texts
    stored = store.load_sentence_embeddings(paper.embedding_model, texts)
    assert set(stored) == set(texts)
    np.testing.assert_allclose(np.array([stored[t] for t in texts]), get_embedder().embed(texts), atol=1e-5)
    assert sum(counting.calls) == len(texts)  # by the worker, while indexing
    counting.calls.clear()
    SentenceEmbeddingCache().embed(texts)  # as an answer asks for them
    assert counting.calls == []


def test_no_prefill_when_it_is_turned_off(alice, indexed_paper, settings):
    settings.SENTENCE_EMBEDDING_PREFILL = False
    paper = indexed_paper(alice, PAXOS_PAGES, title="Paxos")
    assert store.load_sentence_embeddings(paper.embedding_model, paper_candidate_texts(paper)) == {}


def test_prefill_sentences_stores_what_ready_papers_lack_once_and_skips_papers_not_ready(
    alice, indexed_paper, settings, counting
):
    # Vectors missing as after an upgrade that splits passages into new sentences.
    settings.SENTENCE_EMBEDDING_PREFILL = False
    paper = indexed_paper(alice, RAFT_PAGES, title="Raft")
    pending = new_paper(alice, PAXOS_PAGES, title="Paxos")
    texts = paper_candidate_texts(paper)
    assert store.load_sentence_embeddings(paper.embedding_model, texts) == {}
    out = io.StringIO()

    call_command("prefill_sentences", stdout=out)

    assert set(store.load_sentence_embeddings(paper.embedding_model, texts)) == set(texts)
    assert f"paper {paper.pk}: {len(texts)} sentence(s) embedded" in out.getvalue()
    assert f"paper {pending.pk}:" not in out.getvalue()  # pending: nothing to split yet
    assert sum(counting.calls) == len(texts)
    out = io.StringIO()
    call_command("prefill_sentences", "--paper", str(paper.pk), stdout=out)
    assert sum(counting.calls) == len(texts)  # nothing embedded twice
    assert "Done 1 ready paper(s): 0 sentence(s) embedded" in out.getvalue()


def test_prefill_sentences_names_an_unknown_paper_or_project_instead_of_doing_nothing(alice, indexed_paper):
    paper = indexed_paper(alice, RAFT_PAGES, title="Raft")
    with pytest.raises(CommandError, match="No paper with id 999"):
        call_command("prefill_sentences", "--paper", str(paper.pk), "--paper", "999", stdout=io.StringIO())
    with pytest.raises(CommandError, match="No project with id 999"):
        call_command("prefill_sentences", "--project", "999", stdout=io.StringIO())


def test_prefill_sentences_without_the_chunk_index_is_a_clear_command_error(alice, indexed_paper, settings):
    indexed_paper(alice, RAFT_PAGES, title="Raft")
    settings.MONGODB_URI, settings.MONGODB_TIMEOUT_MS = closed_port_uri(), 200
    store.reset_client()

    with pytest.raises(CommandError, match="MongoDB server of MONGODB_URI is not reachable"):
        call_command("prefill_sentences", stdout=io.StringIO())


def test_an_answer_reads_its_sentences_from_the_prefilled_cache_unchanged(
    alice, indexed_project, counting, monkeypatch
):
    question = "How does Raft elect a leader?"
    with_cache = answer_question(project=indexed_project, user=alice, question=question)
    assert counting.calls == []  # every candidate sentence came from the store
    embed = get_embedder().embed
    # Every sentence embedded afresh, for the answer and for retrieval's best-sentence re-ranking.
    direct = type(
        "Direct",
        (),
        {
            "embed": staticmethod(embed),
            "known": staticmethod(lambda texts: dict(zip(texts, embed(list(texts)), strict=True))),
        },
    )
    monkeypatch.setattr("chat.services.sentence_vectors", direct)
    without = answer_question(project=indexed_project, user=alice, question=question)
    assert with_cache.text == without.text
    assert "Raft elects a single leader" in with_cache.text
    assert with_cache.status == without.status
    assert [(r.n, r.paper_id, r.page) for r in with_cache.references] == [
        (r.n, r.paper_id, r.page) for r in without.references
    ]


def test_an_answer_still_quotes_its_evidence_when_stored_vectors_cannot_be_read(alice, indexed_project, monkeypatch):
    def unreadable(texts):
        raise store.ChunkStoreError("The chunk index is unreachable.")

    embed = get_embedder().embed
    broken = type("Broken", (), {"embed": staticmethod(embed), "known": staticmethod(unreadable)})
    monkeypatch.setattr("chat.services.sentence_vectors", broken)
    answer = answer_question(project=indexed_project, user=alice, question="How does Raft elect a leader?")
    assert answer.status in ("answered", "partly_answered")
    assert "Raft elects a single leader" in answer.text
