"""Pre-fill the sentence-embedding cache (`indexing.embedding_cache`) when a paper is indexed.

The extractive answer embeds the candidate sentences of the passages it quotes from
(`chat.extractive.embed_candidates`); embedding them while answering was most of an answer's
CPU. Indexing sends `indexing.signals.paper_indexed`; the receiver here, connected in
`ChatConfig.ready()`, splits the paper's chunks with the extractive answer's own splitter
(`candidate_sentences`, so the texts, and therefore the cache keys, are the ones an answer asks
for) and embeds those the chunk index lacks, in the worker. Windows of two sentences need no
vectors of their own (their vector is the sum of their sentences').
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from chat.extractive import candidate_sentences
from indexing import store
from indexing.embedding_cache import sentence_embeddings
from indexing.embeddings import configured_model_name
from indexing.retrieval import Reference, paper_versions
from papers.models import Paper

logger = logging.getLogger(__name__)


def paper_candidate_texts(paper: Paper) -> list[str]:
    """The candidate sentence texts of every current chunk of *paper*, in chunk order, unique.
    Raises ChunkStoreError when the chunk index cannot be read."""
    matrix = store.load_chunks(paper_versions([paper]), embedding_model=paper.embedding_model, with_embeddings=False)
    references = [
        Reference(n=row + 1, paper_id=paper.pk, title="", page=chunk["pageNumber"], text=chunk["text"], score=0.0)
        for row, chunk in enumerate(matrix.chunks)
    ]
    return list(dict.fromkeys(sentence.text for sentence in candidate_sentences(references)))


def prefill_sentence_embeddings(*, paper: Paper) -> int:
    """Embed and store the candidate sentences of *paper*'s current chunks that the chunk index
    lacks. Returns how many were embedded. Raises ChunkStoreError, EmbeddingError."""
    texts = paper_candidate_texts(paper)
    embedded = sentence_embeddings.store_missing(texts)
    logger.info("Paper %s: %s candidate sentences, %s embedded now", paper.pk, len(texts), embedded)
    return embedded


def prefill_papers(*, papers: QuerySet[Paper]) -> dict[int, int]:
    """Re-fill the stored sentence vectors of the ready papers among *papers* (`Paper.objects.ready`
    for the configured embedding model; others are left out): for each, `prefill_sentence_embeddings`.
    After a change to how chunks split into sentences (`candidate_sentences`), a paper's new
    sentences have no stored vector until an answer embeds them, and the re-ranking of retrieval
    (`indexing.retrieval`) goes without them meanwhile; this closes that gap without re-indexing.
    Returns paper id -> sentences embedded now (0 when all were stored), in paper id order.
    Raises ChunkStoreError, EmbeddingError."""
    ready = papers.filter(pk__in=Paper.objects.ready(embedding_model=configured_model_name()).values("pk"))
    return {paper.pk: prefill_sentence_embeddings(paper=paper) for paper in ready.order_by("pk")}


def prefill_on_index(sender: Any, *, paper: Paper, **kwargs: Any) -> None:
    """`paper_indexed` receiver: `prefill_sentence_embeddings` unless SENTENCE_EMBEDDING_PREFILL is off."""
    if settings.SENTENCE_EMBEDDING_PREFILL:
        prefill_sentence_embeddings(paper=paper)
