"""The answer pool: retrieval and the extractive answer run on `ANSWER_POOL_THREADS` threads of their
own, never queued behind database calls on the one thread those share."""

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async

from chat.pool import answer_pool, in_answer_pool
from chat.services import AnswerSession, extractive_answer
from indexing import embeddings
from indexing.retrieval import Reference

pytestmark = pytest.mark.django_db(transaction=True)

REFERENCES = [
    Reference(
        n=1,
        paper_id=1,
        title="Raft",
        page=1,
        text="Raft elects a single leader for each term. A candidate that wins votes from a majority of "
        "the cluster becomes the leader.",
        score=0.8,
    )
]


async def test_answer_work_finishes_while_a_database_call_holds_the_shared_thread(chunk_store):
    release = threading.Event()
    # Stands for a slow database save: it holds the thread every thread-sensitive call shares.
    blocked = asyncio.ensure_future(sync_to_async(release.wait)())
    try:
        answers = await asyncio.wait_for(
            asyncio.gather(
                in_answer_pool(extractive_answer)("How does Raft elect a leader?", REFERENCES),
                in_answer_pool(extractive_answer)("What does a candidate need to become leader?", REFERENCES),
            ),
            timeout=60,
        )
    finally:
        release.set()
        await blocked
    assert all("[1]" in answer.text for answer in answers)


async def test_two_answers_embed_their_questions_at_the_same_time(alice, indexed_project, monkeypatch, settings):
    settings.ANSWER_POOL_THREADS = 2
    # Each question's embedding waits until the other question's is under way too: only answers that
    # progress concurrently get past it.
    both = threading.Barrier(2, timeout=30)
    embedder = embeddings.get_embedder()
    embed = embedder.embed

    def meeting(texts):
        if len(texts) == 1 and texts[0].startswith("Question"):
            both.wait()
        return embed(texts)

    monkeypatch.setattr(embedder, "embed", meeting)

    async def answer(question: str) -> str:
        session = AnswerSession(project=indexed_project, user=alice, question=question)
        async for _ in session.events():
            pass
        return session.text

    texts = await asyncio.wait_for(
        asyncio.gather(
            answer("Question one: how does Raft elect a leader?"), answer("Question two: what is a Paxos quorum?")
        ),
        timeout=120,
    )
    assert "Raft" in texts[0] and "[1]" in texts[0]
    assert "[1]" in texts[1]


def test_the_pool_has_the_configured_number_of_threads(settings):
    settings.ANSWER_POOL_THREADS = 3
    seen: set[str] = set()
    gate = threading.Barrier(3, timeout=30)

    def work() -> None:
        seen.add(threading.current_thread().name)
        gate.wait()

    futures = [answer_pool().submit(work) for _ in range(3)]
    for future in futures:
        future.result(timeout=60)
    assert len(seen) == 3 and all(name.startswith("answer") for name in seen)


def test_the_local_model_uses_the_configured_number_of_torch_threads(settings):
    import torch

    embeddings.get_embedder().embed(["warm"])
    assert torch.get_num_threads() == settings.EMBED_TORCH_THREADS
