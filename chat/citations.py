"""The citation contract: `[N]` markers parsed out of a streamed answer, as it arrives.

- A marker may be split across stream chunks ("[1" + "2]"); text after an unclosed "[" is held back
  until the bracket closes or grows too long to be a marker.
- Lists and ranges resolve to their numbers: "[2, 3]", "[2-4]", "[2][3]" -> [2][3][4]. Output
  markers are always the normalised form "[N]".
- A number not in the reference list is removed, never linked.
- A reference cited twice in one sentence is kept once there.
- A marker removed (unknown, or repeated in its sentence) takes its leading space with it.
- Variants that chat models write are read as markers: "【1】" and "【3:0†source】", "[2†source]",
  "[^1]", "[Source 1]" / "[Sources 1, 2]" / "[Passage 3]", and "(1)" / "(1, 2)" where it is
  unambiguous: the numbers are all valid references, the answer has used no "[N]" marker so far,
  and the parenthesis ends a claim (punctuation, a newline or the end follows; "(1) first, (2)
  second" is an enumeration and stays).

The parser is pure: it turns text in into text out plus the new reference numbers it saw.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# Marker variants written by chat models, normalised to "[N]" before parsing (see the module doc).
_VARIANT = re.compile(
    r"\u3010\s*(?P<lenticular>\d+(?:\s*[,\-\u2013]\s*\d+)*)[^\u3011\n]{0,30}\u3011"
    r"|\[\^(?P<footnote>\d+)\]"
    r"|\[\s*(?P<dagger>\d+(?:\s*[,\-\u2013]\s*\d+)*)\s*\u2020[^\]\n]{0,30}\]"
    r"|\[\s*(?:sources?|passages?|references?|docs?|documents?)\s*[:#]?\s*"
    r"(?P<named>\d+(?:\s*(?:[,;\-\u2013]|and)\s*(?:(?:sources?|passages?)\s*)?\d+)*)\s*\]",
    re.IGNORECASE,
)
_PAREN = re.compile(r"(?<=\S)(?P<space>\s?)\((?P<numbers>\d{1,3}(?:\s*,\s*\d{1,3})*)\)(?=[.,;:!?]|[ \t]*(?:\n|$))")
_BRACKET_STYLE = re.compile(r"\[\s*\d")
_OPENERS = (("\u3010", "\u3011"), ("[", "]"), ("(", ")"))
_MARKER = re.compile(r"\[\s*(\d+(?:\s*(?:[-\u2013,;]|and)\s*\d+)*)\s*\]")
_MAX_MARKER_CHARS = 40
# A sentence ends at . ! or ? (closing quotes and brackets may follow) before white space, or at a newline.
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)]*(?=\s)|\n")
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

    *valid* holds the reference numbers that exist; anything else is dropped. Trailing spaces are
    held back until the next visible text, so a marker removed after them can take its space
    along even when it arrives in a later chunk ("claim " + "[9]." -> "claim."). *brackets_only*
    is for an answer that writes "[N]" markers alone (the extractive answerer): the model variants
    ("(1)", "【1】") are then never read, so a quoted "Dynamo is (3,2,2)." stays text.
    """

    valid: set[int]
    brackets_only: bool = False
    cited: list[int] = field(default_factory=list)
    _raw: str = ""
    _bracket_style: bool = False
    _last_chars: str = ""
    _pending: str = ""
    _held: str = ""
    _sentence: set[int] = field(default_factory=set)
    _last_plain: str = ""
    _after_removed: bool = False

    def feed(self, chunk: str) -> tuple[str, list[int]]:
        self._raw += chunk
        self._pending += self._take_raw(final=False)
        return self._drain(final=False)

    def close(self) -> tuple[str, list[int]]:
        self._pending += self._take_raw(final=True)
        return self._drain(final=True)

    def _take_raw(self, *, final: bool) -> str:
        """The raw text that can be normalised now (variant markers rewritten as "[N]"); a tail that
        may still become a variant marker, or a "(N)" whose next character decides, waits."""
        text = self._raw
        cut = len(text)
        if not final:
            for opener, closer in _OPENERS:
                start = text.rfind(opener)
                if start >= 0 and text.find(closer, start) < 0 and len(text) - start < _MAX_MARKER_CHARS:
                    cut = min(cut, start)
            tail = re.search(r"\(\d[\d,\s]*\)[ \t]*$", text)
            if tail:
                cut = min(cut, tail.start())
        ready, self._raw = text[:cut], text[cut:]
        return self._normalise(ready)

    def _normalise(self, text: str) -> str:
        if self.brackets_only:
            return text

        def variant(match: re.Match[str]) -> str:
            inner = next(group for group in match.groups() if group is not None)
            return "[" + re.sub(r"(?i)sources?|passages?", "", inner) + "]"

        text = _VARIANT.sub(variant, text)
        if _BRACKET_STYLE.search(text):
            self._bracket_style = True
        if self._bracket_style:
            return text

        def paren(match: re.Match[str]) -> str:
            numbers = marker_numbers(match["numbers"])
            if numbers and all(n in self.valid for n in numbers):
                return f"{match['space']}[{match['numbers']}]"
            return match.group(0)

        # The two characters before *text* (already passed on) decide whether "(1)" follows a word.
        before, self._last_chars = self._last_chars, (self._last_chars + text)[-2:]
        return _PAREN.sub(paren, before + text)[len(before) :]

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

    def _unshown_ends_with_space(self, out: list[str]) -> bool:
        unshown = self._held + "".join(out)
        return unshown.endswith(" ")

    def _strip_unshown_space(self, out: list[str]) -> None:
        for i in reversed(range(len(out))):
            out[i] = out[i].rstrip(" ")
            if out[i]:
                return
        self._held = ""

    def _plain(self, text: str, out: list[str]) -> None:
        # A sentence boundary in plain text resets the per-sentence de-duplication.
        if _SENTENCE_END.search(text) or (text[:1].isspace() and _SENTENCE_END.search(self._last_plain.rstrip() + " ")):
            self._sentence = set()
        if self._after_removed and text:
            # The marker before this text went: "claim [9]." -> "claim.", "Raft [9] elects" -> "Raft elects".
            if self._unshown_ends_with_space(out):
                text = text.lstrip(" ")
            if text:
                self._after_removed = False
                if text[0] in ".,;:!?)":
                    self._strip_unshown_space(out)
        if text:
            self._last_plain = text
            out.append(text)

    def _drain(self, *, final: bool) -> tuple[str, list[int]]:
        out: list[str] = []
        new: list[int] = []
        text = self._pending
        position = 0
        while True:
            bracket = text.find("[", position)
            if bracket < 0:
                self._plain(text[position:], out)
                position = len(text)
                break
            self._plain(text[position:bracket], out)
            match = _MARKER.match(text, bracket)
            if match:
                rendered, fresh = self._render(marker_numbers(match.group(1)))
                if rendered:
                    out.append(rendered)
                    self._after_removed = False
                else:
                    self._after_removed = True
                new.extend(fresh)
                position = match.end()
                continue
            close = text.find("]", bracket)
            could_grow = close < 0 and len(text) - bracket < _MAX_MARKER_CHARS
            if could_grow and not final and re.fullmatch(r"\[[\d\s,;\u2013\-and]*", text[bracket:]):
                position = bracket  # hold back: the marker may finish in the next chunk
                break
            self._plain(text[bracket], out)
            position = bracket + 1
        self._pending = text[position:]
        if final and self._pending:
            self._plain(self._pending, out)
            self._pending = ""
        shown = self._held + "".join(out)
        if final:
            self._held = ""
            return shown, new
        visible = shown.rstrip(" ")
        self._held = shown[len(visible) :]
        return visible, new


