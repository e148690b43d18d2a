"""Contextual blurbs: a short, document-level preface embedded with each chunk.

After Anthropic's "contextual retrieval" (2024): a chunk such as "the leader then sends
AppendEntries" is easier to find when its embedding also carries which paper and which section it
comes from. Two modes (`CONTEXTUAL_BLURBS`):

- heuristic: built from the paper's title, the chunk's section heading and the abstract's first
  sentence; free and deterministic.
- llm (or auto with a chat model configured): one chat-model call per chunk. That costs roughly
  400x the embeddings, so blurbs are cached per paper and chunk text (`ContextualBlurb`) and a
  re-index of unchanged text costs nothing.
"""

from __future__ import annotations

import hashlib
import re

from django.conf import settings

from indexing.chunking import ChunkSpan
from indexing.models import ContextualBlurb
from papers.models import Paper

BLURB_PROMPT = (
    "Here is the start of a research paper:\n<document>\n{document}\n</document>\n"
    "Here is a passage from it:\n<passage>\n{passage}\n</passage>\n"
    "Write one short sentence that situates the passage within the paper, to improve search "
    "retrieval of the passage. Answer with the sentence only."
)
DOCUMENT_CHARS = 6000


def _first_sentence(text: str, max_words: int = 24) -> str:
    sentence = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    words = sentence.split()
    return " ".join(words[:max_words]) + ("…" if len(words) > max_words else "")


def heuristic_blurb(paper: Paper, chunk: ChunkSpan) -> str:
    """`From "<title>" (<year>), section "<heading>": <abstract's first sentence>`, parts omitted
    when unknown."""
    parts = [f'From "{paper.display_title}"' + (f" ({paper.year})" if paper.year else "")]
    if chunk.heading:
        parts.append(f'section "{chunk.heading}"')
    blurb = ", ".join(parts)
    if paper.abstract:
        blurb += f": {_first_sentence(paper.abstract)}"
    return blurb


def uses_llm_blurbs() -> bool:
    mode = settings.CONTEXTUAL_BLURBS
    return mode == "llm" or (mode == "auto" and bool(settings.OPENAI_API_KEY))


def make_blurbs(paper: Paper, chunks: list[ChunkSpan], pages: list[str]) -> list[str]:
    """One blurb per chunk, in order. LLM blurbs come from the cache where present; the rest are
    generated and cached. Raises annotagent.llm.ChatModelError when the model fails."""
    if not uses_llm_blurbs():
        return [heuristic_blurb(paper, chunk) for chunk in chunks]
    from annotagent.llm import complete, configured_chat_model

    model = configured_chat_model(project=False)
    keys = [hashlib.sha256(chunk.text.encode()).hexdigest() for chunk in chunks]
    cached = dict(
        ContextualBlurb.objects.filter(paper=paper, model=model, text_sha256__in=keys).values_list(
            "text_sha256", "blurb"
        )
    )
    document = "\n".join(pages)[:DOCUMENT_CHARS]
    blurbs = []
    for chunk, key in zip(chunks, keys, strict=True):
        if key not in cached:
            text = complete(BLURB_PROMPT.format(document=document, passage=chunk.text), model=model, max_tokens=80)
            cached[key] = text.strip()[:500]
            ContextualBlurb.objects.update_or_create(
                paper=paper, model=model, text_sha256=key, defaults={"blurb": cached[key]}
            )
        blurbs.append(cached[key])
    return blurbs
