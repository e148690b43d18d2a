"""The citation contract: `[N]` markers parsed out of a streamed answer, as it arrives.

- A marker may be split across stream chunks ("[1" + "2]"); text after an unclosed "[" is held back
  until the bracket closes or grows too long to be a marker.
- Lists and ranges resolve to their numbers: "[2, 3]", "[2-4]", "[2][3]" -> [2][3][4]. Output
  markers are always the normalised form "[N]".
- A number not in the reference list is removed, never linked.
- A reference cited twice in one sentence is kept once there.

The parser is pure: it turns text in into text out plus the new reference numbers it saw.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_MARKER = re.compile(r"\[\s*(\d+(?:\s*(?:[-\u2013,;]|and)\s*\d+)*)\s*\]")
_MAX_MARKER_CHARS = 40
_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")
MAX_RANGE = 50


def marker_numbers(inner: str) -> list[int]:
    """Numbers in a marker's inside: "2, 3" -> [2, 3]; "2-4" -> [2, 3, 4]. Order kept, repeats
    dropped; a range longer than MAX_RANGE (a typo such as "1-1000") yields its ends only."""
    numbers: list[int] = []
    for part in re.split(r"\s*(?:[,;]|and)\s*", inner.strip()):
        bounds = re.split(r"\s*[-\u2013]\s*", part)
        if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit():
            low, high = int(bounds[0]), int(bounds[1])
            if low <= high and high - low <= MAX_RANGE:
                numbers.extend(range(low, high + 1))
            else:
                numbers.extend([low, high])
        elif part.isdigit():
            numbers.append(int(part))
    return list(dict.fromkeys(numbers))


@dataclass
class CitationStream:
    """Feed streamed text in with `feed`, call `close` at the end; both return `(text, new)`:
    the text safe to show now and the reference numbers cited for the first time in it.

    *valid* holds the reference numbers that exist; anything else is dropped.
    """

    valid: set[int]
    cited: list[int] = field(default_factory=list)
    _pending: str = ""
    _sentence: set[int] = field(default_factory=set)
    _last_emitted: str = ""

    def feed(self, chunk: str) -> tuple[str, list[int]]:
        self._pending += chunk
        return self._drain(final=False)

    def close(self) -> tuple[str, list[int]]:
        return self._drain(final=True)

    def _render(self, numbers: Iterable[int]) -> tuple[str, list[int]]:
        out, new = [], []
        for number in numbers:
            if number not in self.valid or number in self._sentence:
                continue
            self._sentence.add(number)
            out.append(f"[{number}]")
            if number not in self.cited:
                self.cited.append(number)
                new.append(number)
        return "".join(out), new

    def _plain(self, text: str) -> str:
        # A sentence boundary in plain text resets the per-sentence de-duplication.
        if _SENTENCE_END.search(text) or (text[:1].isspace() and self._last_emitted.endswith((".", "!", "?"))):
            self._sentence = set()
        if text:
            self._last_emitted = text
        return text

    def _drain(self, *, final: bool) -> tuple[str, list[int]]:
        out: list[str] = []
        new: list[int] = []
        text = self._pending
        position = 0
        while True:
            bracket = text.find("[", position)
            if bracket < 0:
                out.append(self._plain(text[position:]))
                position = len(text)
                break
            out.append(self._plain(text[position:bracket]))
            match = _MARKER.match(text, bracket)
            if match:
                rendered, fresh = self._render(marker_numbers(match.group(1)))
                # "[1] [2]": drop the space between markers that were merged or removed.
                if not rendered and out and out[-1].endswith(" ") and text[match.end() : match.end() + 1] in ".,;:":
                    out[-1] = out[-1].rstrip(" ")
                out.append(rendered)
                new.extend(fresh)
                position = match.end()
                continue
            close = text.find("]", bracket)
            could_grow = close < 0 and len(text) - bracket < _MAX_MARKER_CHARS
            if could_grow and not final and re.fullmatch(r"\[[\d\s,;\u2013\-and]*", text[bracket:]):
                position = bracket  # hold back: the marker may finish in the next chunk
                break
            out.append(self._plain(text[bracket]))
            position = bracket + 1
        self._pending = text[position:]
        if final and self._pending:
            out.append(self._plain(self._pending))
            self._pending = ""
        return "".join(out), new


def parse_citations(text: str, valid: set[int]) -> tuple[str, list[int]]:
    """Parse a whole answer at once: `(normalised text, cited numbers in first-cited order)`."""
    stream = CitationStream(valid=valid)
    head, _ = stream.feed(text)
    tail, _ = stream.close()
    return head + tail, stream.cited