_PAPER_MARKER = re.compile(r"\[(\s*\d+(?:\s*(?:[-\u2013,;]|and)\s*\d+)*\s*)\]")


# "(3,2,2)", "(1)": numbers in parentheses, which the marker parser may read as a model's "(1)" citations.
_PAPER_PARENTHESES = re.compile(r"\((?=\d{1,3}(?:\s*,\s*\d{1,3})*\))")


def neutralise_paper_markers(text: str, *, parentheses: bool = False) -> str:
    """Rewrite a paper's own bibliography markers ("[31]", "[2, 5]") as "[ref 31]", "[ref 2, 5]";
    with *parentheses*, also put an invisible word joiner after the "(" of numbers in parentheses.

    Passages quote papers that cite their own references with the same bracket syntax as our
    citations; left alone, "[6]" in a quoted sentence would be read as our reference [6] and
    linked to an unrelated passage. Applied to every passage text shown to a model or quoted. A
    model may also copy "Dynamo is (3,2,2)." into its answer, where the marker parser would read
    the model variant "(3, 2)" of [3][2]: passages shown to a model neutralise parentheses too (the
    extractive answer's stream reads brackets only, `CitationStream.brackets_only`).
    """
    text = _PAPER_MARKER.sub(lambda m: f"[ref {m.group(1).strip()}]", text)
    return _PAPER_PARENTHESES.sub("(\u2060", text) if parentheses else text


