"""Contextual blurbs: heuristic without a chat model; from the chat model, cached per paper, with one."""

import pytest

from indexing.models import ContextualBlurb
from indexing.services import index_paper
from tests.support.indexing import new_paper, use_stub_embeddings

pytestmark = pytest.mark.django_db(transaction=True)

PAGES = [
    "Raft elects a leader with randomized election timeouts. " * 20,
    "The leader replicates log entries to its followers and commits them once a majority stores them. " * 15,
]


def blurbs_stored(chunk_store, paper) -> list[str]:
    return [doc["contextualBlurb"] for doc in chunk_store.find({"paperId": paper.pk}).sort("chunkIndex", 1)]


def test_heuristic_blurbs_name_the_paper_and_never_call_a_model(alice, settings, openai_stub, chunk_store):
    use_stub_embeddings(settings, openai_stub)
    paper = index_paper(paper_id=new_paper(alice, PAGES, title="Raft notes").pk)
    assert openai_stub.requests == []
    assert all(blurb.startswith('From "Raft notes"') for blurb in blurbs_stored(chunk_store, paper))


def test_chat_model_blurbs_are_stored_with_the_chunks_and_cached_for_a_reindex(
    alice, settings, openai_stub, chunk_store
):
    use_stub_embeddings(settings, openai_stub)
    settings.CONTEXTUAL_BLURBS = "llm"
    openai_stub.reply = "This passage explains how Raft chooses a leader."
    paper = index_paper(paper_id=new_paper(alice, PAGES, title="Raft notes").pk)

    calls = len(openai_stub.requests)
    assert calls == paper.chunk_count > 1
    assert set(blurbs_stored(chunk_store, paper)) == {openai_stub.reply}
    assert ContextualBlurb.objects.filter(paper=paper).count() == len(set(c["text"] for c in chunk_store.find()))

    index_paper(paper_id=paper.pk)
    assert len(openai_stub.requests) == calls  # every blurb came from the cache
