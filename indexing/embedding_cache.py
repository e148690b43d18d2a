"""Sentence embeddings computed once: an in-process LRU in front of the chunk index's
`sentenceembeddings` collection (`indexing.store`), in front of the embedding model.

The extractive answer embeds the candidate sentences of the passages it quotes from; the same
passages come back for related questions, in every process. Indexing pre-fills the collection with
the candidate sentences of each new paper (`chat.prefill`), so an answer normally finds every
vector it needs without running the model. Keys are (embedding model, SHA-256 of the text), so
vectors of different models never meet.

The in-process layer holds at most `SENTENCE_EMBEDDING_CACHE_ENTRIES` vectors (384 floats each with
MiniLM: 20,000 ~ 30 MB); the least recently used go first. When the chunk index cannot be reached
the cache embeds directly (logged): a cache must never fail an answer.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from django.conf import settings

from indexing import store
from indexing.embeddings import get_embedder

logger = logging.getLogger(__name__)


class SentenceEmbeddingCache:
    """Embeddings of texts under the configured model, each computed once (see the module docstring).

    *max_entries* bounds the in-process layer (default: `SENTENCE_EMBEDDING_CACHE_ENTRIES`, read at
    each use). Thread-safe: the answer pool's threads share one instance.
    """

    def __init__(self, max_entries: int | None = None) -> None:
        self._max_entries = max_entries
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def max_entries(self) -> int:
        return self._max_entries if self._max_entries is not None else settings.SENTENCE_EMBEDDING_CACHE_ENTRIES

    def __len__(self) -> int:
        return len(self._vectors)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of *texts*: shape (len(texts), dimension), float32, unit rows, the same
        vectors the embedder gives. Only texts found in neither layer are embedded."""
        model = get_embedder().model_name
        found = self._held(model, texts)
        missing = [text for text in dict.fromkeys(texts) if text not in found]
        if missing:
            fetched = self._stored_or_embedded(model, missing)
            found.update(fetched)
            self._remember(model, fetched)
        rows = [found[text] for text in texts]
        dimension = rows[0].shape[0] if rows else get_embedder().dimension
        return np.array(rows, dtype=np.float32).reshape(len(texts), dimension)

    def known(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The embeddings of those of *texts* this process or the chunk index already holds, by
        text; nothing is embedded (a text never embedded is left out). Raises ChunkStoreError."""
        model = get_embedder().model_name
        found = self._held(model, texts)
        missing = [text for text in dict.fromkeys(texts) if text not in found]
        if missing:
            stored = store.load_sentence_embeddings(model, missing)
            self._remember(model, stored)
            found.update(stored)
        return found

    def store_missing(self, texts: Sequence[str]) -> int:
        """Embed and store those of *texts* the chunk index lacks, in batches of `EMBED_BATCH_SIZE`,
        without filling this process's layer (indexing pre-fills for the web processes). Returns
        how many were embedded. Raises ChunkStoreError, EmbeddingError."""
        embedder = get_embedder()
        unique = list(dict.fromkeys(texts))
        embedded = 0
        batch = settings.EMBED_BATCH_SIZE * 4  # one lookup per several model batches
        for start in range(0, len(unique), batch):
            window = unique[start : start + batch]
            stored = store.load_sentence_embeddings(embedder.model_name, window)
            new = [text for text in window if text not in stored]
            if new:
                store.save_sentence_embeddings(embedder.model_name, dict(zip(new, embedder.embed(new), strict=True)))
                embedded += len(new)
        return embedded

    def clear(self) -> None:
        """Forget this process's layer (the stored vectors stay)."""
        with self._lock:
            self._vectors.clear()

    def _held(self, model: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors of *texts* this process holds (most recently used last)."""
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for text in texts:
                vector = self._vectors.get((model, text))
                if vector is not None:
                    self._vectors.move_to_end((model, text))
                    found[text] = vector
        return found

    def _stored_or_embedded(self, model: str, texts: list[str]) -> dict[str, np.ndarray]:
        try:
            stored = store.load_sentence_embeddings(model, texts)
        except store.ChunkStoreError:
            logger.warning("Sentence embeddings could not be read; embedding %s sentences", len(texts), exc_info=True)
            stored = {}
        new = [text for text in texts if text not in stored]
        if not new:
            return stored
        fresh = dict(zip(new, get_embedder().embed(new), strict=True))
        try:
            store.save_sentence_embeddings(model, fresh)
        except store.ChunkStoreError:
            logger.warning("Sentence embeddings could not be stored", exc_info=True)
        return stored | fresh

    def _remember(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self._lock:
            for text, vector in vectors.items():
                self._vectors[(model, text)] = vector
                self._vectors.move_to_end((model, text))
            while len(self._vectors) > max(self.max_entries, 0):
                self._vectors.popitem(last=False)


sentence_embeddings = SentenceEmbeddingCache()