_OUR_MARKER = re.compile(r"\[(\d+)\]")


def renumber_by_first_citation(text: str, numbers: Iterable[int]) -> tuple[str, dict[int, int]]:
    """Renumber the normalised markers "[N]" of a finished *text* so references read [1], [2], ...
    in order of first citation; uncited *numbers* follow in their given order.

    Returns the new text and the mapping old number -> new number (covering every one of
    *numbers*). Markers for numbers outside *numbers* are left as they are.
    """
    known = list(numbers)
    order = list(dict.fromkeys(int(m) for m in _OUR_MARKER.findall(text) if int(m) in known))
    order += [n for n in known if n not in order]
    mapping = {old: new for new, old in enumerate(order, start=1)}
    renumbered = _OUR_MARKER.sub(lambda m: f"[{mapping.get(int(m.group(1)), int(m.group(1)))}]", text)
    return renumbered, mapping


def parse_citations(text: str, valid: set[int]) -> tuple[str, list[int]]:
    """Parse a whole answer at once: `(normalised text, cited numbers in first-cited order)`."""
    stream = CitationStream(valid=valid)
    head, _ = stream.feed(text)
    tail, _ = stream.close()
    return head + tail, stream.cited


# Marker-like text left in an answer after parsing: something meant as a citation, not understood.
_LEFTOVER_MARKER = re.compile(
    r"\u3010[^\u3011]*\u3011|\u2020|\[\^|\[\s*(?:source|passage|ref(?!\s+\d)|doc)[^\]]*\]|\[\s*[a-z]*\s*\d+[^\]\u2060]*\]",
    re.IGNORECASE,
)


def citations_unreadable(text: str, cited: Iterable[int]) -> bool:
    """Whether an answer's citations could not be read: nothing was cited although the answer
    holds marker-like text (an unknown variant, a number in brackets not in the reference list),
    or nothing was cited at all in an answer of two or more sentences (a model that ignores the
    contract). Answers that only say the papers do not state something are not counted."""
    if list(cited):
        return False
    if _LEFTOVER_MARKER.search(text):
        return True
    sentences = [s for s in re.split(r"(?<=[.!?\u3002])\s+", text.strip()) if s.strip()]
    claims = [s for s in sentences if not NOT_STATED_PHRASE.search(s)]
    return len(claims) >= 2


NOT_STATED_PHRASE = re.compile(
    r"\b(?:do(?:es)?(?: not|n't) (?:state|say|cover|mention|discuss|specify|report|give|provide|describe)"
    r"|(?:is|are) not (?:stated|covered|mentioned|specified|reported|discussed|given)"
    r"|not (?:stated|covered) (?:in|by)|no (?:passage|paper) (?:states|says|mentions|covers))\b",
    re.IGNORECASE,
)
