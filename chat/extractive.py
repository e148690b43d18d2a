"""The extractive answerer: an answer composed of text quoted from the retrieved passages.

Used when no chat model is configured. Every quote is copied from a passage (whitespace folded)
and cited with that passage's number, so the citation contract holds by construction.

Evidence, not echoes. Candidates are the passages' prose sentences, their table rows and short
lines (quoted as a line of the page), CJK sentences (split on their own full stop, exclamation
and question marks), and every two adjacent sentences as a window, so a topic sentence is quoted
with the next sentence that completes it ("Chunk size is one of the key design parameters. We
have chosen 64 MB, ..."). Each candidate is scored (`score_candidates`) by

- lexical match: the share of the question's term weight (IDF over the candidates) it contains;
- dense match: cosine similarity of its embedding to the question's;
- answer-type match: a quantity question wants a number (units normalised, ranges read as one
  quantity, see `quantities`) near the asked term, an entity question a name, ...;
- novelty: a candidate whose content is mostly the question's own words restates it and is
  penalised.

Only papers whose best evidence is close to the overall best are quoted (`RELATIVE_BAR`), unless
the question names papers or compares them, when each needed paper is quoted. When no candidate
states what was asked (a quantity question with no number near the asked term; a question naming a
thing no candidate names) the answer says so plainly and shows the closest quotes as related.

Everything here is pure; `chat.services` supplies the embeddings.
"""

from __future__ import annotations

import itertools
import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import lru_cache

import numpy as np
import Stemmer

from chat.citations import neutralise_paper_markers
from chat.question import (
    AnswerType,
    QuestionAnalysis,
    asked_thing,
    classify_answer_type,
    defined_term,
    figure_label,
    how_dimensions,
    key_terms,
    measured_thing,
)
from indexing.chunking import dehyphenate, is_heading, is_known_word, latin_words, split_sentences
from indexing.lexical import american_spelling, tokenize
from indexing.retrieval import Reference, caption_pattern

MIN_SENTENCE_CHARS = 30
MIN_LINE_CHARS = 12
MIN_ROW_CHARS = 4
MAX_LINE_CHARS = 160
MIN_CJK_CHARS = 6
MAX_SENTENCE_CHARS = 500
# A quotable sentence has at least this share of letters among its characters that are not spaces.
MIN_LETTER_SHARE = 0.62
# A paper is quoted when its best candidate scores at least this share of the overall best.
RELATIVE_BAR = 0.85
# A quoted paper may give more quotes (up to MAX_QUOTES_FIRST for the best paper, MAX_QUOTES_OTHER
# for the others) that score this share of its first: the fact is often one sentence away from the
# sentence that best matches the question (0.85 -> 0.75 measured: needed papers at evidence pages 0.72 -> 0.76,
# gold fact quoted 0.65 -> 0.66, citation precision 0.99 either way).
SECOND_QUOTE_BAR = 0.75
MAX_QUOTES_FIRST = 3
MAX_QUOTES_OTHER = 2
# At most this many sentences without a known vector are embedded per question: the rest are ranked
# out by the cheap scores first (embedding was 3 s of a 3.2 s answer when every candidate was embedded).
MAX_EMBEDDED = 30
# Score weights; dense and lexical are both in [0, 1] here. Chosen on the GFS/Raft/Chubby questions
# of benchmarks/questions.json (non-held-out items) so that the sentence holding the fact beats the
# one restating the question.
W_DENSE, W_LEXICAL, W_TYPE, W_NOVELTY = 0.45, 0.35, 0.25, 0.1
ECHO_PENALTY = 0.15
# A chosen sentence with less than this share of terms the question lacks mostly restates it: it is
# quoted with the sentence after it, which says the rest (`_with_context`).
ECHO_NOVELTY = 0.6
# For a follow-up: more for a sentence on a page the previous answer cited (the next fact is often
# beside the last), less for a sentence it quoted already (the reader has it).
BESIDE_BONUS = 0.1
SAID_PENALTY = 0.1
# A sentence about the paper's own sections ("The previous sections described how Raft elects
# leaders.") names the topic and states nothing about it.
SIGNPOST_PENALTY = 0.15
# For a table row whose label the question names ("How many papers did the 'Not English' filter
# remove?" names the row "Not English 15.2M"): the row is the figure asked for, over the prose
# that describes the table.
ROW_NAMED_BONUS = 0.3
# Added to the answer-type match (weighted by W_TYPE) of the sentence that first names the asked
# thing in its passage (`first_mentions`): in full for the question's rarest term among the
# candidates, half for a term every candidate holds (in between by the term's IDF).
INTRO_BONUS = 0.4
WINDOW_PENALTY = 0.03
MIN_SCORE = 0.2
# The answer-type match of a figure in the asked unit that stands away from the asked words
# (`number_attached`), against 1.0 for one beside them.
UNATTACHED_FIT = 0.7

_CJK_STOPS = "\u3002\uff01\uff1f"  # the ideographic full stop, fullwidth exclamation and question marks
# A sentence ends at a stop before a capital, a bracket or a footnote number glued to a capital
# ("... communicate. 2We stress ..."), or at a CJK stop.
# Abbreviations whose stop ends no sentence ("(e.g. AAN)", "Lamport et al. [14]").
_NO_STOP_AFTER = ("e.g.", "i.e.", " al.", " cf.", " vs.", "Fig.", " Eq.", " No.")
_ABBREVIATIONS = "".join(rf"(?<!{re.escape(abbreviation)})" for abbreviation in _NO_STOP_AFTER)
# A bullet ("• Vocab: ...") opens a new sentence wherever the text layer ran it on.
_BULLETS = "\u2022\u25e6\u25aa\u2023\u2043"
# The symbols that mark a table's or page's note ("*LATEX preserves ...", "\u2020Saier and F\u00e4rber ...").
_NOTE_SYMBOLS = "\u2020\u2021\u00a7\u00b6*"
# A sentence ends at a stop, or at a footnote mark right after one ("... or Wiktionary.6 The extraction ...").
_SPLIT = re.compile(
    rf"(?<=[.!?]){_ABBREVIATIONS}\s+(?=[A-Z(\[]|\d+[A-Z])|(?<=[a-z][.!?]\d)\s+(?=[A-Z][a-z])|"
    rf"(?<=[a-z][.!?]\d\d)\s+(?=[A-Z][a-z])|(?<=[{_CJK_STOPS}])|\s+(?=[{_BULLETS}]\s)|"
    # A figure's axis labels or a table's cells that the text layer ran on after a sentence
    # ("... 2,000 total requests in process. 90000 80000 70000 ...", "... 9 servers. # of clients").
    rf"(?<=[a-z][.!?])\s+(?=#\s|\d[\d.,]*\s+\d)|"
    # A table's note by its symbol after a sentence ("... LATEX sources. *LATEX preserves ...").
    rf"(?<=[.!?])\s+(?=[{_NOTE_SYMBOLS}][A-Z])"
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_HEADER = "Extractive answer (sentences quoted from the papers; no chat model is configured):"


class Status(StrEnum):
    """How far an answer answers: every claim supported, some, none (the papers do not state it),
    or nothing to search."""

    ANSWERED = "answered"
    PARTLY_ANSWERED = "partly_answered"
    NOT_STATED = "not_stated"
    NO_PAPERS = "no_papers"


def _with_column_names(row: str, header: str) -> str:
    """*row* with each numeric cell followed by its column's name from *header*, when the header has
    one word per column (a label column, then one per cell); else *row* as it is."""
    cells = re.findall(rf"(?<=\s){_CELL}(?=\s|$)", row)
    names = header.split()
    if not cells or len(names) != len(cells) + 1:
        return row
    label = row[: row.index(cells[0])].strip()
    return " ".join([label, *(f"{cell} {name}" for cell, name in zip(cells, names[1:], strict=True))])


@dataclass(frozen=True)
class Sentence:
    """A quotable unit of a passage: a sentence, a line (table row, short line) or a window of two
    adjacent sentences (`parts` = 2). `position` orders sentences within their passage block."""

    n: int
    paper_id: int
    title: str
    text: str
    page: int = 0
    block: int = 0
    position: int = 0
    kind: str = "sentence"  # sentence | line | window
    parts: int = 1
    context: str = ""  # matched but not quoted: a table row's header line
    caption: str = ""  # matched but not quoted: a table row's caption ("Table 6: Accuracy of ...")

    @property
    def matchable(self) -> str:
        """The text matched against a question: a table row with its header, each cell followed by
        its column's name when the header has one per cell ("Dedupe 41" under "System Minutes" ->
        "Dedupe 41 Minutes System Minutes"), so that a cell reads in its column's unit, and with
        its table's caption."""
        return f"{self._row} {self.caption}" if self.caption else self._row

    @property
    def _row(self) -> str:
        """The text with, for a table row, its cells' column names and its header line."""
        return f"{_with_column_names(self.text, self.context)} {self.context}" if self.context else self.text

    @property
    def readings(self) -> tuple[str, ...]:
        """The texts `states_fact` reads: the `matchable` text without the caption, and for a row
        of a captioned table the row, its header and its caption one to a line, which says what
        the cells measure ("Paper clustering 0.93 0.89" is an accuracy by "Table 6: Accuracy of
        paper clustering ..."); the caption's own numbers ("Table 6") are no cells."""
        if not self.caption:
            return (self._row,)
        return (self._row, "\n".join(filter(None, (self.text, self.context, self.caption))))


@dataclass(frozen=True)
class Scored:
    candidate: Sentence
    score: float
    lexical: float
    dense: float
    type_match: float
    novelty: float
    states: bool  # holds the kind of fact asked for (see `states_fact`)


@dataclass(frozen=True)
class AnswerSentence:
    """One sentence of an answer, as saved: its text, the reference numbers it cites and whether
    the cited passages support it."""

    text: str
    citations: tuple[int, ...] = ()
    supported: bool = True
    not_stated: bool = False  # the sentence says the papers do not state something

    def as_json(self) -> dict[str, object]:
        return {
            "text": self.text,
            "citations": list(self.citations),
            "supported": self.supported,
            "not_stated": self.not_stated,
        }


@dataclass(frozen=True)
class ExtractiveAnswer:
    text: str
    status: Status
    sentences: list[AnswerSentence] = field(default_factory=list)


# --- candidates ---------------------------------------------------------------------------------

# Bibliography entries: venue, pages, volume or publisher words, or "Surname, I." openings.
_BIBLIOGRAPHY = re.compile(
    # "et al.," in a reference entry, not in a citation inside prose ("(Wu et al., 2016)").
    # "arXiv:1234.5678", "arXiv preprint": a reference; "derived from arXiv" is prose.
    r"\b(?:In Proc(?:eedings|\.)|Proceedings of|pp\.|vol\.|arXiv(?::|\s+preprint|\s+abs/)|doi:|ACM Trans|IEEE Trans"
    r"|Press"
    r"|et al\.,(?!\s*(?:19|20)\d\d[a-z]?\s*[);]))"
    r"|^(?:\[ref \d+\]\s*)?[A-Z][a-z]+,\s+[A-Z]\.",
)
# A paper's own reference marker in a quote: a word joiner after "[" keeps it verbatim on screen
# while neither our parser nor the browser reads it as a citation.
_QUOTED_MARKER = re.compile(r"\[ref ([^\]]+)\]")
# A parenthetical author-year citation: "(Shen et al., 2021)", "(Neumann et al., 2019; Lo, 2020)".
_AUTHOR_YEAR = re.compile(r"\((?=[^()]*[A-Z][a-z])[^()]*?,\s*(?:19|20)\d\d[a-z]?(?:;[^()]*)?\)")
_CITATION_LINE = re.compile(r"\b(?:19|20)\d\d[a-z]?\b|\bIn Proc|\bProceedings\b|\bpp\.|\bvol\.|\bet al\.")
# Two or more names in a row, each followed by a comma: an author list.
_NAME_LIST = re.compile(r"(?:[A-Z][\w'\u2019.-]*(?:\s+[A-Z][\w'\u2019.-]*){0,2},\s*(?:and\s+)?){2,}")
# A figure or table caption label inside a "sentence": figure text glued to a caption or to prose.
_CAPTION = re.compile(r"\b(?:Figure|Fig\.|Table)\s+\d+:")
# Front and back matter that is never evidence: copyright and permission notices ("Copyright 2003
# ACM ...", "To copy otherwise, to republish ...").
_BOILERPLATE = re.compile(
    r"\bcopyright\b|\ball rights reserved\b|\bpermission to make (?:digital|hard)|\bto copy otherwise\b|"
    r"\bto republish\b|\bISBN\b",
    re.IGNORECASE,
)
# Acknowledgements and funding ("We thank ...", "This work was supported by ..."): evidence only for
# a question about them (`asks_about_funding`), filler for any other.
_ACKNOWLEDGEMENT = re.compile(
    r"^(?:finally,? |also,? )?(?:we|the authors?) (?:would (?:also )?like to |also )?"
    r"(?:thank|acknowledge|are grateful)|\b(?:research|work|project|study|trial) (?:was|is) (?:partially |partly |"
    r"in part )?(?:supported|funded|sponsored|financed)(?: in part| partly)? by\b"
    # "The user study would not have been possible without the support of ...", "Chris Wilhelm
    # provided feedback on papermage's design ...", "We are grateful to ...", "Thanks to ..."
    r"|\bwould not have been possible without\b|\b(?:provided|gave|offered) (?:\w+ )?(?:feedback|comments)\b"
    r"|\b(?:are|is|am) (?:very |also |deeply )?(?:grateful|indebted)\b|^(?:many )?thanks (?:also )?to\b",
    re.IGNORECASE,
)
_ASKS_FUNDING = re.compile(
    r"\b(?:fund(?:s|ed|ing|ers?)?|sponsor\w*|grants?|financ\w*|acknowledg\w*|thank\w*)\b"
    r"|\bwho\s+supported\b|\bsupported\s+by\b",
    re.IGNORECASE,
)


def asks_about_funding(question: str) -> bool:
    """Whether *question* asks who funded, sponsored or is thanked for the work ("Who funded the
    sleep study?", "Which grant supported ...?"): then acknowledgement sentences are evidence."""
    return bool(_ASKS_FUNDING.search(question))


_SIGNPOST = re.compile(
    r"^(?:the |in the |this |in this )?(?:previous|next|following|preceding|remaining|this) (?:sections?|chapters?)\b|"
    r"^(?:see )?(?:sections?|§)\s*\d|\b(?:sections?|chapters?|§)\s*[\d.]*\s*(?:briefly |then |now )?"
    r"(?:describe|present|discuss|explain|complete|introduce|cover|summari[sz]e|show)[sd]?\b|"
    # "Figure 2 summarizes the algorithm.", not "... the mean Raft score was 25.7; Figure 13 shows
    # their individual scores.", whose figure closes a sentence that states a result of its own.
    r"^(?:as\s+)?(?:figures?|fig\.|tables?)\s*\d+\s+(?:sum-?mari[sz]es|lists|shows|gives|presents|illustrates|depicts)\b|"
    # "In this paper, we describe the construction of S2ORC (§2)."
    r"\bwe (?:describe|present|discuss|detail|outline)\b.*\((?:§|sections?)\s*\d[\d.]*\)\W*$|"
    # "Details for these steps are provided below.", "We describe each step below.": a pointer
    # to later text, which it ends on.
    r"\b(?:provided|given|described|detailed|discussed|explained|presented|describe|discuss|detail|explain|"
    r"present|outline)\b[^.;:]*\b(?:below|later(?: in (?:this|the) paper)?|in the (?:following|next) "
    r"(?:sections?|paragraphs?|subsections?)|in what follows)\W*$|^see below\b|"
    # "The master executes the following steps at startup.": it announces a list, which it ends before.
    # (unless it counts them: "... operates in the following two phases" answers "How many phases?")
    r"\b(?:the|these) following (?!(?:two|three|four|five|six|seven|eight|nine|ten|\d+)\b)"
    r"(?:\w+ )?(?:steps|phases|stages|rules|ways|reasons|properties|"
    r"guarantees|requirements|components|operations|cases|tasks)\b[^.;:]{0,40}[.:]?\s*$",
    re.IGNORECASE,
)
# A numeric table cell: "0.850", "-3.2%", "20k", "52.2M", "16.4B", "(64.3%)", "6.8†".
_CELL = r"[-+±]?\(?\d[\d.,]*[kKMB]?%?\)?[†‡*]?"
# A table row: a label, then at least two numeric cells ("Marlin 0.850 0.760 0.802", "Papers w/
# DOIs 52.2M (64.3%)").
_TABLE_ROW = re.compile(rf"^(?=.*[^\W\d_])[^\n]{{1,80}}?(?:\s+{_CELL}){{2,}}\s*$")
# A row of numbers only, three cells or more, whose first column is a number too ("5 240 7" under
# "Cluster size Median latency (ms) Failed elections"): a row only in a run of two such lines.
_NUMERIC_ROW = re.compile(rf"^{_CELL}(?:\s+{_CELL}){{2,}}\s*$")
# A row of a two-column table: a label without commas, then one numeric cell, maybe with its unit
# ("Dedupe 41", "Average job completion time 634 secs").
_PAIR_ROW = re.compile(rf"^(?=.*[^\W\d_])[^,.;:!?]{{1,60}}?\s{_CELL}(?:\s[A-Za-z]{{1,5}})?\s*$")


def table_rows(lines: Sequence[str]) -> set[int]:
    """The indexes of *lines* (whitespace folded) that are table rows: a label and two or more
    numeric cells (`_TABLE_ROW`), or, in a run of two or more such lines, a label and one cell (a
    two-column table: "Marlin 14", "Dedupe 41"; one line alone, "Figure 2 shows 3", is none) or
    three numeric cells or more ("5 240 7")."""
    rows = {k for k, line in enumerate(lines) if _TABLE_ROW.match(line)}
    for pattern in (_PAIR_ROW, _NUMERIC_ROW):
        runs = [bool(pattern.match(line)) for line in lines]
        for k, row in enumerate(runs):
            if row and ((k > 0 and runs[k - 1]) or (k + 1 < len(runs) and runs[k + 1])):
                rows.add(k)
    return rows


# A reference list runs over many lines; a passage of fewer is prose or a short page ("... in 2010 ...").
MIN_BIBLIOGRAPHY_LINES = 4


def looks_like_bibliography(text: str) -> bool:
    """A passage from a reference list: at least MIN_BIBLIOGRAPHY_LINES lines, at least 30% of them
    carrying a year or venue words, or 60% carrying those or a list of names (an entry of many
    authors). Its "sentences" are titles of other works, never evidence for a claim."""
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < MIN_BIBLIOGRAPHY_LINES:
        return False
    # "(Shen et al., 2021)" in running text cites from prose; a reference list prints the year bare.
    citing = sum(bool(_CITATION_LINE.search(_AUTHOR_YEAR.sub("", line))) for line in lines)
    if citing >= 0.3 * len(lines):
        return True
    # An entry with many authors: most lines are lists of names ("Fangzhou Hu, Regan Huff, Daniel King,").
    names = sum(bool(_NAME_LIST.search(line)) for line in lines)
    return citing >= 1 and citing + names >= 0.6 * len(lines)


_TITLE_WORDS = re.compile(r"^[A-Z][\w-]*(?:\s+(?:[A-Z][\w-]*|of|and|for|the|in|on|to|with|a|an)){0,5}$")


def _is_unnumbered_heading(previous: str, line: str, following: str) -> bool:
    """A paragraph heading with no number on a line of its own ("Worker Failure", "Master Data
    Structures"): two to six title-case words with no stop, between a line that ends a sentence and
    a line of prose (not a table's header above its rows)."""
    previous, line, following = previous.strip(), line.strip(), following.strip()
    if not (previous and previous[-1] in ".!?:" and _TITLE_WORDS.match(line) and len(line.split()) >= 2):
        return False
    prose = sum(ch.isalpha() or ch.isspace() for ch in following) >= 0.9 * len(following)
    return following[:1].isupper() and len(following.split()) >= 5 and prose


# A run-in heading printed on its paragraph's own line: a short phrase with no stop, then "We" or
# "Our" capitalised mid-sentence ("Extracting structured data from PDFs We use SCIENCEPARSE ...").
_RUN_IN_HEADING = re.compile(r"^[A-Z][\w'\u2019-]*(?:\s+[\w'\u2019()-]+){0,7}?\s+(?=(?:We|Our)\s+[a-z])")


def without_run_in_heading(sentence: str) -> str:
    """*sentence* without a run-in paragraph heading glued to its start (`_RUN_IN_HEADING`):
    "Extracting structured data from PDFs We use GROBID ..." -> "We use GROBID ..."."""
    return _RUN_IN_HEADING.sub("", sentence, count=1)


# A line of display math as a PDF's text layer gives it: symbols, single letters, numbers and
# short function names ("2 \u00d7 J \u00d7 C", "S = (1)", "|N \u2229 N |", "1 2", "min (|N |, |N |)"), no word
# of four letters or more.
_MATH_SYMBOL = re.compile("[=\u00d7\u2229\u222a\u2211\u220f\u2264\u2265\u221a\u2208\u2200\u2203\u00b1\u00f7\u00b7|^]")
_LONG_WORD = re.compile(r"[^\W\d_]{4,}")
# A sub- or superscript that the text layer put on a line of its own ("S" with subscript "title").
_SCRIPT_LINE = re.compile(r"^[a-z]{1,6}$")


def _math_runs(lines: Sequence[str]) -> set[int]:
    """Indexes of *lines* that are display math: runs of math-like lines (`_MATH_SYMBOL`, no
    `_LONG_WORD`, at most 40 characters) holding at least one symbol, with the script lines
    (`_SCRIPT_LINE`) inside or at the edge of such a run."""

    def math_like(line: str) -> bool:
        line = line.strip()
        return bool(line) and len(line) <= 40 and not _LONG_WORD.search(line)

    found: set[int] = set()
    k = 0
    while k < len(lines):
        end = k
        while end < len(lines) and (math_like(lines[end]) or (end > k and _SCRIPT_LINE.match(lines[end].strip()))):
            end += 1
        if end > k and any(_MATH_SYMBOL.search(line) for line in lines[k:end]):
            found.update(range(k, end))
        k = max(end, k + 1)
    return found


def _blocks(text: str, seen_words: Collection[str] = (), marks: Collection[str] = ()) -> list[tuple[str, list[str]]]:
    """*text* cut at section-heading lines (`is_heading`, dropped) and at display math (dropped),
    so neither is ever glued into a quote: `(folded block text, its raw lines)`, dehyphenated,
    without the footnote *marks* (`without_footnote_marks`). A script line inside a hyphenated
    word ("be-", "title", "tween") is dropped."""
    blocks: list[list[str]] = [[]]
    lines, footnotes = _without_footnotes(text.split("\n"))
    math = _math_runs(lines)
    for k, line in enumerate(lines):
        previous = lines[k - 1] if k else ""
        following = lines[k + 1] if k + 1 < len(lines) else ""
        if k in math or is_heading(line) or _is_unnumbered_heading(previous, line, following):
            if blocks[-1]:
                blocks.append([])
        elif not (_SCRIPT_LINE.match(line.strip()) and previous.rstrip().endswith("-") and following[:1].islower()):
            blocks[-1].append(line)
    blocks += footnotes
    return [
        (without_footnote_marks(dehyphenate("\n".join(lines), seen_words), marks), lines)
        for lines in blocks
        if "".join(lines).strip()
    ]


def footnote_numbers(lines: Sequence[str]) -> set[str]:
    """The numbers of the footnotes among *lines* (a page's text): "7" for "7pronounced “stork”"."""
    return {match.group() for line in lines if (match := _FOOTNOTE_LINE.match(line.strip()))}


# A footnote's mark glued to the word it notes: after a word ("Semantic Scholar8", "filter14"),
# after a word's stop or comma ("S2ORC,7", "PDF.11", "2019).7"), or on a version ("GROBID v0.5.510").
_GLUED_MARK = re.compile(
    r"(?P<word>\b[A-Za-z][a-z]{2,})(?P<mark>\d{1,2})\b"
    r"|(?<=[A-Za-z)\]][,.;:])(?P<after_stop>\d{1,2})(?=\s|$)"
    r"|(?P<version>\bv\d+(?:\.\d+)+)\b"
)


def without_footnote_marks(text: str, marks: Collection[str]) -> str:
    """*text* without the footnote marks glued to its words (`_GLUED_MARK`), where *marks* (the
    page's footnote numbers, `footnote_numbers`) holds the number: "we introduce S2ORC,7 the
    Semantic Scholar8 Open Research Corpus" -> "we introduce S2ORC, the Semantic Scholar Open
    Research Corpus"; "GROBID v0.5.510" -> "GROBID v0.5.5" on a page with footnote 10. A word
    keeps its digits unless it is a known word without them ("PyPDF2", "F1" stay)."""
    if not marks:
        return text

    def strip(match: re.Match[str]) -> str:
        if match["word"]:
            keep = match["mark"] in marks and is_known_word(match["word"])
            return match["word"] if keep else match.group()
        if match["after_stop"]:
            return "" if match["after_stop"] in marks else match.group()
        version = match["version"]
        mark = next((m for m in sorted(marks, key=len, reverse=True) if version.endswith(m)), None)
        cut = version[: -len(mark)] if mark else ""
        return cut if re.fullmatch(r"v\d+(?:\.\d+)+", cut) else version

    return _GLUED_MARK.sub(strip, text)


# A footnote's number, one or two digits, that is no size or rate's ("1Gbit/s Ethernet", "4KB").
_FOOTNOTE_MARK = r"\d{1,2}(?!(?:G|M|K|T|k)(?:bit|byte|Hz|B|b)s?\b)"
# A footnote's first line: its number glued to its first word ("14We use the cld2 tool ...",
# "13Unpaywall 2019-04-19 data dump"), not a size or a rate ("1Gbit/s Ethernet").
_FOOTNOTE_LINE = re.compile(rf"^{_FOOTNOTE_MARK}(?=[A-Z][a-z]|https?:|(?!(?:st|nd|rd|th)\b)[a-z]{{4,}}\b)")
MAX_FOOTNOTE_LINES = 4


# A footnote line this long or longer fills its column: the footnote may go on to the next line.
MIN_FULL_FOOTNOTE_LINE = 40


def _runs_on(line: str) -> bool:
    """Whether a footnote goes on after *line*: it ends no sentence and fills its column (a short
    line, "7pronounced \u201cstork\u201d", is the whole footnote)."""
    line = line.rstrip()
    return not line.endswith((".", "!", "?")) and len(line) >= MIN_FULL_FOOTNOTE_LINE


def _without_footnotes(lines: Sequence[str]) -> tuple[list[str], list[list[str]]]:
    """*lines* without the footnotes a two-column page's text layer puts among them (often in the
    middle of a sentence: "... associated PDF and / 14We use the cld2 tool ... score. / do not
    provide ..."), and the footnotes, each its own lines, its number dropped when a common opening
    word follows it (`_FOOTNOTE_NUMBER`). A footnote runs from its numbered line to the first line
    that ends a sentence or does not fill its column (`_runs_on`), at most `MAX_FOOTNOTE_LINES` lines."""
    body: list[str] = []
    notes: list[list[str]] = []
    k = 0
    while k < len(lines):
        if not _FOOTNOTE_LINE.match(lines[k].strip()):
            body.append(lines[k])
            k += 1
            continue
        note = [_FOOTNOTE_NUMBER.sub("", lines[k].strip())]
        k += 1
        while k < len(lines) and len(note) < MAX_FOOTNOTE_LINES and _runs_on(note[-1]):
            if _FOOTNOTE_LINE.match(lines[k].strip()) or not lines[k].strip():
                break
            note.append(lines[k])
            k += 1
        notes.append(note)
    return body, notes


def is_cjk(text: str) -> bool:
    return len(_CJK.findall(text)) >= 0.3 * max(1, len(text.replace(" ", "")))


# A footnote glued into a sentence by the column layout: its number, then its first word ("... no
# associated PDF and 13Unpaywall 2019-04-19 data dump 14We use the cld2 tool ..."); not a unit
# ("1Gbit/s", "4KB"). Or a table's note by its symbol ("... 1.5M parsed LATEX sources. *LATEX
# preserves line breaks ...", "†Saier and Färber (2020) is an update ...").
_GLUED_FOOTNOTE = re.compile(rf"(?<=\s){_FOOTNOTE_MARK}[A-Z][a-z]{{2,}}|(?:^|(?<=\s))[{_NOTE_SYMBOLS}][A-Z]")


# A footnote's number before a word that often opens one: "14We use ..." is quoted from "We".
_FOOTNOTE_NUMBER = re.compile(
    r"^\d{1,2}(?=(?:We|Our|The|This|These|That|In|For|See|It|All|Available|Note|Code|Data|Each|Most|Some|"
    r"Only|When|As|Here|Details|Source|Using|Following|A|An)\b|[a-z]{4,}\b)"
)


# A stop, or a stop with a footnote mark after it ("... or Wiktionary.6").
# A stop may stand inside a closing bracket or quote: "(The constant factors ... are small.)".
_SENTENCE_END = re.compile(r"[.!?][)\]\"\u201d\u2019']?$|(?<=[a-z][.!?])\d{1,2}$")


def is_quotable(text: str, *, acknowledgements: bool = False) -> bool:
    """A whole prose sentence: starts with a capital (or bracket), ends with a stop, mostly letters
    (not a table row), not a bibliography entry, not a footnote glued to its number ("2We ...") nor
    a sentence with one glued inside (`_GLUED_FOOTNOTE`),
    no figure or table caption label inside (figure text glued to prose), no copyright notice, and
    no acknowledgement unless *acknowledgements*. A CJK sentence needs only its length and its
    closing stop (CJK or Latin)."""
    if is_cjk(text):
        return MIN_CJK_CHARS <= len(text) <= MAX_SENTENCE_CHARS and text[-1] in _CJK_STOPS + ".!?"
    if not MIN_SENTENCE_CHARS <= len(text) <= MAX_SENTENCE_CHARS:
        return False
    if not (text[0].isupper() or text[0] in "([") or not _SENTENCE_END.search(text):
        return False
    letters = sum(ch.isalpha() for ch in text)
    digits = sum(ch.isdigit() for ch in text)
    # Letters against the characters that are not spaces: a short sentence with a figure in it
    # ("Participants' age ranged from 19 to 67 (\u03bc = 35.04).") is prose; a table row is not.
    visible = len(text) - text.count(" ")
    if letters < MIN_LETTER_SHARE * visible or digits > 0.2 * len(text):
        return False
    if not acknowledgements and _ACKNOWLEDGEMENT.search(text):
        return False
    return not (
        _BIBLIOGRAPHY.search(text)
        or re.match(r"^\d+[A-Z]", text)
        or _GLUED_FOOTNOTE.search(text)
        or _CAPTION.search(text)
        or _BOILERPLATE.search(text)
    )


def is_signpost(text: str) -> bool:
    """Whether *text* speaks of the paper's own sections or figures ("This section completes the
    Raft algorithm ...", "Section 4 briefly describes ...", "See §2.5 for details ...", "Figure 2
    summarizes the algorithm ...", "In this paper, we describe the construction of S2ORC (§2).")."""
    return bool(_SIGNPOST.search(text))


# A setting stated as a label and a value with a number: "Maximum crawl depth: 6 links".
_KEY_VALUE = re.compile(r"^[A-Z][^:.!?\d]{2,40}:\s+(?=[^:]*\d)[^:]{1,60}$")


def is_quotable_line(line: str, *, acknowledgements: bool = False, row: bool = False) -> bool:
    """A line worth quoting as it stands though it is no prose sentence: a table row (a label and
    two or more numbers, or *row*: a line `table_rows` found, "Dedupe 41"), a label and a value with
    a number ("Maximum crawl depth: 6 links") or a short complete line (three words or more,
    ending in a stop); no acknowledgement unless *acknowledgements*."""
    line = line.strip()
    shortest = MIN_ROW_CHARS if row else MIN_LINE_CHARS
    if not shortest <= len(line) <= MAX_LINE_CHARS or _BIBLIOGRAPHY.search(line) or _CAPTION.search(line):
        return False
    if _BOILERPLATE.search(line) or (not acknowledgements and _ACKNOWLEDGEMENT.search(line)):
        return False
    if row or _TABLE_ROW.match(line) or _KEY_VALUE.match(line):
        return True
    one_sentence = len(_SPLIT.split(line)) == 1 and not re.match(r"^\d+[A-Z]", line)
    return one_sentence and len(line.split()) >= 3 and line[-1] in ".!?" and (line[0].isupper() or line[0].isdigit())


def _quote(text: str) -> str:
    return _QUOTED_MARKER.sub(lambda m: f"[\u2060{m.group(1)}]", text)


# A section number glued after a sentence's stop by the text layer ("... serving the key. 4.2").
_TRAILING_SECTION = re.compile(r"(?<=[.!?])\s+\d+(?:\.\d+)+$")
# The end of a list item: a stop, or a semicolon with "and"/"or" after it.
_ITEM_END = re.compile(r"\s*(?:[;,]\s*(?:and|or))?\s*[;.]?$")


def _bulleted(split: str) -> bool:
    return split.strip()[:1] in _BULLETS


def _as_sentence(item: str) -> str:
    """A list item (*item*) read as a sentence, to test it for `is_quotable`: capitalised, and
    ending in a stop where it ends in a semicolon ("check digits that ... are created;")."""
    return item[:1].upper() + _ITEM_END.sub("", item[1:]) + "."


# A title shorter than this ("Raft") may open a sentence of prose; a longer one opens the title block.
MIN_TITLE_BLOCK_CHARS = 20
# A stop, then a lower-case word: where the text layer ran another column's line on after a
# sentence ("... number of runs. tecting inline citations ..."), when that word is cut.
_STOP_THEN_LOWER = re.compile(r"(?<=[a-z][.!?])\s+(?=[a-z]{2,}\b)")
_FIRST_WORD = re.compile(r"([a-z]{2,})\b")


_STOP_BEFORE = re.compile(r"[a-z][.!?]\s+$")


def _words_not_after_stops(text: str) -> Iterator[str]:
    """The words of *text*, lower case, but those right after a stop or first in *text* (where a
    cut word shows: a passage may begin with one)."""
    first = len(text) - len(text.lstrip())  # where the first word starts
    for match in re.finditer(r"[A-Za-z]+", text):
        if match.start() > first and _STOP_BEFORE.search(text, max(0, match.start() - 4), match.start()) is None:
            yield match[0].lower()


def _is_cut_word(word: str, counts: Counter[str]) -> bool:
    """Whether *word* is a piece of a word cut at a line or column break: no known word
    (`is_known_word`), and not said elsewhere in its paper's retrieved text than after a stop
    (*counts*: `_words_not_after_stops`); "magelib", a name the paper writes in lower case, is."""
    return not counts[word] and not is_known_word(word)


def _at_cut_words(text: str, counts: Counter[str]) -> list[str]:
    """*text* split before each cut word that follows a stop (`_is_cut_word`): "... or number of
    runs." and "tecting inline citations ..." are two pieces, the second no sentence."""
    pieces, start = [], 0
    for match in _STOP_THEN_LOWER.finditer(text):
        word = _FIRST_WORD.match(text, match.end())
        if word is not None and _is_cut_word(word[1], counts):
            pieces.append(text[start : match.start()])
            start = match.end()
    return [*pieces, text[start:]]


def _opens_with_cut_word(text: str, counts: Counter[str]) -> bool:
    word = _FIRST_WORD.match(text)
    return word is not None and _is_cut_word(word[1], counts)


def candidate_sentences(references: Sequence[Reference], *, acknowledgements: bool = False) -> list[Sentence]:
    """The quotable sentences and lines of each passage (see `is_quotable`, `is_quotable_line`;
    acknowledgements only when *acknowledgements*), whitespace folded, hyphenation joined, headings
    left out, footnote marks dropped where a passage of the same page prints the footnote
    (`without_footnote_marks`); a paper's own bibliography markers stay verbatim but inert.
    Windows are not included (see `candidate_windows`)."""
    sentences: list[Sentence] = []
    # A word a line break hyphenates in one passage ("GRO-\nBID") is often whole in another.
    words_of: dict[int, set[str]] = {}
    counts_of: dict[int, Counter[str]] = {}
    # A page's footnotes are often in another passage of that page than the marks they explain.
    marks_of: dict[tuple[int, int], set[str]] = {}
    for ref in references:
        words_of.setdefault(ref.paper_id, set()).update(latin_words(ref.text))
        counts_of.setdefault(ref.paper_id, Counter()).update(_words_not_after_stops(ref.text))
        marks_of.setdefault((ref.paper_id, ref.page), set()).update(footnote_numbers(ref.text.split("\n")))
    for ref in references:
        if looks_like_bibliography(ref.text):
            continue
        # The paper's title block ("S2ORC: The Semantic Scholar Open Research Corpus Kyle Lo ...")
        # reads as a sentence that defines the title's name; it is the head of the page, not a claim.
        title = " ".join(ref.title.split()).casefold() if len(ref.title) >= MIN_TITLE_BLOCK_CHARS else ""
        text = neutralise_paper_markers(ref.text)
        marks = marks_of[(ref.paper_id, ref.page)]
        for b, (block, lines) in enumerate(_blocks(text, words_of[ref.paper_id], marks)):
            # (position, text): a sentence keeps its place among all the block's sentences, so two
            # quotable sentences with an unquotable one between them are not adjacent (no window).
            splits = [piece for part in _SPLIT.split(block) for piece in _at_cut_words(part, counts_of[ref.paper_id])]
            found: list[tuple[int, str]] = []
            # A table row's header line, a sentence's run-in heading: matched, not quoted.
            headers: dict[str, str] = {}
            for k, raw in enumerate(splits):
                whole = _TRAILING_SECTION.sub("", raw.strip().lstrip(_BULLETS).rstrip(_BULLETS + " ").strip())
                text = without_run_in_heading(whole)
                # "... the harmonic mean between a Jaccard index and a containment metric:" before
                # display math, or "... is reliable (but not necessarily FIFO):" before a bulleted
                # list, is a whole sentence that introduces it; so is one that closes its block ("We use
                # the customary asynchronous, non-Byzantine model, in which:"), whose list is past the
                # passage's end.
                introduces = text.endswith(":") and (
                    k == len(splits) - 1 or (k + 1 < len(splits) and _bulleted(splits[k + 1]))
                )
                quotable = not _opens_with_cut_word(text, counts_of[ref.paper_id]) and (
                    is_quotable(text, acknowledgements=acknowledgements)
                    or (introduces and is_quotable(text[:-1] + ".", acknowledgements=acknowledgements))
                )
                if not quotable and _bulleted(raw) and text:
                    # A list item goes on its list's opening sentence ("Handles include: \u2022 check
                    # digits that prevent clients from guessing handles, ...;"): quotable as a sentence.
                    quotable = is_quotable(_as_sentence(text), acknowledgements=acknowledgements)
                if text and quotable:
                    found.append((k, text))
                    if text != whole:
                        headers[text] = whole[: -len(text)].strip()
            previous = header = ""
            folded = [without_footnote_marks(" ".join(line.split()), marks) for line in lines]
            rows = table_rows(folded)
            captions = row_captions(folded, rows)
            for k, text in enumerate(folded):
                if k in rows:
                    headers[text] = header
                elif text and not (k - 1 in rows and k + 1 in rows and len(text.split()) <= 2):
                    # A word or two between two rows ends the row label above ("Grobid 42.0 ... / NN"),
                    # under the same header.
                    header = text if len(text) <= MAX_LINE_CHARS else ""
                # A line is quoted whole only where it starts a sentence: never a fragment of prose.
                starts = not previous or previous[-1] in ".!?:" or k in rows or k - 1 in rows
                contained = any(text in s or s in text for _, s in found)
                quotable = is_quotable_line(text, acknowledgements=acknowledgements, row=k in rows)
                if text and starts and not contained and quotable:
                    found.append((len(splits) + len(found), text))
                previous = text or previous
            for position, text in found:
                if title and text.casefold().startswith(title):
                    continue
                kind = "sentence" if is_quotable(text) or text.endswith(":") else "line"
                sentences.append(
                    Sentence(
                        ref.n,
                        ref.paper_id,
                        ref.title,
                        _quote(text),
                        ref.page,
                        b,
                        position,
                        kind,
                        context=headers.get(text, ""),
                        caption=captions.get(text, ""),
                    )
                )
    return sentences


# A table's caption is at most this many lines from its rows (a header or a note between them).
MAX_CAPTION_GAP = 2


def row_captions(lines: Sequence[str], rows: Collection[int]) -> dict[str, str]:
    """Each table row of *lines* (whitespace folded; *rows* their indexes, `table_rows`) mapped to
    its table's caption ("Table 6: Accuracy of paper clustering and bibliography linking for titles
    and authors ..."): the caption that opens within MAX_CAPTION_GAP lines after the row's run of
    rows (the caption under a table), else within MAX_CAPTION_GAP lines before it (above), each
    with the lines it runs on to (`caption_end`); the caption before when both are there and rows
    follow the one after (then every caption heads its table). Rows of no caption are left out."""
    out: dict[str, str] = {}
    ordered = sorted(rows)

    def rows_after(caption: int) -> bool:
        end = caption_end(lines, caption)
        return any(k in rows for k in range(end, end + MAX_CAPTION_GAP + 1))

    runs: list[list[int]] = []
    for k in ordered:
        if runs and k - runs[-1][-1] <= 2:  # a header line between two column blocks of rows
            runs[-1].append(k)
        else:
            runs.append([k])
    for run in runs:
        after = range(run[-1] + 1, min(len(lines), run[-1] + 1 + MAX_CAPTION_GAP))
        before = range(run[0] - 1, max(-1, run[0] - 1 - MAX_CAPTION_GAP - 1), -1)
        below = next((i for i in after if _TABLE_CAPTION.match(lines[i])), None)
        above = next((i for i in before if _TABLE_CAPTION.match(lines[i])), None)
        start = below if below is not None else above
        if below is not None and above is not None and rows_after(below):
            start = above  # captions above their tables: the one below heads the next table
        if start is not None:
            caption, _ = caption_at(lines, start)
            out.update((lines[k], caption) for k in run)
    return out


_TABLE_CAPTION = re.compile(r"^Table\s+\d+[:.]\s")


def caption_end(lines: Sequence[str], start: int) -> int:
    """Where the caption that opens at *lines*[*start*] ends (the index after its last line): it
    runs on while a line ends no sentence and is full (MIN_FULL_CAPTION_LINE characters) or ends
    in a word cut by a hyphen, at most MAX_CAPTION_LINES lines."""
    end = start + 1
    # A caption runs on while its line is full ("Table 1: MapReduce jobs run in August 2004" is not:
    # the next line is the other column's text), and always past a cut word ("Figure 2:
    # Distribution of papers by Microsoft Aca-" + "demic field of study.").
    while (
        end < len(lines)
        and end - start < MAX_CAPTION_LINES
        and not lines[end - 1].endswith(".")
        and (len(lines[end - 1]) >= MIN_FULL_CAPTION_LINE or re.search(r"[a-z]-$", lines[end - 1]) is not None)
    ):
        end += 1
    return end


def caption_at(lines: Sequence[str], start: int) -> tuple[str, int]:
    """The caption that opens at *lines*[*start*], its lines joined as prose is (`dehyphenate`:
    "... Microsoft Aca-" + "demic field of study."), and the index after its last line
    (`caption_end`)."""
    end = caption_end(lines, start)
    return dehyphenate("\n".join(lines[start:end])), end


# A table question quotes its caption and at most this many lines after it (the header and rows).
MAX_TABLE_LINES = 14
# A table printed above its caption gives at most this many lines (its header and rows may be split
# into column blocks, each a run of lines).
MAX_TABLE_LINES_ABOVE = 30
# A caption runs over at most this many lines (until one ends with a stop or is not full).
MAX_CAPTION_LINES = 3
# Characters of a caption line that is full, so that the caption may go on on the next line.
MIN_FULL_CAPTION_LINE = 60


# A row of a table as a caption question quotes it: a label and at least one number, a short unit
# after it allowed ("Average job completion time 634 secs", "Marlin 0.850 0.760 0.802").
# The label has no comma (a line of prose ending "... over time, from 0 in" is none).
# One cell in parentheses is no row: "Following Beltagy et al. (2019)" is prose.
_CAPTION_ROW = re.compile(r"^(?=.*[^\W\d_])[^,]{1,60}?\s[-+±]?\d[\d.,]*[kKMB]?%?(?:\s+[^\W\d_]{1,6})?\s*$")


def _table_rows(lines: Sequence[str]) -> list[str]:
    """The run of table rows *lines* opens with (`_CAPTION_ROW`, or a header line right before
    one), at most MAX_TABLE_LINES, stopping at a caption, heading or line of prose."""
    rows: list[str] = []
    for k, line in enumerate(lines):
        if not line or _CAPTION.search(line) or is_heading(line) or len(rows) >= MAX_TABLE_LINES:
            break
        is_row = bool(_TABLE_ROW.match(line) or _CAPTION_ROW.match(line))
        is_header = not rows and k + 1 < len(lines) and bool(_CAPTION_ROW.match(lines[k + 1] or ""))
        if not (is_row or (is_header and len(line) <= MAX_LINE_CHARS // 2 and not line.endswith("."))):
            break
        rows.append(line)
    return rows


def _is_prose_line(line: str) -> bool:
    """Whether *line* reads as running text: six words or more, nearly all of them lower-case words
    ("other non-paper documents at the time of dataset construction"), not table cells ("yes S2ORC
    (full) physics, math, CS", "AAN (Radev et al., 2009) 25k full text")."""
    words = line.split()
    lower = sum(bool(re.fullmatch(r"[a-z][a-z'-]*[,;]?", word)) for word in words)
    return len(words) >= 6 and lower >= 0.7 * len(words)


def _lines_above(lines: Sequence[str]) -> list[str]:
    """The lines of a table printed right above its caption, read up from the caption (*lines* are
    those before it, in page order): short lines that are neither running text nor sentences nor
    another caption, at most MAX_TABLE_LINES_ABOVE, in page order. The rows of a table whose cells
    the extraction split into column blocks ("S2ORC (PDF-parse) 8.1M full text", then "yes S2ORC
    (full) multi") hold no run of numbers `_table_rows` would read. None unless two lines or more
    hold a figure."""
    rows: list[str] = []
    for line in reversed(lines):
        if (
            not line
            or len(rows) >= MAX_TABLE_LINES_ABOVE
            or len(line) > MAX_LINE_CHARS // 2
            or line.endswith(".")
            or _CAPTION.search(line)
            or _is_prose_line(line)
        ):
            break
        rows.append(line)
    # A table has figures: two lines or more with a number that is not a year in parentheses
    # ("Following Beltagy et al. (2019)" is the other column's prose).
    figures = [row for row in rows if re.search(r"\d", re.sub(r"\((?:19|20)\d\d[a-z]?\)", "", row))]
    return rows[::-1] if len(figures) >= 2 else []


def caption_lines(references: Sequence[Reference], label: str) -> list[Sentence]:
    """What a question about a table or figure (*label*, "Table 3") quotes: the caption in the first
    passage that holds it (`indexing.retrieval.caption_pattern`), and for a table its rows: those
    right after the caption (a header line may open them), else those right before it (a caption
    printed under its table), as `_table_rows` reads them; each a "line" candidate in passage
    order. Empty when no passage holds the caption."""
    pattern = caption_pattern(label)
    for ref in references:
        lines = [" ".join(line.split()) for line in neutralise_paper_markers(ref.text).split("\n")]
        start = next((i for i, line in enumerate(lines) if pattern.match(line)), None)
        if start is None:
            continue
        caption, end = caption_at(lines, start)
        quoted = [caption]
        if label.startswith("Table"):
            after = _table_rows(lines[end:])
            before: list[str] = []
            if not after:
                before = list(reversed(_table_rows(list(reversed(lines[:start])))))
                above = _lines_above(lines[:start])
                before = above if len(above) > len(before) else before
            quoted = [*before, caption] if before else [caption, *after]
        return [
            Sentence(ref.n, ref.paper_id, ref.title, _quote(text), ref.page, 0, position, "line")
            for position, text in enumerate(quoted)
        ]
    return []


# "The distribution of filtered papers is given in Table 2.": a sentence that sends the reader to a
# table or figure for what it does not say itself.
_POINTS_TO = re.compile(
    r"\b(?:is|are|was|were)\s+(?:given|shown|listed|reported|summari[sz]ed|presented|detailed|broken down)\s+"
    r"in\s+(?P<label>(?:Table|Figure|Fig\.)\s*\d+)\b",
    re.IGNORECASE,
)


def with_table_pointed_to(chosen: Sequence[Scored], references: Sequence[Reference]) -> list[Scored]:
    """*chosen* (the evidence, best first) with, when its first quote only points to a table or
    figure ("... is given in Table 2."), that table's caption and rows (`caption_lines`) quoted
    after it, if a retrieved passage holds them; else *chosen* as it is."""
    pointer = _POINTS_TO.search(chosen[0].candidate.text) if chosen else None
    if pointer is None:
        return list(chosen)
    label = figure_label(pointer["label"]) or pointer["label"]
    lines = caption_lines(references, label)
    if not lines:
        return list(chosen)
    first = chosen[0]
    return [first, *(replace(first, candidate=line) for line in lines)]


# "Which of the filters removes the most?": which of several things has the largest (or smallest) figure.
_EXTREME = re.compile(
    r"^\W*(?:and\s+|so\s+)?(?:which|what)\b.*?\b(?P<word>most|largest|highest|biggest|greatest|fewest|least|"
    r"smallest|lowest)\b",
    re.IGNORECASE,
)
_SMALLEST = frozenset({"fewest", "least", "smallest", "lowest"})


def extreme_row(candidates: Sequence[Sentence], analysis: QuestionAnalysis) -> Sentence | None:
    """For a question asking which of several things has the most or the least ("Which of the
    filters removes the most?"), the table row with the largest (smallest) last figure among the
    rows under one header that names a key term of the question ("< 100 chars of text 80.0M" under
    "Filter Number of papers"); None when the question asks no such thing or no table fits. The
    table whose header names most key terms is read, the first in passage order of equals."""
    match = _EXTREME.match(analysis.query)
    if match is None:
        return None
    key = set(key_stems(analysis))
    tables: dict[tuple[int, int, str], list[tuple[float, Sentence]]] = {}
    for candidate in candidates:
        if candidate.kind != "line" or not candidate.context or not key & set(terms(candidate.context)):
            continue
        figures = quantities(candidate.text)
        if figures:
            tables.setdefault((candidate.n, candidate.block, candidate.context), []).append(
                (figures[-1].high, candidate)
            )
    # The table whose header names most of the question's key terms ("Filter Number of papers" over
    # "Filter Number of PDFs" for "Which filter removes the fewest papers?"), the first of equals.
    asked = set(terms(analysis.query))  # "papers" too, which key terms leave out
    fitting = [
        (len(asked & set(terms(header))), -k, rows)
        for k, ((_, _, header), rows) in enumerate(tables.items())
        if len(rows) >= 2
    ]
    if not fitting:
        return None
    rows = max(fitting, key=lambda fit: fit[:2])[2]
    pick = min if match["word"].casefold() in _SMALLEST else max
    return pick(rows, key=lambda row: row[0])[1]


def with_extreme_row(
    chosen: Sequence[Scored], candidates: Sequence[Sentence], analysis: QuestionAnalysis
) -> list[Scored]:
    """*chosen* with the `extreme_row` the question asks for quoted first (its header comes with it
    when the answer is written), where there is one; else *chosen* as it is."""
    row = extreme_row(candidates, analysis)
    if row is None:
        return list(chosen)
    rest = [s for s in chosen if s.candidate.text != row.text]
    return [Scored(row, 1.0, 1.0, 0.0, 1.0, 1.0, True), *rest]


def candidate_windows(sentences: Sequence[Sentence]) -> list[Sentence]:
    """Every two adjacent prose sentences of one passage block, as one candidate."""
    windows = []
    for first, second in itertools.pairwise(sentences):
        adjacent = (first.n, first.block, first.position + 1) == (second.n, second.block, second.position)
        if adjacent and first.kind == second.kind == "sentence":
            text = f"{first.text} {second.text}"
            windows.append(
                Sentence(
                    first.n, first.paper_id, first.title, text, first.page, first.block, first.position, "window", 2
                )
            )
    return windows


# --- numbers and terms --------------------------------------------------------------------------

_UNITS = {
    "ms": "ms", "msec": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "us": "us", "µs": "us", "microsecond": "us", "microseconds": "us",
    "ns": "ns", "nanoseconds": "ns",
    "min": "min", "minute": "min", "minutes": "min", "hour": "h", "hours": "h", "h": "h",
    "day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
    "b": "b", "byte": "b", "bytes": "b", "kb": "kb", "kib": "kb", "mb": "mb", "mib": "mb",
    "gb": "gb", "gib": "gb", "tb": "tb", "tib": "tb", "pb": "pb",
    "kilobyte": "kb", "kilobytes": "kb", "megabyte": "mb", "megabytes": "mb", "gigabyte": "gb",
    "gigabytes": "gb", "terabyte": "tb", "terabytes": "tb", "petabyte": "pb", "petabytes": "pb",
    "kbyte": "kb", "kbytes": "kb", "mbyte": "mb", "mbytes": "mb", "gbyte": "gb", "gbytes": "gb", "tbytes": "tb",
    "%": "%", "percent": "%", "per cent": "%",
    "x": "x", "times": "x",
    "hz": "hz", "khz": "khz", "mhz": "mhz", "ghz": "ghz",
    "w": "w", "watt": "w", "watts": "w", "kw": "kw",
    "°c": "°c", "℃": "°c", "degrees celsius": "°c", "degrees c": "°c", "celsius": "°c",
    "°f": "°f", "degrees fahrenheit": "°f", "fahrenheit": "°f", "kelvin": "k", "degrees": "°",
    "mbps": "mbps", "gbps": "gbps", "mb/s": "mb/s", "gb/s": "gb/s",
    "usd": "$", "dollars": "$", "dollar": "$", "eur": "€", "euros": "€", "euro": "€",
}  # fmt: skip
# A currency sign before the number ("$35", "€1.2") is its unit.
_CURRENCY_SIGNS = {"$": "$", "€": "€", "£": "£"}
# Scientific notation too: "a maximum learning rate of 1e-5" is 0.00001, not 5.
_NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+(?!\d|\.\d))?"
_UNIT = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
_QUANTITY = re.compile(
    rf"(?<![\w.])(?:(?P<between>between)\s+)?(?P<low>{_NUMBER})(?:\s*(?P<unit1>{_UNIT})\b)?"
    rf"(?:\s*(?:-|\u2013|\u2014|to|(?(between)and|(?!)))\s*(?P<high>{_NUMBER}))?(?:(?P<magnitude>[kKM])|\s*(?P<unit>{_UNIT}))?(?![\w])",
    re.IGNORECASE,
)
# Numbers that label, not measure: "Section 3", "§3", "[12]", "Appendix 2", "Theorem 1", "Topic 2",
# "Study 1"; whole words only ("Around 5,000 lines" is no "Round 5").
_NOT_A_QUANTITY = re.compile(
    r"(?<![A-Za-z])(?:Section|Sec\.|Figure|Fig\.|Table|§|\[\u2060?|ref|Eq\.|Equation|"
    r"Appendix|Chapter|Lemma|Theorem|Topic|Task|Study|Condition|Phase|Step|Round|Session|Experiment)\s*$",
    re.I,
)
# A section or version number of three levels or more ("6.1.2 Procedure", "v3.0.09"): no quantity.
_DOTTED = re.compile(r"(?<![\d.])\d+(?:\.\d+){2,}(?![\d])")
_WORD_NUMBERS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "twenty": 20, "hundred": 100, "thousand": 1000, "half": 0.5, "third": 1 / 3,
    "quarter": 0.25, "ninths": 1 / 9, "dozen": 12, "million": 1e6, "billion": 1e9,
}  # fmt: skip
_WORD_NUMBER = re.compile(r"\b(?:" + "|".join(_WORD_NUMBERS) + r")\b", re.IGNORECASE)
# A count in words: a whole number word before the plural noun it counts ("ten participants",
# "three replicas"; group 1), not a fraction ("a third of the requests").
_WHOLE_NUMBER_WORDS = "two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|dozen"
_WORD_COUNT = re.compile(rf"\b(?:{_WHOLE_NUMBER_WORDS})\s+((?:[a-z]+-)?[a-z]{{2,}}s)\b", re.IGNORECASE)
# A count by a variable ("more than N nodes", "the top N nodes", "2f + 1 replicas", "N-1 clockwise
# successor nodes"): a letter, or a letter with a coefficient or an offset, before the plural noun
# it counts (group 1), a few modifiers between. Not "A" or "I", which are words.
_SYMBOLIC_COUNT = re.compile(
    r"(?<![\w(=/.-])(?:\d+[a-z]|[b-hj-zB-HJ-Z])(?:\s*[+\u2212-]\s*\d+)?(?:\s+(?!of\b|the\b)[a-z][\w-]*){0,2}?\s+([a-z]{2,}s)\b"
    r"(?<!\bis)(?<!\bas)(?<!\bhas)(?<!\bwas)"
)
# A count as a share of a whole ("votes from a majority of the servers", "a quorum of acceptors",
# "half of the replicas"): how many a rule needs, said without a number.
_PROPORTION_COUNT = re.compile(
    r"\b(?:a|the|simple|strict)\s+(?:majority|quorum)\b|\b(?:half|two[\s-]thirds)\s+of\b", re.IGNORECASE
)
# "How many votes does a candidate need?", "How many replicas must acknowledge a write?": how many a
# rule needs, which a share answers (`_PROPORTION_COUNT`); "How many servers are there?" it does not.
_NEEDS_COUNT = re.compile(
    r"\bhow\s+many\b[^?]*\b(?:need|needs|needed|must|require|requires|required|necessary|enough|sufficient)\b",
    re.IGNORECASE,
)


def _share_only(text: str) -> bool:
    """Whether the only count *text* gives is a share of a whole ("a majority of the servers")."""
    return bool(_PROPORTION_COUNT.search(text)) and not _COUNT_NUMBER.search(text) and not _WORD_NUMBER.search(text)


# A time in words ("for one week", "a few days", "several hours", "well under a second"): a
# duration with no digit. Not "a day": "millions of requests a day" is a rate; not "a second
# replica", an ordinal: "a second" is a duration only after a word that bounds a time.
_WORD_DURATION = re.compile(
    r"\b(?:(?:one|(?:a\s+)?few|several|" + "|".join(_WORD_NUMBERS) + r")\s+(?:full\s+)?"
    r"(?:weeks?|days?|hours?|months?|minutes?|seconds?|years?)|"
    r"(?:under|within|than|about|around|roughly|for)\s+(?:half\s+)?an?\s+(?:second|minute|hour)(?!\s+[a-z])|"
    # "they may lag the primary slightly, typically fractions of a second"
    r"(?:a\s+)?fractions?\s+of\s+an?\s+(?:second|millisecond|minute|hour))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Quantity:
    """A number or range read from text: `low` == `high` for a single value; `unit` canonical
    ("ms", "mb", "%", ...) or "" when none follows; `start`/`end` its character span."""

    low: float
    high: float
    unit: str
    start: int = field(default=0, compare=False)
    end: int = field(default=0, compare=False)


def _value(text: str) -> float:
    return float(text.replace(",", ""))


def quantities(text: str) -> list[Quantity]:
    """The numbers of *text* with their units, units normalised ("300ms" == "300 ms" ==
    "300 milliseconds") and ranges read as one quantity ("150-300ms", "150 to 300 ms", "between
    150 and 300 milliseconds" -> 150..300 ms; "31k" -> 31,000, "81.1M" -> 81,100,000). Years
    (1900-2099 with no unit), section, figure, table and reference numbers are left out."""
    return list(_quantities(text))


@lru_cache(maxsize=50_000)
def _quantities(text: str) -> tuple[Quantity, ...]:
    found = []
    dotted = [m.span() for m in _DOTTED.finditer(text)]
    for match in _QUANTITY.finditer(text):
        if _NOT_A_QUANTITY.search(text[max(0, match.start() - 12) : match.start()]):
            continue
        if any(start <= match.start() < end for start, end in dotted):
            continue
        low = _value(match["low"])
        high = _value(match["high"]) if match["high"] else low
        if match["high"] and match["unit1"] and not match["unit"]:
            unit_text = match["unit1"]
        else:
            unit_text = match["unit"] or match["unit1"] or ""
        if match["magnitude"]:  # "31k", "81.1M": thousands, millions
            scale = 1e3 if match["magnitude"] in "kK" else 1e6
            low, high = round(low * scale, 3), round(high * scale, 3)
        if match["high"] and high < low:
            # "2-1" is no range (a score, an identifier): keep the first number alone.
            high = low
        unit = _UNITS.get(unit_text.lower(), "")
        if unit_text == "B" and text[match.end() - 2 : match.end() - 1].isdigit():
            unit = ""  # "16.5B tokens": billions, not bytes
            low, high = round(low * 1e9, 3), round(high * 1e9, 3)
        if not unit and match.start() > 0:
            unit = _CURRENCY_SIGNS.get(text[match.start() - 1], "")
        # "2,000 total requests" is no year: a year is written without a thousands separator.
        year_like = not unit and low == high and low.is_integer() and 1900 <= low <= 2099 and "," not in match["low"]
        if year_like and not _counts_after(text, match.end()):
            continue
        found.append(Quantity(low, high, unit, match.start(), match.end()))
    return tuple(found)


_NEXT_WORD = re.compile(r"\s+([a-z][a-z-]{3,})\b")


def _counts_after(text: str, end: int) -> bool:
    """Whether the number ending at *end* counts the plural noun after it ("2000 lines of code"),
    so that it is no year though it looks like one ("in 2006 we ...")."""
    word = _NEXT_WORD.match(text, end)
    return word is not None and word[1].endswith("s") and _stem(word[1]) != word[1]


def normalise_numbers(text: str) -> str:
    """*text* with numbers and units split and units canonical, for term matching: "150-300ms" ->
    "150 ms 300 ms", "64MB" -> "64 mb"."""
    parts = []
    position = 0
    for q in quantities(text):
        parts.append(text[position : q.start])
        low = f"{q.low:g}"
        high = f"{q.high:g}"
        unit = f" {q.unit}" if q.unit else ""
        parts.append(f" {low}{unit} " if q.low == q.high else f" {low}{unit} {high}{unit} ")
        position = q.end
    parts.append(text[position:])
    return "".join(parts)


# PyStemmer's stemmers hold state: one per thread (answers are composed in a thread pool).
_stemmers = threading.local()


# Irregular past forms of verbs papers use, to their base form: "The study ran over eight weeks"
# answers "How long did the study run?". Suffix stripping cannot meet them.
_IRREGULAR_PAST = {
    "ran": "run", "took": "take", "taken": "take", "began": "begin", "begun": "begin", "grew": "grow",
    "grown": "grow", "gave": "give", "given": "give", "found": "find", "held": "hold", "led": "lead",
    "kept": "keep", "chose": "choose", "chosen": "choose", "wrote": "write", "written": "write",
    "built": "build", "sent": "send", "spent": "spend", "went": "go", "gone": "go", "saw": "see",
    "seen": "see", "fell": "fall", "fallen": "fall", "rose": "rise", "risen": "rise", "brought": "bring",
    "taught": "teach", "bought": "buy", "won": "win", "lost": "lose", "met": "meet", "paid": "pay",
    "left": "leave", "felt": "feel", "came": "come", "knew": "know", "known": "know", "drew": "draw",
    "drawn": "draw", "slept": "sleep", "woke": "wake", "woken": "wake", "withdrew": "withdraw",
    "withdrawn": "withdraw", "undertook": "undertake", "undertaken": "undertake", "sought": "seek",
    "thought": "think", "caught": "catch", "shown": "show", "drove": "drive", "driven": "drive",
}  # fmt: skip


@lru_cache(maxsize=100_000)
def _stem(term: str) -> str:
    """*term*'s Snowball English stem (Porter, "An algorithm for suffix stripping", 1980, as revised
    in Snowball; PyStemmer) when it is a word of four or more letters: "locate" and "location"
    meet as "locat", "replicas" and "replica" as "replica"; an irregular past form stems as its
    verb ("ran" as "run"), a British spelling as the American one ("licence" as "license",
    `indexing.lexical.american_spelling`). Numbers and short words stay."""
    term = american_spelling(_IRREGULAR_PAST.get(term, term))
    if not (term.isalpha() and len(term) > 3):
        return term
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = Stemmer.Stemmer("english")
    return str(stemmer.stemWord(term))


def terms(text: str) -> list[str]:
    """Content terms of *text* for matching: BM25 tokens (`indexing.lexical.tokenize`) of the
    number-normalised text, lightly stemmed; a CJK run becomes its character bigrams."""
    return list(_terms(text))


# Scoring reads each candidate's terms several times, and the same passages come back for
# follow-up questions: memoised per text (pure).
@lru_cache(maxsize=50_000)
def _terms(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for token in tokenize(normalise_numbers(text)):
        if _CJK.search(token):
            chars = [c for c in token if not c.isspace()]
            out.extend([a + b for a, b in itertools.pairwise(chars)] if len(chars) > 1 else chars)
        else:
            # "percent" without a number ("By how many percent ...?") meets "41 percent" (-> "%").
            out.append("%" if token in ("percent", "percentage", "percentages") else _stem(token))
    if _VERSION_NUMBER.search(text):
        out.append(_VERSION_TERM)  # "GROBID v0.5.5" states a version, as "64 MB" states a size
    return tuple(out)


# A version number ("v0.5.5", "v3.0.0"): the term "version" for matching.
_VERSION_NUMBER = re.compile(r"\bv\d+(?:\.\d+)+\b")
_VERSION_TERM = "version"


# Words that ask but do not name what is asked.
_ASKING = frozenset(
    "use uses used using get gets make makes take takes paper papers authors author system systems "
    "range number value amount typical typically value values according say says describe "
    "much many long large big fast often small far".split()
)
# Verbs of a relation question ("How does NightOwl relate to S2ORC?"): the asked relation, not a topic.
_RELATING = frozenset(
    "relate relates related depend depends build builds built based derive derives derived extend extends".split()
)
_AUX = r"(?:does|do|did|is|are|was|were|can|could|will|would|should|has|have|had)"


def key_stems(analysis: QuestionAnalysis) -> tuple[str, ...]:
    """The question's key terms (plain lower-case words from question analysis) in the stemmed,
    number-normalised form of the candidates' `terms`, unique, in order."""
    return tuple(dict.fromkeys(t for key in analysis.key_terms for t in terms(key)))


# Where a question names the thing it asks about: "how many X", "what X <verb>", "what is the X",
# "which X <verb>" (group 1 is the phrase).
_PREPOSITION = r"(?:of|in|on|for|to|with|from|by|at|per|about|into|over|under|across|during)"
# "How many annotators evaluated the clustering?" counts annotators: the phrase ends before an
# auxiliary or before a word followed by a determiner (the verb of its clause).
# Not a comparison ("how much smaller did the code become?" asks about the code, not "smaller").
_HOW_MANY_X = re.compile(
    rf"\bhow (?:many|much)\s+(?!(?:[a-z]+er|more|less|fewer)\b)(.+?)(?:\s+{_AUX}\b"
    rf"|\s+(?!{_PREPOSITION}\b)[a-z]+\s+(?:the|a|an|its|their|each|every|this|these)\b"
    # "How many women took part in ...?": a verb in the past tense ends it too.
    rf"|\s+(?:took|had|got|made|gave|saw|ran|came|went|left|kept|[a-z]{{3,}}ed)\b|\?|$)",
    re.IGNORECASE,
)
_WHAT_X = re.compile(rf"\bwhat\s+(?!{_AUX}\b)(.+?)\s+{_AUX}\b", re.IGNORECASE)
_WHAT_AUX_X = re.compile(rf"\bwhat {_AUX} (?:the |a |an )?(.+?)(?:\s+(?:of|for|in|on|that|when)\b|\?|$)", re.IGNORECASE)
_WHAT_IS_X = re.compile(
    r"\bwhat (?:is|are|was|were) (?:the |a |an )?(.+?)(?:\s+(?:of|for|in|on|that|when)\b|\?|$)", re.IGNORECASE
)
_WHICH_X = re.compile(rf"\bwhich\s+(.+?)\s+{_AUX}\b", re.IGNORECASE)
# "What is the largest number of client processes that Chubby ...?" counts client processes;
# "What example value does van Renesse give for the lease period ...?" asks for a lease period:
# the thing after a word that only says a figure is asked.
_FIGURE_OF_X = re.compile(
    rf"^\W*(?:(?:in|according to)\b[^,?]*,\s*)?what\b(?:(?!\?).)*?\b(?:number|count|amount|values?)\s+"
    rf"(?:{_AUX}\s+(?:\S+\s+){{1,3}}?(?:give|use|set|suggest|recommend|pick|choose)s?\s+)?(?:of|for)\s+"
    r"(?:the |a |an |its |their )?(.+?)(?:\s+(?:that|which|who|a|an|the|its|their|in|on|at|when|does|do|did|is|are|was"
    r"|were|has|have|had|can|could)\b|[?,]|$)",
    re.IGNORECASE,
)


def _asked_phrases(question: str, patterns: Sequence[re.Pattern[str]]) -> Iterator[list[str]]:
    """For each of *patterns* that matches *question*, in order, the stemmed terms of the phrase it
    names, `_ASKING` words left out (possibly none)."""
    for pattern in patterns:
        match = pattern.search(question)
        if match:
            yield [t for t in terms(match.group(1)) if t not in _ASKING]


# `_ASKING` words that are the thing counted right after "how many".
_COUNTED_ASKING = frozenset("paper papers author authors system systems value values".split())
# A title in quotes names a paper ("In \u201cSleep Onset Latency in Adolescents\u201d, how many withdrew?"):
# its words are not what the question asks for.
_QUOTED_TITLE = re.compile(r"\u201c[^\u201d]*\u201d")


def asked_phrase(question: str) -> list[str]:
    """The terms of the phrase naming what *question* asks for (see `asked_terms`), [] when it has
    none ("How often does the master write checkpoints?"). Memoised (`_asked_phrase`):
    `states_fact` asks it once per candidate sentence."""
    return list(_asked_phrase(question))


@lru_cache(maxsize=4096)
def _asked_phrase(question: str) -> tuple[str, ...]:
    question = _QUOTED_TITLE.sub(" ", question)
    times = _HOW_MANY_TIMES.search(question)
    if times is not None:
        return tuple(terms(times["verb"]))
    counted = _HOW_MANY_NOUN.match(question)
    if counted is not None and counted["noun"].casefold() in _COUNTED_ASKING:
        # "How many papers are in S2ORC?" counts papers, though "papers" mostly names the papers asked.
        return tuple(terms(counted["noun"]))
    phrase = _HOW_MANY_X.search(question)
    if phrase is not None and phrase[1].split()[-1].casefold() in _COUNTED_ASKING:
        # "How many S2ORC papers have DOIs?" counts papers, which the name before them qualifies.
        return (*(t for t in terms(phrase[1]) if t not in _ASKING), *terms(phrase[1].split()[-1]))
    patterns = (_HOW_MANY_X, _FIGURE_OF_X, _WHAT_X, _WHAT_AUX_X, _WHICH_X)
    return tuple(next((f for f in _asked_phrases(question, patterns) if f), []))


def asked_terms(question: str) -> list[str]:
    """The terms naming the thing a question asks about: the words after "how many/much" or between
    "what" and its verb ("What chunk size does GFS use?" -> chunk, size), or after "what is the"
    ("What is the F1 of ..." -> f1); else every content term. Stemmed (see `terms`). A title in
    quotes is left out."""
    found = asked_phrase(question)
    if found:
        return found
    # "How deep does the crawler crawl?" asks for a depth.
    dimensions = [_stem(noun) for noun in how_dimensions(question)]
    return list(dict.fromkeys(dimensions + [t for t in terms(question) if t not in _ASKING]))


# Heads of an asked phrase that a sentence answering it need not repeat ("What is the purpose of
# the master?" is answered by "The master maintains all file system metadata.").
_GENERIC_HEADS = frozenset(
    _stem(t)
    for t in "purpose role goal aim difference advantage benefit reason idea approach problem way relationship "
    "tradeoff trade-off motivation contribution result finding limitation effect impact main key kind type "
    "design mechanism method technique strategy trouble issue risk danger consequence drawback disadvantage "
    "challenge weakness lesson outcome information thing detail complaint concern criticism feedback "
    "reaction opinion point stage moment name".split()
)


@lru_cache(maxsize=4096)
def asked_head(question: str) -> str:
    """The head term of the thing a "what X"/"which X"/"what is the X" question asks about, stemmed
    ("Under which open-source license is Bigtable released?" -> "licens", "What is the
    inter-annotator agreement kappa?" -> "kappa"); "" for other questions and for generic heads
    (`_GENERIC_HEADS`: "What is the purpose of ...?"). Memoised: `states_fact` asks it once per
    candidate sentence."""
    match = next((m for m in (p.search(question) for p in (_WHAT_X, _WHAT_IS_X, _WHICH_X)) if m is not None), None)
    if match is None:
        return ""
    found = [t for t in terms(_head_phrase(match.group(1))) if t not in _ASKING]
    return found[-1] if found and found[-1] not in _GENERIC_HEADS else ""


# What follows an asked noun without naming it: a modifying phrase ("tools *for extracting content
# from scientific PDFs*") or a participle ("the slowest leader election *observed*").
_POST_MODIFIER = re.compile(r"\s+(?:for|from|in|on|with|by|at|during|under|between|among|that|which|who)\b.*$", re.I)
_PARTICIPLES = frozenset("used given chosen taken seen shown made held built sent kept found known done".split())


def _head_phrase(phrase: str) -> str:
    """*phrase* (an asked phrase as a question words it) up to its head noun: "off-the-shelf tools for
    extracting content from scientific PDFs" -> "off-the-shelf tools", "simple optimization
    suggested" -> "simple optimization"."""
    words = _POST_MODIFIER.sub("", phrase).split() or phrase.split()
    last = words[-1].casefold() if words else ""
    if len(words) >= 2 and (last in _PARTICIPLES or (len(last) >= 6 and last.endswith("ed"))):
        words.pop()
    return " ".join(words)


# A year the question restricts itself to ("... receive in 2023?"), not the year of the paper it
# names ("the 2006 Chubby paper").
_ASKED_YEAR = re.compile(r"\b(?:1[6-9]|20)\d\d\b(?!\s+(?:[A-Z][\w-]*\s+)?(?:paper|article|study|version)\b)")


def _named_things(question: str) -> list[str]:
    """Names in *question*: capitalised or mixed-case words not at its start ("Paxos", "GFS")."""
    words = re.findall(r"(?<!^)(?<![.?!]\s)\b([A-Z][\w-]*[A-Za-z0-9])\b", question.strip())
    return [w for w in words if w.lower() not in {"i", "the", "a"}]


# Asked terms that name a measured quantity: "What chunk size ...", "What timeout ...".
_MEASURE_WORDS_ASKED = frozenset(
    "size sizes length count rate latency throughput timeout timeouts duration period interval percentage "
    "fraction ratio overhead capacity bandwidth f1 accuracy precision recall score speedup load fanout "
    "threshold limit delay cost price budget memory".split()
)
_MEASURES = frozenset(_stem(t) for t in _MEASURE_WORDS_ASKED)


# Measures a question's wording names only when it asks for an amount: "What does Amazon charge per
# gigabyte?" asks for money, as "How much power ...?" does.
_UNIT_MEASURES = frozenset({"money", "power", "temperature"})


# A lead-in that sets the scene before the question asks ("In the ZooKeeper paper's trace of a server
# used by Yahoo!'s Fetching Service, what read:write ratio ...?"): its names say where, not of what.
_LEAD_IN = re.compile(r"^\W*(?:in|according to|during|for|from|on|at|within|across)\b[^,?]*,\s*", re.IGNORECASE)


# Capitalised words in a row that own a thing are one name, the context the thing is in: "Google
# Earth's pipeline" (not "Earth's Bigtable"; "the Block Cache" is the thing asked of, two names).
_NAME_RUN = re.compile(r"\b[A-Z][\w-]*(?:\s+[A-Z][\w-]*)+(?=['\u2019]s\b)")


@lru_cache(maxsize=4096)
def _key_names_of(query: str, key: tuple[str, ...]) -> tuple[str, ...]:
    asking = _LEAD_IN.sub("", re.split(r"(?<=[.!?])\s+", query.strip())[-1])
    names = [
        name for name in _named_things(asking) if set(terms(name)) & set(key) and not set(terms(name)) <= _MEASURES
    ]
    # An owner's name of several words counts once ("Google Earth's Bigtable pipeline": Google Earth and Bigtable).
    for run in _NAME_RUN.finditer(asking):
        inside = [name for name in names if name in run.group(0).split()]
        names = [name for name in names if name not in inside[1:]]
    return tuple(names)


def _key_names(analysis: QuestionAnalysis) -> tuple[str, ...]:
    """The names the question asks of (`_named_things` of its last sentence, without a lead-in
    clause) that are no paper's and no measure's: those among its key terms ("S2ORC-SciBERT",
    "ChemProt"; not "GFS" in "What chunk size does GFS use?", nor "F1")."""
    return _key_names_of(analysis.query, key_stems(analysis))


def answer_type(analysis: QuestionAnalysis) -> AnswerType:
    """The analysis's answer type, read as a quantity when the asked terms name a measure ("What
    chunk size does GFS use?", which the question's wording alone does not mark as one) or it asks
    in a measure's own words (`_UNIT_MEASURES`: "What does Amazon charge ...?")."""
    if analysis.answer_type in (AnswerType.OTHER, AnswerType.ENTITY, AnswerType.DEFINITION) and (
        _names_a_measure(analysis.query) or asked_measure(analysis.query) in _UNIT_MEASURES
    ):
        return AnswerType.QUANTITY
    return analysis.answer_type


@lru_cache(maxsize=4096)
def _names_a_measure(question: str) -> bool:
    """Whether an asked term of *question* names a measure (`_MEASURES`), written as the measure's
    own word: "What limitations ...?" asks for no limit, though the two share a stem."""
    asked = set(asked_terms(question)) & _MEASURES
    words = re.findall(r"[\w-]+", question.casefold())
    return any(
        _stem(word) in asked
        and (word.removesuffix("s") in _MEASURE_WORDS_ASKED or not word.endswith(("ation", "ations")))
        for word in words
    )


def analysis_for(
    question: str, titles: Mapping[int, str] | None = None, texts: Mapping[int, str] | None = None
) -> QuestionAnalysis:
    """A `QuestionAnalysis` of *question* alone, for callers without the full analysis
    (`chat.question.analyse_question`). The papers it names: those whose whole title or title
    acronym it contains, those whose title holds a name it uses ("Paxos"), and, for a name no title
    holds, the paper whose passage text (*texts*, by paper id) uses it at least three times and
    twice as often as any other ("Raft"). It compares when it names two papers or more."""
    titles = titles or {}
    texts = texts or {}

    def spaced(text: str) -> str:
        return " " + " ".join(re.findall(r"[\w-]+", text.casefold())) + " "

    folded = spaced(question)
    named = [
        pid
        for pid, title in titles.items()
        if spaced(title) in folded or (len(_acronym(title)) >= 2 and f" {_acronym(title)} " in folded)
    ]
    for name in _named_things(question):
        key = f" {name.casefold()} "
        in_title = [pid for pid, title in titles.items() if key in spaced(title)]
        named += in_title
        if in_title or not texts:
            continue
        counts = sorted(((spaced(text).count(key), pid) for pid, text in texts.items()), reverse=True)
        others = counts[1][0] if len(counts) > 1 else 0
        if counts[0][0] >= 3 and counts[0][0] >= 2 * others:
            named.append(counts[0][1])
    named_ids = tuple(dict.fromkeys(named))
    return QuestionAnalysis(
        question=question,
        query=question,
        answer_type=classify_answer_type(question),
        named_paper_ids=named_ids,
        comparison=len(named_ids) > 1,
        key_terms=key_terms(question),
    )


# --- scoring ------------------------------------------------------------------------------------

_NAME = re.compile(r"\b[A-Z][a-z]*[A-Z0-9][\w-]*\b|\b[A-Z][a-z]{2,}(?:\s+[A-Z][a-z]+)+\b")
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]{2,}\b")
# A capitalised word inside a sentence, after a lower-case word or a comma: a name ("implemented in
# Java", "built on Hadoop"), where a sentence's first word is capitalised whatever it is.
_MID_NAME = re.compile(r"(?<=[a-z,;(]\s)[A-Z][a-z]{2,}\b")
# A function or call named in code style: "getData()", "exists()", "sync()".
_CALL = re.compile(r"\b[a-z][a-zA-Z0-9_]*(?=\(\))")
# "In which programming language ...?", "Under which licence ...?": a preposition before the question word.
_PREPOSITION_FIRST = re.compile(r"^\W*(?P<prep>in|on|under|with|from|by)\s+(?:which|what)\b", re.IGNORECASE)
# The same preposition left at the end: "Which licence is S2ORC released under?", "What language is
# the master written in?".
_PREPOSITION_LAST = re.compile(r"^\W*(?:which|what)\b[^?]*\s(?P<prep>in|on|under|with|from|by)\s*\?\s*$", re.IGNORECASE)


def names_in(text: str) -> list[str]:
    """The names *text* uses: mixed-case words and capitalised word runs (`_NAME`: "PaperMage",
    "Paper Plain"), acronyms ("GROBID") and capitalised words inside a sentence ("in Java"), except
    the words that label a part of a paper ("Table", "Section") or a date ("May")."""
    found = _NAME.findall(text) + _ACRONYM.findall(text) + _MID_NAME.findall(text) + _CALL.findall(text)
    return [
        name
        for name in dict.fromkeys(found)
        if name.casefold() not in _NOT_PLACES and name.casefold().removesuffix("s") not in _UNITS
    ]


_DEFINES = re.compile(r"\b(?:is|are)\s+(?:a|an|the)\b|\brefers? to\b|\bwe (?:call|define)\b|\bdefined as\b", re.I)
# A mechanism is stated with a means or a purpose: "... by ...", "To detect ..., Dynamo uses Merkle
# trees", "We use a three-level hierarchy ... to store tablet location information".
_EXPLAINS = re.compile(
    r"\b(?:by|because|so that|when|whenever|if|until|periodically|using|through|which|in order to|first|then|"
    r"relies on|employs)\b|^to \w+"
    # "... used to <verb>", but not an experiment's "We used our implementation to measure ...".
    r"|\b(?:use[sd]?|employs?|adopts?)\b[^.;]{0,80}?\bto (?!(?:the|a|an|measure|evaluate|test|compare|assess|"
    r"study|analy[sz]e|validate|answer|show|demonstrate|illustrate|quantify|benchmark)\b)\w+",
    re.I,
)
# The means a sentence names: "uses vector clocks", "relies on a consensus protocol", "employs Zab".
_USES_THING = re.compile(
    r"\b(?:uses|use|used|employs?|relies on|rely on|adopts?)\s+(?:an?\s+|the\s+)?"
    r"(?P<thing>(?!(?:it|this|that|them|these|those|its|their)\b)[\w-]+(?:\s+[\w-]+)?)",
    re.I,
)
# A "why" question is answered by a reason or an effect: "... because ...", "... reduces clients'
# need to interact with the master", "This allows ...", "To avoid ...".
_REASON = re.compile(
    r"\b(?:because|since|so that|so as to|in order to|due to|as a result|therefore|thus|hence|allows?|enables?|"
    r"lets?|reduces?|avoids?|prevents?|ensures?|helps?|simplif(?:y|ies)|makes?|improves?|lowers?|minimi[sz]es?|"
    r"tolerates?|benefits?|advantages?|motivat\w*|the reason|why)\b|^to \w+|\bfor \w+ing\b|"
    # a consequence: "Raft RPCs are idempotent so this causes no harm"
    r"\bso (?:this|that|it|they|there|no)\b|,\s*so\b|"
    # a purpose: "The fanout of three was chosen to balance bandwidth against convergence time."
    # (not a place: "when a new node is added to the system")
    r"\b(?:chosen|designed|used|intended|meant|needed|built|added|introduced|picked|selected|set|made) to "
    r"(?!(?:the|a|an|its|their|this|that|these|those|each|every|all|any|one|some)\b)\w+",
    re.I,
)
# "What is X called?", "What was the step named?": a name asked for.
_ASKS_WHAT_CALLED = re.compile(r"^(?:(?!\?).)*\bwhat\b(?:(?!\?).)*\b(?:called|named|termed|known as)\s*\?\s*$", re.I)
# A term the text sets in quotation marks: the \u201csynod\u201d algorithm.
_QUOTED_TERM = re.compile(r"[\u201c\"]([^\u201d\"]{2,40})[\u201d\"]")
# A term the text gives a thing: "This process is called read repair".
_CALLED_TERM = re.compile(r"\b(?:called|named|termed|known as)\s+(?:the\s+|a\s+|an\s+)?([\w-]+(?:\s+[\w-]+)?)", re.I)
_DETERMINER_STEMS = frozenset({"the", "a", "an"})
_WHY = re.compile(r"^\s*(?:and\s+|but\s+)?why\b|\band why\s*[?.!]*\s*$", re.I)
_POLAR = re.compile(r"\b(?:not|no|never|only|always|cannot|must|does|do|is|are)\b", re.I)


# What a quantity question measures, from its wording, checked in this order ("How many seconds"
# asks for a time, not a count): measure -> (pattern, canonical units that fit it).
_MEASURE_WORDS: tuple[tuple[str, re.Pattern[str], frozenset[str]], ...] = (
    # "In which year was Chubby first deployed?": a year, which `quantities` leaves out.
    ("year", re.compile(r"\b(?:what|which)\s+year\b", re.IGNORECASE), frozenset()),
    (
        # "By how many percent does it cut latency?" asks for a share, not a time.
        "share",
        re.compile(
            # ("with 0% reads" is a condition the question gives, no share it asks for).
            r"\b(?:percent|per cent|percentage|fraction|proportion|ratio|by how much|speed-?up|what share)\b|(?<!\d)%"
            # "How many times faster ...?" (a factor), not "How many times was it downloaded?" (a count)
            r"|\bhow many times\s+(?:[a-z]+er|more|less|fewer|as)\b",
            re.IGNORECASE,
        ),
        frozenset({"%", "x", ""}),
    ),
    (
        "temperature",
        re.compile(r"\b(?:temperatures?|how (?:hot|cold|warm)|degrees)\b", re.IGNORECASE),
        frozenset({"°c", "°f", "k", "°"}),
    ),
    (
        # "How long may a row key be?", "How long is a lease?": a length, in time or in bytes.
        "length",
        re.compile(r"\bhow long\b(?=.*\bbe\s*[?.!]*\s*$)|^\W*how long (?:is|are|was|were)\b", re.IGNORECASE),
        frozenset({"ms", "s", "us", "ns", "min", "h", "day", "week", "month", "b", "kb", "mb", "gb", "tb", "pb"}),
    ),
    (
        "time",
        re.compile(
            r"\b(?:how long|how often|how quickly|how fast|how far behind|latency|latencies|timeouts?|delays?|"
            r"durations?|intervals?|periods?|seconds|milliseconds|minutes|hours)\b",
            re.IGNORECASE,
        ),
        frozenset({"ms", "s", "us", "ns", "min", "h", "day", "week", "month"}),
    ),
    (
        "bytes",
        re.compile(
            r"\b(?:capacity|memory|disk space|(?:kilo|mega|giga|tera|peta)?bytes|in (?:[kmgtp]i?b))\b", re.IGNORECASE
        ),
        frozenset({"b", "kb", "mb", "gb", "tb", "pb"}),
    ),
    (
        # A size may be in bytes ("chunk size") or a count ("quorum size", "sample size").
        "size",
        re.compile(r"\bsizes?\b", re.IGNORECASE),
        frozenset({"b", "kb", "mb", "gb", "tb", "pb", ""}),
    ),
    (
        "power",
        re.compile(r"\b(?:energy|power|electricity|watts?)\b", re.IGNORECASE),
        frozenset({"w", "kw"}),
    ),
    (
        # Money in so many words ("in dollars", "what price"); "cost" alone may be time or work.
        "money",
        re.compile(
            r"\b(?:dollars?|usd|euros?|prices?|how much money|paid|pay|charged?|compensat\w*|budgets?|"
            r"salar(?:y|ies))\b|\$|\bhow much (?:does|do|did|would|will)\b.*\bcost\b|\bcosts?\s+per\b"
            r"|\bcost\s+to\s+(?:buy|purchase|rent|build)\b",
            re.I,
        ),
        frozenset({"$", "€", "£"}),
    ),
    # A count per something is a rate, which may be a fraction: "How many lapses per test ...?" is
    # answered by "rose from 2.1 to 4.8 per test" (then any number will do).
    ("count", re.compile(r"\b(?:how many|number of|count of)\b(?![^?.,;]*\bper\b)", re.IGNORECASE), frozenset({""})),
)


_BYTE_UNITS = frozenset({"b", "kb", "mb", "gb", "tb", "pb"})


# "How much did write buffering lower the 99.9th percentile latency?": a change, told as a factor,
# a share or an amount in the measure's unit alike.
_CHANGE_BY = re.compile(
    r"\bhow much (?:did|does|do|has|have|had|will|would|can|could)\b[^?]*?\b(?:lower|reduc|cut|improv|increas|"
    r"decreas|rais|boost|shrink|shrank|speed|slow)(?:e|es|ed|s|d|ing)?\b",
    re.IGNORECASE,
)


# "How many times was CORD-19 downloaded?" counts the events of its verb: "75K dataset downloads".
_HOW_MANY_TIMES = re.compile(rf"\bhow many times\s+{_AUX}\b.*?\b(?P<verb>[a-z]{{3,}}(?:ed|en))\b", re.IGNORECASE)
_HOW_MANY_NOUN = re.compile(
    r"^\W*(?:(?:and|so|roughly|approximately|about|exactly)\s+)*how\s+many\s+(?!(?:percent|times|more|fewer|of)\b)"
    r"(?P<noun>[a-z]+)\b(?!\s+per\b)",
    re.I,
)


def asked_measure(question: str) -> str:
    """What quantity *question* asks for: "share" (a percentage or ratio), "temperature", "time",
    "bytes", "size" (bytes or a count), "power", "money", "count" or "" (no telling: a score, a
    cost, a fanout, or a change by some amount: "How much did buffering lower the latency?")."""
    question = _QUOTED_TITLE.sub(" ", question)  # "... in \u201cSleep Onset Latency ...\u201d": no time asked
    if _CHANGE_BY.search(question):
        return ""
    if _HOW_MANY_TIMES.search(question):
        return "count"
    counted = _HOW_MANY_NOUN.match(question)
    if counted is not None and counted["noun"].casefold() not in _UNITS:
        return "count"  # "How many rounds until ninety-nine percent of nodes learn it?": rounds, not a share
    return next((name for name, pattern, _ in _MEASURE_WORDS if pattern.search(question)), "")


# Nouns for the people a study counts: "How many people took part?" is answered by "We recruited a
# total of ten participants".
_PEOPLE = frozenset(
    _stem(w)
    for w in "people person persons participant participants user users volunteer volunteers "
    "respondent respondents annotator annotators worker workers interviewee interviewees subject subjects "
    "individual individuals child children adolescent adolescents teenager teenagers student students pupil "
    "pupils adult adults patient patients nurse nurses employee employees teacher teachers parent parents "
    "infant infants resident residents clinician clinicians physician physicians "
    "doctor doctors reader readers researcher researchers expert experts sample samples cohort cohorts "
    "crowdworker crowdworkers upworker upworkers turker turkers".split()
)

# Women and men, each a class of its own: "How many women took part?" is answered by "14 female",
# not by "24 participants" or "a patient".
_WOMEN = frozenset(_stem(w) for w in "woman women female females girl girls".split())
_MEN = frozenset(_stem(w) for w in "man men male males boy boys".split())


# Words for funding a work: "Who funded X?" is answered by "This work was supported by ...".
_FUNDING = frozenset(
    _stem(w)
    for w in "fund funds funded funding funder funders support supported sponsor sponsors sponsored grant grants "
    "granted finance financed financing".split()
)
# Words for choosing one of several: "How do the servers choose a master?" is answered by "The
# replicas use a distributed consensus protocol to elect a master".
_CHOOSING = frozenset(
    _stem(w)
    for w in "choose chooses choosing chose chosen elect elects elected electing election select selects selected "
    "selecting selection pick picks picked appoint appoints appointed".split()
)
# "How many kinds of RPC ...?" is answered by "two types of RPCs".
_KINDS = frozenset(_stem(w) for w in "kind kinds type types sort sorts".split())
# Code by the language it is written in: "How many lines of code is the backend?" is answered by
# "The backend was implemented in around 1,000 lines of Python".
_CODE = frozenset(
    _stem(w)
    for w in "code python java javascript typescript rust scala haskell ocaml erlang elixir ruby php perl kotlin "
    "swift golang fortran matlab".split()
)
# Classes of words a question and its evidence may use interchangeably.
_TERM_CLASSES = (_PEOPLE, _WOMEN, _MEN, _FUNDING, _CHOOSING, _KINDS, _CODE)
# Words for a bound: "What maximum file size ...?" is qualified by "a limit on file size".
_LIMITS = frozenset(_stem(w) for w in "maximum max limit limits cap caps ceiling bound bounds upper".split())


def with_classes(
    present: set[str], asked: Collection[str], classes: Sequence[frozenset[str]] = _TERM_CLASSES
) -> set[str]:
    """*present* (stemmed terms of a sentence) with the *asked* terms of each of *classes* it
    shares a word with: "How many participants ...?" finds "participants" in "We recruited 84
    adolescents", and "Who funded ...?" finds "funded" in "... was supported by the NSF"."""
    out = set(present)
    for words in classes:
        if words & present:
            out |= words & set(asked)
    return out


def term_classes(analysis: QuestionAnalysis) -> tuple[frozenset[str], ...]:
    """The word classes that match as one for *analysis*'s question: people for a count ("How many
    participants ...?"; "Which study had 43 students?" names its students), funding words for a
    question about funding (`asks_about_funding`), words for choosing for a question about a choice
    ("How do they choose a master?" matches "elect a master"), words for a kind for a question
    about kinds ("How many kinds of RPC ...?" matches "two types of RPCs"), languages for a
    question about code ("lines of code" matches "lines of Python")."""
    counts = answer_type(analysis) == AnswerType.QUANTITY and asked_measure(analysis.query) in ("count", "")
    key = set(key_stems(analysis))
    wanted = (
        (_PEOPLE, counts),
        (_WOMEN, counts),
        (_MEN, counts),
        (_FUNDING, asks_about_funding(analysis.query)),
        (_CHOOSING, bool(_CHOOSING & key)),
        (_KINDS, bool(_KINDS & key)),
        (_CODE, _stem("code") in key),
    )
    return tuple(c for c, asked in wanted if asked)


_STATISTICS = frozenset(_stem(t) for t in "average mean median total maximum minimum overall typical".split())
# A rate per unit of time ("How many commands per second ...?") and the ways a text states one.
_ASKED_RATE = re.compile(r"\bper\s+(second|minute|hour|day|week|month|year)\b", re.IGNORECASE)
_RATE_UNIT = {"second": "s|sec", "minute": "min", "hour": "h|hr", "day": "d", "week": "wk", "month": "mo", "year": "yr"}


def states_rate(text: str, question: str) -> bool:
    """Whether *text* states a rate per the unit of time *question* asks it per ("per second",
    "a second", "/s", "ops/sec"); True when the question asks for no rate. "How many commands per
    second ...?" is not answered by "commands 136 and 137"."""
    asked = _ASKED_RATE.search(question)
    if asked is None:
        return True
    unit = asked[1].casefold()
    return bool(
        re.search(rf"\b(?:per|a|each|every)\s+{unit}\b|/\s*(?:{_RATE_UNIT[unit]}|{unit})\b|\b{unit}ly\b", text, re.I)
    )


# A part of a counted whole: "33 of 41", "4 out of the 6".
_PART_OF_WHOLE = re.compile(r"\b\d+\s+(?:of|out\s+of)\s+(?:the\s+)?\d+\b(?!\s*%)")
_WINDOW_WORD = re.compile(r"[^\W_][\w'\u2019.+-]*|%")
# How many words from a number its noun may stand: "about 25 other open source implementations",
# "the chunk size is 64 MB", "participants (N = 84)".
_ATTACHMENT_WORDS = 4


# Measures stated as an amount per unit of time, and a number so stated: "12,000 entries per
# second", "16 GB/s", "100 Mbps", "2,000 ops/sec".
_RATE_MEASURES = frozenset(_stem(w) for w in "throughput bandwidth".split())
# "How fast do the compression schemes encode data?" asks for a rate ("encode at 100-200 MB/s"), as
# "What throughput ...?" does; "How fast does a leader get elected?" is answered by a time too.
_HOW_FAST_DOES = re.compile(r"\bhow (?:fast|quickly)\s+(?:does|do|did|can|could)\b", re.IGNORECASE)
_PER_TIME = re.compile(
    rf"\b{_NUMBER}\s*(?:[kmgt]?b/s|[kmg]?bps|(?:[\w-]+\s+){{0,3}}(?:per|a|each|every)\s+(?:second|minute|hour|day)\b"
    r"|(?:[\w-]+\s*)?/\s*(?:s|sec|second|min|h|hr)\b)",
    re.IGNORECASE,
)


def _is_row(text: str) -> bool:
    """Whether *text*'s first line is a table row ("Marlin 0.850 0.760 0.802") or a row of numbers:
    a candidate's `Sentence.readings` put its header and caption on the lines after it."""
    first = text.split("\n", 1)[0]
    return bool(_TABLE_ROW.match(first) or _NUMERIC_ROW.match(first))


def number_attached(text: str, measure: str, asked: Collection[str], *, by_unit: bool = True) -> bool:
    """Whether a number of *text* that fits *measure* (`asked_measure`; digits, or for a count or an
    unnamed measure a number in words) stands within `_ATTACHMENT_WORDS` words, in its own sentence
    or clause, of one of the *asked*
    terms (stemmed, word classes as one: `with_classes`): "roughly 2000 lines of C++ code" for "How
    many lines of code ...?", not "each server is in one of three states ... In normal operation"
    for "How many operations per second ...?". A table row is attached to its header, not to its
    neighbours: it always counts (True), as does a row on the first line of a captioned row's
    `Sentence.readings` (its header and caption on the lines after it), a question with no asked
    terms, and, where the question names no measure, a number with a unit ("64 MB" for "How large
    are GFS chunks?"), unless not *by_unit*."""
    if not asked or _is_row(text):
        return True
    units = next((fits for name, _, fits in _MEASURE_WORDS if name == measure), None)
    found = quantities(text)
    if by_unit and measure == "" and any(q.unit for q in found):
        return True  # "How large are GFS chunks?": "64 MB" says what it measures by its unit
    spans = [(q.start, q.end) for q in found if units is None or q.unit in units]
    if measure == "year":
        spans = _years(text)
    if measure in ("time", "length"):
        spans += [m.span() for m in _WORD_DURATION.finditer(text)]  # "after twelve hours of annealing"
    if measure in ("count", ""):
        spans += [m.span() for m in _WORD_NUMBER.finditer(text)]
        spans += [(m.start(), m.start(1)) for m in _SYMBOLIC_COUNT.finditer(text)]  # the noun after it
        spans += [m.span() for m in _PROPORTION_COUNT.finditer(text)]  # "a majority of the servers"
    # "What was the average age ...?" is not answered by "clicking on average only 7 Section Gists":
    # a statistic's name says how the figure is summarised, not what it measures.
    asked_set = set(asked) - _STATISTICS or set(asked)
    for part in _PART_OF_WHOLE.finditer(text):
        # "33 of 41" counts what its sentence is about ("An overwhelming majority of participants
        # reported ... (33 of 41 for each question)"): its noun may stand anywhere in the sentence.
        sentence = "".join(_clause_around(text, part.start(), part.start()))
        if with_classes(set(terms(sentence)), asked_set) & asked_set:
            return True
    for start, end in spans:
        # Within the number's own sentence or clause.
        before_text, after_text = _clause_around(text, start, end)
        if _COPULA_BEFORE.search(before_text) and with_classes(set(terms(before_text)), asked_set) & asked_set:
            return True  # "The load of the majority system over nine servers is five ninths."
        aside = _ASIDE_BEFORE.search(before_text)
        if aside is not None and with_classes(set(terms(before_text[: aside.start()])), asked_set) & asked_set:
            # "election timeouts are chosen randomly from a fixed interval (currently 150-300ms ...)":
            # a value in an aside gives the figure of what its clause is about.
            return True
        before = _WINDOW_WORD.findall(before_text)[-_ATTACHMENT_WORDS:]
        after = _WINDOW_WORD.findall(after_text)[:_ATTACHMENT_WORDS]
        near = set(terms(" ".join(before + after)))
        if with_classes(near, asked_set) & asked_set:
            return True
    return False


_CLAUSE_BREAK = re.compile(r"[.;!?]\s")
# A number opening an aside: "(currently 150-300ms", "(e.g., 64 MB", "(about 100".
_ASIDE_BEFORE = re.compile(
    r"\((?:currently|typically|usually|by\s+default|e\.g\.,?|for\s+example,?|about|roughly|around|approximately)?"
    r"\s*$",
    re.IGNORECASE,
)
# A number that is the complement of its clause's verb "to be": it measures the clause's subject.
_COPULA_BEFORE = re.compile(
    r"\b(?:is|are|was|were|equals|becomes)\s+(?:about\s+|roughly\s+|approximately\s+|only\s+|just\s+)?$", re.I
)


def _clause_around(text: str, start: int, end: int) -> tuple[str, str]:
    """The text of the sentence or clause of *text* that holds the span *start*..*end*, before the
    span and after it."""
    return _CLAUSE_BREAK.split(text[:start])[-1], _CLAUSE_BREAK.split(text[end:])[0]


_YEAR_WORDS = frozenset({"year", "years"})
_YEAR = re.compile(r"(?<![\w.])(?:1[89]|20)\d\d(?![\w.])")


def _years(text: str) -> list[tuple[int, int]]:
    """The spans of the years *text* gives ("first deployed in 2004"), not of a count that looks
    like one ("2000 lines of code")."""
    return [m.span() for m in _YEAR.finditer(text) if not _counts_after(text, m.end())]


# The length of a text: "about 400 lines long", "9 pages or 3500 words".
_TEXT_LENGTH = re.compile(r"\b\d[\d,.]*\s+(?:lines|pages|words|characters|tokens)\b", re.IGNORECASE)
# A time that places a moment within a run ("300 seconds into the computation") says no duration.
_MOMENT_AFTER = re.compile(r"\s+into\b", re.IGNORECASE)


# What follows a unitless number that makes it a share: a ratio ("108:1") or a part of a whole ("33 of 41").
_SHARE_AROUND = re.compile(r"\s*(?::\s*\d|/\s*\d|(?:of|out\s+of|in)\s+(?:the\s+)?\d)", re.IGNORECASE)


def quantity_fit(text: str, measure: str, counted: Collection[str] = ()) -> float:
    """How well the numbers of *text* fit a question asking for *measure* (`asked_measure`): 1.0
    for a number in a fitting unit (a count has none: "(N=10)"; a count in words counts too when
    it counts one of *counted*, the question's asked terms, stemmed: "ten participants" for "How
    many participants ...?", or for "How many people ...?", `_PEOPLE` being one thing), 0.5 for a
    number in words where a count or any number will do (a time in words, "for one week", where a
    time is asked, 1.0; a time that places a moment, "300 seconds into the run", is none), 0.2
    for numbers in other units only ("1MB" for "the maximum number of znodes") or, for a count,
    fractions only ("Paper clustering 0.93 0.89" counts nothing), 0.0 for none."""
    if measure == "year":
        return 1.0 if _years(text) else 0.0
    found = quantities(text)
    units = next((fits for name, _, fits in _MEASURE_WORDS if name == measure), None)
    fitting = [q for q in found if units is None or q.unit in units]
    if measure == "count":
        fitting = [q for q in fitting if q.low.is_integer() and q.high.is_integer()]
    if measure == "share":
        # A share without a unit is a fraction ("0.93"), a ratio ("108:1") or a part of a whole
        # ("33 of 41"), not a count ("approximately 1700 reduce tasks").
        # In a table row a column of percentages may go without its sign ("FindLocation 64.3 65.8").
        row = _is_row(text)
        fitting = [
            q for q in fitting if q.unit or q.high <= 1 or (row and q.high <= 100) or _SHARE_AROUND.match(text, q.end)
        ]
    if measure in ("time", "length"):
        # "killed 200 workers several minutes into the computation": a moment, not how long it took.
        fitting = [q for q in fitting if not _MOMENT_AFTER.match(text, q.end)]
        if not fitting and any(not _MOMENT_AFTER.match(text, m.end()) for m in _WORD_DURATION.finditer(text)):
            return 1.0
    if fitting:
        return 1.0
    if measure == "length" and _TEXT_LENGTH.search(text):
        return 1.0  # "How long is the specification?": "It is about 400 lines long"
    if measure == "count" and counted:
        wanted = set(counted).union(*(people for people in (_PEOPLE, _WOMEN, _MEN) if people & set(counted)))
        if any(_stem(noun.casefold()) in wanted for noun in _WORD_COUNT.findall(text)):
            return 1.0
        if any(_stem(noun) in wanted for noun in _SYMBOLIC_COUNT.findall(text)):
            return 1.0  # "preference list contains more than N nodes" for "How many nodes ...?"
        if _PROPORTION_COUNT.search(text) and wanted & {_stem(word.casefold()) for word in re.findall(r"\w+", text)}:
            return 1.0  # "receives votes from a majority of the servers" for "How many votes ...?"
    if _WORD_NUMBER.search(text) and measure in ("", "count"):
        return 0.5
    return 0.2 if found else 0.0


@lru_cache(maxsize=4096)
def _definition_pattern(words: tuple[str, ...]) -> re.Pattern[str] | None:
    if not words:
        return None
    # The words may be stems ("ephemer" for "Ephemeral"): a word starting with one names it.
    names = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    # "Zab [24], an atomic broadcast protocol", "An SSTable is a ...", "(an SSTable) provides a",
    # "data nodes (znodes)", "a collection (or cluster) of", "We introduce S2ORC,1 a large corpus",
    # "S2ORC consists of" (opening the sentence: "all of S2ORC consists of 25B tokens" measures it),
    # "znode to denote", "Ephemeral: ...".
    return re.compile(
        rf"\b(?:{names})\w*\b(?:\s*\[[^\]]*\])?\d*(?:,\d*\s+(?:a|an|the|which|that)\b"
        rf"|\s+(?:is|are|provides?|refers? to)\s+(?:a|an|the)\b|\s+(?:to )?denotes?\b)"
        rf"|^(?:the\s+|an?\s+)?(?:{names})\w*\s+(?:consists?|comprises?) of\b"
        rf"|\b(?:called|named|dubbed)\s+(?:an?\s+|the\s+)?(?:{names})\w*"
        rf"|\w+\s+\((?:or\s+|i\.e\.,?\s+|a\.k\.a\.?\s+)?(?:{names})\w*\)"
        rf"|\b(?:{names})\w*:\s+\w"  # a list item that defines: "Ephemeral: Clients create such znodes, ..."
        # an apposition after its noun: "A separate routing service, Wayfinder, maintains ..."
        rf"|\b(?:a|an|the|our)\s+(?:[\w-]+\s+){{0,3}}[\w-]+,\s+(?:{names})\w*,",
        re.IGNORECASE,
    )


def _definienda(analysis: QuestionAnalysis) -> tuple[str, ...]:
    """The words a definition must define: the question's key terms, or, when the defined thing is
    a paper's own name ("What is S2ORC?", whose key terms leave the name out), that name."""
    if analysis.key_terms:
        return analysis.key_terms
    term = defined_term(analysis.query)
    return (term.casefold(),) if term else ()


def _defines_term(text: str, words: Sequence[str]) -> bool:
    """Whether *text* defines one of *words* (the question's key terms): "X is a ...", "X, an
    ...", "... called X"."""
    pattern = _definition_pattern(tuple(words))
    return pattern is not None and pattern.search(text) is not None


# A question asking where a study was done ("Where was the classroom noise study conducted?", "In
# which city ...?"), answered by a place's name, not by the study's topic.
_ASKS_PLACE = re.compile(
    r"^\s*(?:and\s+|so\s+)?where\s+(?:was|were|is|are|did|do|does|had|has|have)\b.*\b(?:conducted|done|carried\s+out|"
    r"performed|run|held|recruited|located|based|collected|undertaken|situated|take\s+place|took\s+place|deployed|"
    r"tested|evaluated|studied)\b|\bin\s+(?:which|what)\s+(?:city|country|countries|region|state|town|hospitals?|"
    r"schools?|universit(?:y|ies)|location|place|site|setting)\b",
    re.IGNORECASE,
)
# A place named after a preposition: "in Lisbon, Portugal", "at two hospitals in Osaka", "across
# six schools in central Lisbon", "at Google", "on a cluster of 12 Amazon EC2 instances".
_PLACE_NAME = re.compile(
    r"\b(?:in|at|on|from|across|near|throughout|within)\s+(?:the\s+|a\s+|an\s+)?(?:(?:central|northern|southern|"
    r"eastern|western|rural|urban|greater)\s+|(?:cluster|network|testbed|set|fleet)\s+of\s+(?:\d+\s+)?)?"
    r"(?P<name>[A-Z][\w'\u2019-]+)"
)
_NOT_PLACES = frozenset(
    "section sections table tables figure figures fig appendix eq equation chapter part step phase stage "
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday this these our their its".split()
)


def asks_place(question: str) -> bool:
    """Whether *question* asks where a study or work was done (`_ASKS_PLACE`)."""
    return bool(_ASKS_PLACE.search(question))


def names_place(text: str, question: str) -> bool:
    """Whether *text* names a place after a preposition ("... schools in Lisbon, Portugal") that
    *question* does not name itself; "in Section 3", "in Table 2", "in May" are no places."""
    asked = {word.casefold() for word in re.findall(r"[\w'\u2019-]+", question)}
    names = [m["name"].casefold() for m in _PLACE_NAME.finditer(text)]
    return any(name not in _NOT_PLACES and name not in asked for name in names)


# Asked terms that name a bound, and a number stated as one ("above 0.8", "at most 10 %", "≥ 3").
_BOUND_TERMS = frozenset(_stem(t) for t in "threshold thresholds cutoff cutoffs limit limits bound bounds".split())
_BOUND = re.compile(
    r"(?:\b(?:above|below|over|under|exceed(?:s|ing)?|at (?:least|most)|(?:greater|less|more|fewer|higher|lower) than"
    r"|up to|no (?:more|less|fewer) than)\s+|[<>≤≥]=?\s*)" + _NUMBER + r"(?![\d.]*\s*(?:th|st|nd|rd)\b)"
)


# A question asking for a bound by name: "What is the maximum number of ...?", "What minimum size ...?"
# ("the largest number seen" asks for an observed extreme, no bound).
_ASKS_BOUND = re.compile(
    r"\b(?:maximum|minimum|max|min)\s+(?:[\w-]+\s+)?(?:number|count|amount|size|length|value)s?\b", re.IGNORECASE
)


# Modifiers of an asked thing that say no kind of it: "Which existing codebase ...?" asks for a codebase.
_PLAIN_MODIFIERS = frozenset(
    _stem(w)
    for w in "existing new main common typical standard specific particular actual original same other certain "
    "own exact overall general underlying "
    # A measure's degree or statistic says which figure, not what it measures: "the largest number
    # of open sessions", "the sample size of the study" (a count of its participants).
    "largest smallest highest lowest biggest longest shortest greatest maximum minimum average mean median "
    "total sample".split()
)


_NAMED_KINDS = (
    r"(?:manufacturers?|vendors?|makers?|brands?|agenc(?:y|ies)|funders?|sponsors?|engines?|versions?|kernels?|"
    r"checkers?|assistants?|universit(?:y|ies)|institutions?|organi[sz]ations?|products?|hash\s+functions?|"
    r"compilers?|operating\s+systems?|programming\s+languages?)"
)
_ASKS_A_LANGUAGE = re.compile(r"\blanguages?\b", re.IGNORECASE)
_LANGUAGE_STEM = _stem("language")
# Words a sentence names a programming language by: "implemented in Java", "lines of C++ code".
_CODED = re.compile(r"\b(?:implement\w*|written|code|coded|programs?|librar(?:y|ies)|lines)\b", re.IGNORECASE)
# Programming languages by name, for "In which programming language ...?".
_PROGRAMMING_LANGUAGE = re.compile(
    r"(?<![\w+#])(?:C\+\+|C#|Java|JavaScript|TypeScript|Python|Go|Golang|Rust|Erlang|Haskell|OCaml|Scala|Ruby|Perl|"
    r"Lisp|Fortran|Kotlin|Swift|PHP|Lua|Julia|MATLAB|Sawzall|C)(?![\w+#])"
)
# An entity question whose answer is a name ("What tools ...?", "Who ...?"), not a kind of thing
# ("Which filters ...?" is answered by "papers with no title").
_ASKS_A_NAME = re.compile(
    r"^\s*(?:(?:and|so|then)\s+)?(?:(?:in|on|at|by|from|for|with|under)\s+)?(?:who|whom|(?:what|which)\s+(?:tools?|systems?|datasets?|models?|librar(?:y|ies)|"
    r"compan(?:y|ies)|services?|protocols?|languages?|algorithms?|names?|software|parsers?|hardware|frameworks?|"
    r"platforms?|devices?|databases?|formats?|toolkits?|benchmarks?|corpus|corpora|metrics?)|"
    rf"(?:what|which)\s+(?:[\w-]+\s+){{0,2}}?{_NAMED_KINDS})\b",
    re.IGNORECASE,
)
# "Which manufacturer ...?", "In which programming language ...?", "Which hash functions ...?": a
# kind of thing only a name answers, and only a sentence that says the kind (or puts the name where
# the question's preposition asks for it: "implemented in C++") says which name is of that kind.
_ASKS_A_NAMED_KIND = re.compile(
    rf"^\s*(?:(?:and|so|then)\s+)?(?:(?:in|on|at|by|from|for|with|under)\s+)?(?:what|which)\s+(?:[\w-]+\s+){{0,2}}?"
    rf"{_NAMED_KINDS}\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def _asked_thing_terms(query: str) -> tuple[str, ...]:
    """`terms` of the thing *query* asks for (`asked_thing`, else `measured_thing`): once per
    question, not per candidate."""
    return tuple(terms(asked_thing(query) or measured_thing(query) or ""))


# "Who calibrated them?", "Who funded the study?": the doer of a verb, which the evidence must say.
_WHO_DID = re.compile(r"^\s*(?:and\s+)?who\s+(?P<verb>[a-z]{3,}(?:ed|s)|ran|led|wrote|built|made|paid|gave)\b", re.I)


# "What initial timeout, in milliseconds, ...?", "At what size, in megabytes, ...?", "How many
# petabytes ...?": the unit the figure is asked in, which the question's asked terms then leave out.
_UNIT_ASKED = re.compile(
    r"\b(?:in|(?:measured|expressed|given)\s+in|how\s+many)\s+(?P<unit>(?:milli|micro|nano)?seconds|minutes|hours|"
    r"days|(?:kilo|mega|giga|tera|peta)?bytes|[KMGTP]B|ms)\b",
    re.IGNORECASE,
)
# "What value of alpha (the Greek letter) does Lamport recommend?", "What value of Q do production
# instances use?": the value of a symbol, which "i + alpha" or "Q equally sized partitions" leaves open.
_SYMBOL_VALUE = re.compile(
    r"\bwhat\s+values?\s+(?:of|for)\s+(?P<symbol>(?-i:[A-Z])|[\u0391-\u03a9\u03b1-\u03c9])(?=[\s,?)(])", re.I
)


def states_value_of(text: str, symbol: str) -> bool:
    """Whether *text* gives *symbol* a value: "N = 10", "Q is 1024", "set Q to 512", "a value of 3 for
    N"; not "it can propose commands i + 1 through i + N", which uses the symbol unvalued."""
    sym = re.escape(symbol)
    number = r"\d[\d,.]*"
    verb = r"(?:=|\u2248|:=|\bis\b|\bwas\b|\bequals?\b|\bof\b|\bto\b|\bset\s+to\b)"
    assigned = rf"(?<![\w-]){sym}\s*{verb}\s*(?:about\s+)?{number}"
    named = (
        rf"\b(?:set|sets|setting|chose|choose|use|uses|used)\s+{sym}\s+(?:to|at|as)\s+{number}"
        rf"|{number}\s+(?:for|as)\s+{sym}(?![\w-])"
    )
    return re.search(f"{assigned}|{named}", text) is not None


def _singulars(stems: Iterable[str]) -> set[str]:
    """*stems* without a plural "s" the stemmer left on ("rpcs", "pdfs" are "rpc", "pdf")."""
    return {t.removesuffix("s") for t in stems}


# "How many lines of code ...", "how many medical terms per paper", "the number of GFS clusters":
# the counted noun phrase (up to three words, the last a plural; "of <noun>" after it).
_COUNTED_PHRASE = re.compile(
    r"\b(?:how\s+many|number\s+of)\s+(?P<phrase>(?:[\w-]+\s+){0,2}?[\w-]+s)\b"
    r"(?:\s+of\s+(?:(?:each|every|the|a|an|all|its|their|one)\s+)?(?P<of>[a-z][\w-]+))?",
    re.IGNORECASE,
)
# A number in digits (with a scale letter: "81.1M"), a whole number in words, or a symbol standing
# for one ("more than N nodes").
_COUNT_NUMBER = re.compile(
    rf"(?<![\w.])(?:\d+(?:,\d{{3}})*(?:\.\d+)?[kmb]?|{_WHOLE_NUMBER_WORDS}|hundreds?|thousands?|dozens|(?-i:[B-HJ-Z]))"
    r"(?![\w.])",
    re.IGNORECASE,
)
# Words that label a thing by its number ("line 3", "Figure 4"): a number after them counts nothing.
_LABELLED_BY_NUMBER = re.compile(
    r"\b(?:line|lines|figure|fig|table|section|step|phase|chapter|page|equation|eq|version|v|item|rule|case|"
    r"experiment|study|cluster|node|server|machine|task|job|round|slot|ballot|term|index|id|number|no)\.?\s*$",
    re.IGNORECASE,
)
_OF_THE = re.compile(r"^\s+of(?:\s+(?:the|these|those|our|their|its|all))?(?=\s)", re.IGNORECASE)
_PRONOUNS = frozenset("them these those us".split())
_COUNT_PLAIN = frozenset(
    "of in on at for to from by with and or than per each the a an about over under nearly roughly approximately "
    "around some more less fewer at least most only just total overall".split()
)


def _counted_words(question: str) -> tuple[list[str], str] | None:
    """The stemmed content words of the noun phrase a count question counts and the noun it counts
    "of" ("How many lines of code ...?" -> (["line"], "code"); "How many client processes ...?" ->
    (["client", "process"], "")); None when it counts nothing named (no plural noun after "how
    many"). Terms as `terms` reads them ("cell-days" as itself and its parts)."""
    match = _COUNTED_PHRASE.search(question)
    if match is None:
        return None
    words = match["phrase"].split()
    if words[0].casefold() in _COUNT_PLAIN | {"times", "more", "fewer", "percent"}:
        return None
    if re.fullmatch(_AUX, words[-1].casefold()):
        return None
    stems = [t for t in terms(" ".join(words)) if t not in _FUNCTION_STEMS]
    of = next(iter(terms(match["of"])), "") if match["of"] else ""
    return (stems, of) if stems else None


_FUNCTION_STEMS = frozenset(_stem(w) for w in "the a an of in on per each total average".split())
_PUNCTUATION = re.compile(r"[,.;:()\[\]\n]")


def counts_asked_thing(text: str, question: str) -> bool:
    """Whether *text* counts what *question* counts ("How many lines of code ...?"): a word of the
    counted phrase and the noun it is "of" are in it (stemmed, word classes as one:
    `with_classes`; "lay readers" may be "12 non-expert readers"), and a number in it counts that
    thing, not another: a number that labels ("at line 3", "Figure 4") counts nothing, and a
    number followed by nouns counts them ("two scenarios" is no count of data centers; "90,000
    clients" counts the "client processes" asked about; "1.5M full text LaTeX parses" the papers
    with "full text parsed from LaTeX"). A table row's number is its row's value. True when the
    question counts nothing named."""
    counted = _counted_words(question)
    if counted is None:
        return True
    stems, of = counted
    present = _singulars(with_classes(set(terms(text)), [*stems, of]))
    if not _singulars(stems) & present or (of and of.removesuffix("s") not in present):
        return False
    if _is_row(text):
        return True
    if _PROPORTION_COUNT.search(text) and not _COUNT_NUMBER.search(text):
        return True  # "receives votes from a majority of the servers": a share, no number, counts them
    for number in _COUNT_NUMBER.finditer(text):
        if _LABELLED_BY_NUMBER.search(text[: number.start()]):
            continue
        clause = _PUNCTUATION.split(text[number.end() : number.end() + 80], maxsplit=1)[0]
        # "hundreds of participating teams", "84 of the participants": the things after "of" are counted.
        clause, of_them = _OF_THE.subn("", clause, count=1)
        nouns: list[str] = []
        for word in re.findall(r"[A-Za-z][\w-]*", clause)[:4]:
            if word.casefold() in _COUNT_PLAIN:
                break
            nouns.append(word)
        if not nouns or (of_them and nouns[0].casefold() in _PRONOUNS):
            return True  # "(N = 84)", "84 of them", "totalling 84.": no noun of its own
        if len(nouns) > 1 and nouns[0].casefold().endswith("ing"):
            nouns = nouns[1:]  # "participating teams" are teams
        # Its nouns may be the question's own words for the thing ("1.5M full text LaTeX parses"
        # for "How many papers come with full text parsed from LaTeX?").
        own = _singulars(with_classes(set(terms(" ".join(nouns))), stems))
        if own & _singulars({*stems, *terms(question)}):
            return True
    return False


# "What 99th-percentile latency ...?", "the 99.9th percentile": a percentile the figure must be of.
_PERCENTILE = re.compile(
    r"\b(?P<n>\d+(?:\.\d+)?)(?:st|nd|rd|th)[\s-]*percentile\b|\bp(?P<p>9\d(?:\.\d+)?)\b", re.IGNORECASE
)
_MEDIAN = re.compile(r"\bmedian\b", re.IGNORECASE)
# "How long does X take to generate ...?", "How long did it take to train ...?": the doing timed.
_TAKES_TO = re.compile(
    r"\bhow\s+(?:long|much\s+time)\s+(?:does|did|do|will|would|can)\b[^?]*?\btake\s+to\s+(?P<verb>[a-z]{3,})\b",
    re.IGNORECASE,
)


def states_fact(text: str, analysis: QuestionAnalysis, asked: Sequence[str]) -> bool:
    """Whether *text* holds the kind of fact asked for: for a quantity, a number with one of the
    *asked* terms in the same text (a count, or a number of no telling unit, next to them:
    `number_attached`); for an entity, a name or the asked thing's own noun; for other questions,
    one of the asked terms at all. A number a question that is no quantity question gives is part
    of what it asks: "Which study had 43 students?" is not answered by a sentence that lacks 43."""
    kind = answer_type(analysis)
    given = {(q.low, q.high) for q in quantities(analysis.query)}
    if kind != AnswerType.QUANTITY and given and not given & {(q.low, q.high) for q in quantities(text)}:
        # A quantity question's own numbers say which figure it asks for ("How long did the grep
        # over 10^10 100-byte records take?"), and its answer need not repeat them.
        return False
    text_terms = set(terms(text))
    # People are one thing: "How many people took part?" is near "We recruited 48 participants".
    near = not asked or any(t in with_classes(text_terms, asked) for t in asked)
    if asks_place(analysis.query):  # "Where was the classroom noise study conducted?": "in Lisbon"
        return names_place(text, analysis.query)
    symbol = _SYMBOL_VALUE.search(analysis.query)
    if symbol is not None:
        return states_value_of(text, symbol["symbol"])
    if kind == AnswerType.QUANTITY:
        key_names = _key_names(analysis)
        if len(key_names) >= 2 and not analysis.comparison:
            # "What is the F1 of S2ORC-SciBERT on ChemProt?" is not answered by "... GROBID ... an F1
            # of 0.89": a figure of a sentence naming neither of the things it is asked of ("RPCs"
            # names "RPC"). In a comparison the names may be one side's only ("the MapReduce sort
            # benchmark and ... Bigtable's Google Earth pipeline").
            said = _singulars(text_terms)
            if not any(_singulars(terms(name)) & said for name in key_names):
                return False
        percentile = _PERCENTILE.search(analysis.query)
        n = (percentile["n"] or percentile["p"]) if percentile is not None else ""
        if n and not re.search(
            rf"(?<![\d.]){re.escape(n)}(?:st|nd|rd|th)?[\s-]*(?:percentile|%ile)|\bp{re.escape(n)}\b", text, re.I
        ):
            # "What 99th-percentile latency ...?", "p99 latency": not the average request latency.
            return False
        if _MEDIAN.search(analysis.query) and not re.search(r"\bmedian\b|\b50th[\s-]*percentile\b|\bp50\b", text, re.I):
            return False  # "What median election time ...?" is not answered by "timeouts of 150-300 ms"
        took = _TAKES_TO.search(analysis.query)
        if took is not None and _stem(took["verb"].casefold()) not in text_terms:
            # "How long does Paper Plain take to generate the gists?" is not answered by "participants
            # averaged 5.19 seconds in each paper position": the time of doing what was asked.
            return False
        if _ASKS_BOUND.search(analysis.query) and not (_LIMITS & text_terms or _BOUND.search(text)):
            # "What is the maximum number of files a directory can hold?" asks for a bound, which
            # "files open 12k" (a count seen) does not state; "a limit on file size (256kBytes)" does.
            return False
        measure = asked_measure(analysis.query)
        fit = quantity_fit(text, measure, asked)
        unit = _UNIT_ASKED.search(analysis.query)
        if unit is not None and measure in ("time", "bytes", "size", "length"):
            # "What initial timeout, in milliseconds, does a leader use?" is not answered by "the
            # lease period could be 10 seconds": a figure in the asked unit, by the asked thing's words.
            unit_terms = terms(unit["unit"])
            measured = [t for t in asked_phrase(analysis.query) if t not in unit_terms]
            if measured:
                return fit == 1.0 and number_attached(text, measure, measured)
            # No asked thing ("How often, in seconds, does the master write checkpoints?"): two of
            # the question's terms by the figure, not one that happens to be there ("All of the
            # writes finish about 850 seconds into the computation"); one in a line too short for
            # more (a table row, "Dedupe 41 Minutes").
            others = [t for t in key_stems(analysis) if t not in unit_terms]
            beside = sum(number_attached(text, measure, [t]) for t in others)
            wanted = 1 if len(text.split()) <= 2 * _ATTACHMENT_WORDS else min(2, len(others))
            return fit == 1.0 and beside >= wanted
        # "At what temperature are the oxides synthesised?" is answered by "... at 350 degrees
        # Celsius": a number in the unit of the measure asked for stands for the measure's name.
        in_its_unit = measure in ("time", "length", "bytes", "power", "temperature") and fit == 1.0
        # "What size is each block?" is answered by "... checksums for 64 KB blocks": a size in bytes.
        in_its_unit = in_its_unit or (measure == "size" and any(q.unit in _BYTE_UNITS for q in quantities(text)))
        # "What threshold does the similarity score use?" is answered by "... the highest similarity
        # score above 0.8 is output": a bound on a number states the threshold it does not name.
        as_bound = bool(set(asked) & _BOUND_TERMS) and _BOUND.search(text) is not None
        key = set(key_stems(analysis))
        if measure == "year":
            # "In which year was Chubby first deployed?": the year by the words of what happened.
            happened = [t for t in key_stems(analysis) if t not in _YEAR_WORDS]
            return fit == 1.0 and number_attached(text, measure, happened)
        if measure in ("count", ""):
            # A bare number says nothing of what it counts: it must stand by the asked thing's words.
            near = near and number_attached(text, measure, asked) and states_rate(text, analysis.query)
        if measure == "count" and not counts_asked_thing(text, analysis.query):
            return False
        if measure == "count" and not _NEEDS_COUNT.search(analysis.query) and _share_only(text):
            return False  # "a majority of the servers" is how many a rule needs, not how many there are
        if in_its_unit or as_bound:
            # "What 99th percentile latency did the benchmark show?" is not answered by "... typically
            # less than one second ...": a figure in the asked unit stands for the asked measure only
            # beside the words that say which one it is (the asked phrase's other words).
            named = asked_phrase(analysis.query)
            which = [t for t in named if t not in _MEASURES and t not in _BOUND_TERMS] if _MEASURES & set(named) else []
            in_its_unit = in_its_unit and (not which or bool(with_classes(text_terms, which) & set(which)))
        if (set(asked) & _RATE_MEASURES or _HOW_FAST_DOES.search(analysis.query)) and _PER_TIME.search(text):
            # "What is the throughput?" is answered by "Tiny Raft replicates 12,000 entries per
            # second": a rate per unit of time is a throughput, by the question's other words if any.
            others_asked = key - _RATE_MEASURES
            return not others_asked or bool(others_asked & text_terms)
        return (near and fit >= 0.5) or ((in_its_unit or as_bound) and bool(key & text_terms))
    if kind == AnswerType.ENTITY:
        who = _WHO_DID.match(analysis.query)
        if who and _stem(who["verb"].casefold()) not in with_classes(text_terms, [_stem(who["verb"].casefold())]):
            return False  # "Who calibrated the meters?" is not stated by "The meters (Bruel & Kjaer) were mounted ..."
        # "Which tools does S2ORC use to extract text?" is answered by "We then use GROBID to process
        # each PDF": a name the question lacks, with the question's other terms, not the word "tools";
        # "... tools and tasks for text mining" names no tool.
        question_words = {_stem(w.casefold()) for w in re.findall(r"[\w-]+", analysis.query)}
        new_names = [name for name in names_in(text) if _stem(name.casefold()) not in question_words]
        new_name = bool(new_names)
        thing = _asked_thing_terms(analysis.query)
        if len(thing) >= 2 and thing[-1] in text_terms and not set(thing[:-1]) - _PLAIN_MODIFIERS <= text_terms:
            # "Which encryption algorithm ...?" is not stated by "... rely on distributed algorithms":
            # a sentence naming another kind of the asked thing (its modifier says which kind;
            # "existing" in "Which existing codebase ...?" says none).
            return False
        # "Which filters does S2ORC apply?" is answered by a sentence about its filters; "Which
        # manufacturer made the disks?" is not answered by one about the disks: the asked thing's
        # own noun, or a name, must be there.
        head = thing[-1] if thing else asked_head(analysis.query)
        names_thing = not head or head in with_classes(text_terms, [head])
        if near and names_thing and not _ASKS_A_NAME.search(analysis.query):
            return True
        key = set(key_stems(analysis))
        if not names_thing:
            # A name answers "In which programming language are the components implemented?" when the
            # sentence is about the rest of the question ("components are implemented in Java"); the
            # asked thing's own modifiers do not count ("source" for "Under which open-source license").
            phrase = set(asked_terms(analysis.query))  # the asked phrase, or every term when there is none
            rest = _singulars(key - set(thing) - (phrase if key - phrase else set()))
            said = _singulars(text_terms)  # "PDFs" where the sentence says "PDF"
            lead = _PREPOSITION_FIRST.match(analysis.query) or _PREPOSITION_LAST.match(analysis.query)
            if lead is not None:
                # "In which programming language are the components implemented?": the name comes
                # after that preposition ("implemented in Java", "built on the open-source ScholarPhi
                # codebase"), not anywhere ("... the file system API").
                new_name = any(
                    re.search(rf"\b{lead['prep']}\s+(?:[\w-]+\s+){{0,3}}?{re.escape(n)}", text, re.IGNORECASE)
                    for n in new_names
                )
            elif _ASKS_A_LANGUAGE.search(analysis.query) and _PROGRAMMING_LANGUAGE.search(text):
                new_name = True  # a language is known by its name: "Chubby's C++ client library"
            elif _ASKS_A_NAMED_KIND.search(analysis.query):
                return False  # "Which hash functions ...?" is not stated by "... whether an SSTable might ..."
            return new_name and len(rest & said) >= min(2, len(rest))
        return new_name and (near or len(key & text_terms) >= min(2, len(key)))
    if _WHY.search(analysis.query) and not _REASON.search(text):
        return False  # "Quorbits are small rings." names the thing but gives no reason for it
    if _ASKS_WHAT_CALLED.search(analysis.query):
        # "What is the consensus algorithm at the heart of Paxos called?" is answered by a name the
        # question does not say ("the \u201csynod\u201d algorithm"), not by "The Paxos consensus algorithm ...".
        question_words = {_stem(w.casefold()) for w in re.findall(r"[\w-]+", analysis.query)} | _DETERMINER_STEMS
        found = names_in(text) + _QUOTED_TERM.findall(text) + _CALLED_TERM.findall(text)
        named = [n for n in found if {_stem(w.casefold()) for w in re.findall(r"[\w-]+", n)} - question_words]
        head = asked_head(analysis.query)
        return bool(named) and (not head or head in text_terms)
    used = terms(asked_use(analysis.query))
    if used and kind == AnswerType.OTHER and used[-1] not in text_terms:
        return False  # "What does the pipeline use GROBID for?" is not stated by "The output of this pipeline ..."
    head = asked_head(analysis.query) if kind in (AnswerType.OTHER, AnswerType.DEFINITION) else ""
    # "Under which open-source license ...?" is not stated by "... used as an input source ...":
    # a sentence naming the asked thing's modifier alone does not name the thing.
    if head == _LANGUAGE_STEM and _PROGRAMMING_LANGUAGE.search(text) and _CODED.search(text):
        return True  # "What implementation languages did MapReduce use?": "3800 lines of C++ code"
    if head:
        return head in text_terms
    asked_words = asked_phrase(analysis.query)
    if kind == AnswerType.OTHER and asked_words and asked_words[-1] in _GENERIC_HEADS:
        # "What trouble can removed servers cause?" is stated by "... they can still start new
        # elections": the asked phrase names no thing ("trouble"); the question's other terms do.
        unasked = set(key_stems(analysis)) - set(asked_words)
        return asked_words[-1] in text_terms or len(unasked & text_terms) >= min(2, len(unasked))
    return near


# "How well does the raw click table compress?", "How fast does Zorblax recover after a crash?":
# a measure of what the subject does, the verb the question ends on (before a phrase of place,
# time or comparison).
_HOW_WELL = re.compile(
    r"^\W*(?:and\s+)?how\s+(?:well|fast|quickly|efficiently|accurately)\s+(?:does|do|did|can|could|will|would)\s+"
    r"[\w' -]+?\s(?P<verb>[a-z]{3,})\s*(?=[?.!]|$|(?:in|on|at|for|with|under|when|after|before|than|compared)\b)",
    re.IGNORECASE,
)


# "(i) no title, (ii) no authors": items numbered or lettered in parentheses; "First, ...; second, ...";
# "Topic 1: ... Topic 2: ...".
_NUMBERED_ITEMS = re.compile(
    r"\(\s*(?:i|1|a)\s*\)[^()]{2,}?\(\s*(?:ii|2|b)\s*\)|\bfirst(?:ly)?,\s[^.]{3,}?\bsecond(?:ly)?,"
    r"|\b(?P<noun>[A-Z][a-z]+) 1\b.{3,}?\b(?P=noun) 2\b"
    # "ZooKeeper has two basic ordering guarantees: Linearizable writes: ...": a list announced by
    # its count, then a colon.
    r"|\b(?:two|three|four|five|six|seven|eight|nine|ten|[2-9])\s+(?:[\w-]+\s+){0,3}?[\w-]+s\s*:\s*\S",
    re.IGNORECASE,
)
# "A, B(,) and C": three items or more, the last after "and"/"or".
_ITEM = r"(?:[\w'()-]+\s){0,4}[\w'()-]+"  # up to five words
_LISTED_ITEMS = re.compile(rf"\b{_ITEM},\s{_ITEM}(?:,\s{_ITEM})*,?\s(?:and|or)\s[\w'()-]+")
# The last word of the phrase a "what X"/"which X" question asks with, when plural ("filters").
_PLURAL_WORD = re.compile(r"^[a-z][a-z-]*[^su\W]s$")
LISTED_FIT = 0.5


@lru_cache(maxsize=4096)
def asks_several(question: str) -> bool:
    """Whether *question* asks for several things by a plural noun ("What filters does S2ORC
    apply?", "Which components does a tablet server have?", "What are the steps of ...?"): its
    answer is a list."""
    for pattern in (_WHAT_X, _WHAT_IS_X, _WHICH_X):
        match = pattern.search(question)
        if match is not None:
            words = re.findall(r"[A-Za-z-]+", match.group(1))
            return bool(words) and _PLURAL_WORD.match(words[-1]) is not None
    return False


def enumeration_fit(text: str, head: str = "") -> float:
    """How plainly *text* lists several items: 1.0 for numbered or lettered items ("(i) no title,
    (ii) no authors"), "First, ...; second, ...", "Topic 1 ... Topic 2" or a list announced by its
    count ("two basic ordering guarantees: ..."), LISTED_FIT for three
    items or more joined by commas and a final "and"/"or", else 0.0. With *head* (a stemmed term,
    see `terms`), only a sentence naming it lists the asked things: "We further filter paper
    clusters to remove papers with (i) no title, ..." lists filters; "(1) Machines are typically
    dual-processor ..." lists no hard drives."""
    if head and head not in terms(text):
        return 0.0
    if _NUMBERED_ITEMS.search(text):
        return 1.0
    return LISTED_FIT if _LISTED_ITEMS.search(text) else 0.0


def _type_match(text: str, analysis: QuestionAnalysis, question_terms: set[str], asked: Sequence[str]) -> float:
    """How well *text* fits the answer type; *asked* is `asked_terms` of the query (what a count
    counts). A question asking for several things (`asks_several`) is fitted by a sentence listing
    them (`enumeration_fit`) as well as by its answer type."""
    fit = _answer_type_fit(text, analysis, question_terms, asked)
    kind = answer_type(analysis)
    if kind in (AnswerType.OTHER, AnswerType.ENTITY) and asks_several(analysis.query):
        return max(fit, enumeration_fit(text, asked_head(analysis.query)))
    return fit


def _answer_type_fit(text: str, analysis: QuestionAnalysis, question_terms: set[str], asked: Sequence[str]) -> float:
    if asks_place(analysis.query):
        return 1.0 if names_place(text, analysis.query) else 0.0
    kind = answer_type(analysis)
    if kind == AnswerType.QUANTITY:
        measure = asked_measure(analysis.query)
        fit = quantity_fit(text, measure, asked)
        action = _HOW_WELL.match(analysis.query)
        # "How well does the raw click table compress?": the figure goes with compressing.
        asked = [_stem(action["verb"].casefold())] if action is not None else asked
        if fit == 1.0 and not number_attached(text, measure, asked, by_unit=False):
            # "This table compresses to 14% of its original size." for "How well does the raw click
            # table compress?" beats "The raw click table (~200 TB) maintains a row per session.":
            # a figure standing by the asked words fits better than one elsewhere in the sentence.
            return UNATTACHED_FIT
        return fit
    if kind == AnswerType.ENTITY:
        names = {_stem(n.lower()) for n in names_in(text)}
        return 1.0 if names - question_terms else 0.0
    if kind == AnswerType.DEFINITION:
        if _defines_term(text, _definienda(analysis)):
            return 1.0
        return 0.5 if _DEFINES.search(text) else 0.0
    if kind == AnswerType.MECHANISM:
        if not _EXPLAINS.search(text):
            return 0.0
        # "Dynamo uses vector clocks in order to capture causality ...": the means, named.
        means = _USES_THING.search(text)
        return 1.0 if means is not None and set(terms(means["thing"])) - question_terms else 0.6
    if kind == AnswerType.YES_NO:
        return 0.5 if _POLAR.search(text) else 0.0
    if _ASKS_CONDITION.match(analysis.query):
        # "When are processes allowed to enter the barrier?": "Processes can enter the barrier when ..."
        return 1.0 if _STATES_CONDITION.search(text) else 0.0
    use = _use_asked(analysis.query)
    if use is not None:
        # "What is GROBID used for?": "We then use GROBID to process each PDF."
        return 1.0 if states_use(text, use["thing"]) else 0.0
    return 0.0


# "What is GROBID used for?", "What are the shadow masters used for in GFS?"
_ASKS_USE = re.compile(r"^\W*what\s+(?:is|are|was|were)\s+(?:the\s+)?(?P<thing>[^?]+?)\s+used\s+for\b", re.I)
# "What does the pipeline use GROBID for?": the same, with who uses it.
_ASKS_USE_BY = re.compile(r"^\W*what\s+(?:does|do|did)\s+.+?\s+use\s+(?:the\s+)?(?P<thing>[^?]+?)\s+for\b", re.I)


def _use_asked(question: str) -> re.Match[str] | None:
    """*question* read as asking what a thing is used for (`_ASKS_USE`, `_ASKS_USE_BY`), or None."""
    return _ASKS_USE.match(question) or _ASKS_USE_BY.match(question)


def asked_use(question: str) -> str:
    """The thing *question* asks the use of, without where it is ("What is a double barrier in
    ZooKeeper used for?" -> "a double barrier"); "" for a question of another form."""
    use = _use_asked(question)
    return re.sub(r"\s+(?:in|of|on|at|from|by|with)\s.*$", "", use["thing"]) if use is not None else ""


def states_use(text: str, thing: str) -> bool:
    """Whether *text* says what *thing* is used for: "We then use GROBID to process each PDF",
    "GROBID is used to parse ...", "... relies on GROBID for ..."."""
    name = re.escape(thing)
    return (
        re.search(
            rf"\b(?:use[sd]?|using|employ(?:s|ed)?|run(?:s|ning)?|relies\s+on|rely\s+on)\s+(?:the\s+|a\s+|an\s+)?{name}\b"
            rf"[^.;]{{0,60}}?\b(?:to|for)\s+\w+|\b{name}\b[^.;]{{0,40}}?\b(?:is|are|was|were)\s+used\s+(?:to|for)\b",
            text,
            re.IGNORECASE,
        )
        is not None
    )


# A question asking under which condition a thing happens (present tense, not "When was X built?").
_ASKS_CONDITION = re.compile(
    r"^\W*(?:and\s+|so\s+)?when\s+(?:is|are|can|could|do|does|should|must|will|may|might)\b", re.IGNORECASE
)
_STATES_CONDITION = re.compile(r"\b(?:when|whenever|once|if|until|unless|as soon as)\b", re.IGNORECASE)


def term_weights(candidates: Sequence[Sentence], question_terms: Sequence[str]) -> dict[str, float]:
    """IDF of each question term over *candidates* (log(1 + N / (1 + df))): a term every
    candidate has says little about which one answers."""
    df: Counter[str] = Counter()
    for candidate in candidates:
        df.update(set(terms(candidate.matchable)) & set(question_terms))
    total = len(candidates)
    return {t: math.log(1 + total / (1 + df[t])) for t in dict.fromkeys(question_terms)}


# Per candidate: (lexical, type_match, novelty, states), see `cheap_scores`.
CheapScores = list[tuple[float, float, float, bool]]


def first_mentions(candidates: Sequence[Sentence], asked: Sequence[str]) -> list[set[str]]:
    """Per candidate, the *asked* terms (stemmed, see `terms`) whose first mention in its passage
    it holds (empty for most): a paper introduces and defines a thing where it first names it
    ("We allow the user to specify an optional Combiner function that does partial merging ..."),
    and later sentences only use it. A window holds what its first sentence holds."""
    first: dict[tuple[int, str], tuple[int, int]] = {}
    for candidate in candidates:
        if candidate.parts != 1:
            continue
        where = (candidate.block, candidate.position)
        for term in set(terms(candidate.text)) & set(asked):
            key = (candidate.n, term)
            if key not in first or where < first[key]:
                first[key] = where
    out = []
    for candidate in candidates:
        where = (candidate.block, candidate.position)
        own = set(terms(candidate.text))
        out.append({term for term in asked if term in own and first.get((candidate.n, term)) == where})
    return out


def names_paper(candidate: Sentence, paper_id: int, analysis: QuestionAnalysis) -> bool:
    """Whether *candidate* names paper *paper_id* as the question does (`analysis.related_names`,
    compared by `terms`): "Bigtable uses the distributed Google File System (GFS) to store log and
    data files" names GFS."""
    own = set(terms(candidate.matchable))
    names = [set(terms(name)) for pid, name in analysis.related_names if pid == paper_id]
    return any(name and name <= own for name in names)


def names_another(candidate: Sentence, analysis: QuestionAnalysis) -> bool:
    """Whether *candidate* names a paper of `analysis.related_names` other than its own."""
    others = {pid for pid, _ in analysis.related_names if pid != candidate.paper_id}
    return any(names_paper(candidate, pid, analysis) for pid in others)


def relation_stated_for(paper_id: int, chosen: Sequence[Scored], analysis: QuestionAnalysis) -> bool:
    """Whether a quote in *chosen* that states the asked relation involves paper *paper_id*: it
    is that paper's own, or it names the paper. A relation is stated from either side ("NightOwl
    reuses the GlowNet architecture" answers how NightOwl builds on GlowNet for both papers)."""
    return any(
        s.states and (s.candidate.paper_id == paper_id or names_paper(s.candidate, paper_id, analysis)) for s in chosen
    )


def cheap_scores(candidates: Sequence[Sentence], analysis: QuestionAnalysis) -> CheapScores:
    """Per candidate, without embeddings: `(lexical, type_match, novelty, states)`; lexical and
    novelty in [0, 1] (see `score_candidates`)."""
    question_terms = list(key_stems(analysis)) or terms(analysis.query)
    weights = term_weights(candidates, question_terms)
    mass = sum(weights.values()) or 1.0
    qset = set(question_terms)
    # The asked terms without the papers' own names (which key terms leave out): "How does GFS use
    # leases?" asks about leases, and every GFS sentence names GFS.
    all_asked = asked_terms(analysis.query)  # once, not per candidate
    asked = [t for t in all_asked if t in qset] or all_asked
    introduces = first_mentions(candidates, asked)
    out = []
    # The bonus for a first mention goes by how rare its term is among the candidates: the first
    # "node" of every Dynamo passage introduces nothing; the first "tokens" does.
    top_weight = max(weights.values(), default=0.0) or 1.0
    classes = term_classes(analysis)
    for candidate, intro in zip(candidates, introduces, strict=True):
        own = terms(candidate.text)
        # "How many participants ...?" matches "We recruited 84 adolescents".
        present = with_classes(set(terms(candidate.matchable)), qset, classes)
        lexical = sum(w for t, w in weights.items() if t in present) / mass
        novelty = sum(t not in qset for t in own) / len(own) if own else 0.0
        type_match = _type_match(candidate.text, analysis, qset, all_asked)
        if intro and answer_type(analysis) != AnswerType.QUANTITY:
            # Where a passage first names the asked thing it says what it is or does.
            rarity = max(weights.get(t, top_weight) for t in intro) / top_weight
            type_match = max(type_match, 0.0) + INTRO_BONUS * (0.5 + 0.5 * rarity)
        # A sentence about the paper's own sections names the topic and states nothing about it.
        states = any(states_fact(text, analysis, asked) for text in candidate.readings) and not is_signpost(
            candidate.text
        )
        if analysis.related_names and not names_another(candidate, analysis):
            states = False  # "GFS provides a location independent namespace" relates GFS to nothing
        out.append((lexical, type_match, novelty, states))
    return out


# A row's label: the words before its first numeric cell ("Not English" of "Not English 15.2M").
_ROW_LABEL = re.compile(rf"^(?P<label>[^\W\d_][^\n]*?)(?=(?:\s+{_CELL}){{1,}}\s*$)")


def row_named(row: str, question: str) -> bool:
    """Whether *question* names *row*'s label as a phrase ("the 'Not English' filter" names "Not
    English 15.2M"; "How many papers ...?" does not name "Papers w/ DOIs 52.2M"): a label of two
    words or more said in the question as it stands (one word, "I-VILA", names a system that rows
    of several tables give)."""
    match = _ROW_LABEL.match(row.strip())
    if match is None or len(match["label"].split()) < 2:
        return False
    label = match["label"].strip()
    return re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", question, re.IGNORECASE) is not None


def score_candidates(
    candidates: Sequence[Sentence],
    analysis: QuestionAnalysis,
    dense: Sequence[float] | np.ndarray,
    *,
    cheap: CheapScores | None = None,
) -> list[Scored]:
    """Score each candidate: W_DENSE * cosine + W_LEXICAL * lexical + W_TYPE * answer-type match +
    W_NOVELTY * novelty, less SIGNPOST_PENALTY for a sentence about the paper's sections (`is_signpost`),
    less ECHO_PENALTY when under a third of its terms are new (it restates the
    question), less WINDOW_PENALTY for a two-sentence window (one sentence that holds everything is
    the better quote). *dense* holds one cosine similarity per candidate (0 when not embedded);
    *cheap* the candidates' `cheap_scores` when the caller has them already."""
    scored = []
    cheap = cheap_scores(candidates, analysis) if cheap is None else cheap
    for candidate, (lexical, type_match, novelty, states), cosine in zip(candidates, cheap, dense, strict=True):
        score = W_DENSE * max(0.0, float(cosine)) + W_LEXICAL * lexical + W_TYPE * type_match + W_NOVELTY * novelty
        if novelty < 1 / 3:
            score -= ECHO_PENALTY
        if candidate.parts > 1:
            score -= WINDOW_PENALTY
        if is_signpost(candidate.text):
            score -= SIGNPOST_PENALTY
        if (candidate.paper_id, candidate.page) in analysis.previous_pages:
            score += BESIDE_BONUS
        if any(candidate.text in quote for quote in analysis.said_before):
            score -= SAID_PENALTY
        if candidate.kind == "line" and row_named(candidate.text, analysis.query):
            score += ROW_NAMED_BONUS
        scored.append(Scored(candidate, score, lexical, float(cosine), type_match, novelty, states))
    return scored


def embed_candidates(
    candidates: Sequence[Sentence],
    analysis: QuestionAnalysis,
    query_embedding: np.ndarray,
    embed: Callable[[Sequence[str]], np.ndarray],
    *,
    cheap: CheapScores | None = None,
    known: Callable[[Sequence[str]], dict[str, np.ndarray]] | None = None,
) -> np.ndarray:
    """Cosine similarity of each candidate to the question (*query_embedding*, shape (dimension,)).
    Sentences whose vectors *known* already holds (indexing pre-fills them, `chat.prefill`) are all
    scored: a lookup, not model time. Of the rest, only the sentences of the best `MAX_EMBEDDED`
    candidates by the cheap scores (*cheap*, computed when not given) are embedded with *embed*,
    the papers taking turns (others score 0). A window's vector is the normalised sum of its two
    sentences' vectors, so windows cost no extra embedding. Returns shape (len(candidates),)."""
    cheap = cheap_scores(candidates, analysis) if cheap is None else cheap
    single = list(dict.fromkeys(c.text for c in candidates if c.parts == 1))
    held = known(single) if known is not None and single else {}
    ranked = sorted(range(len(candidates)), key=lambda i: -(W_LEXICAL * cheap[i][0] + W_TYPE * cheap[i][1]))
    # Papers take turns (best cheap score first), so a comparison's second paper has its best
    # sentences embedded too, not only the leading paper's.
    queues: dict[int, list[int]] = {}
    for i in ranked:
        queues.setdefault(candidates[i].paper_id, []).append(i)
    order = [i for turn in itertools.zip_longest(*queues.values()) for i in turn if i is not None]
    wanted: dict[str, None] = {}
    parts_of: dict[int, list[str]] = {}
    sentence_texts = {(c.n, c.block, c.position): c.text for c in candidates if c.parts == 1}
    for i in order:
        c = candidates[i]
        parts = [c.text] if c.parts == 1 else [sentence_texts.get((c.n, c.block, c.position + k), "") for k in (0, 1)]
        if any(p not in wanted and p not in held for p in parts) and len(wanted) >= MAX_EMBEDDED:
            continue
        parts_of[i] = parts
        wanted.update(dict.fromkeys(p for p in parts if p not in held))
    texts = [t for t in wanted if t]
    vectors = dict(held)
    if texts:
        vectors.update(zip(texts, embed(texts), strict=True))
    cosines = np.zeros(len(candidates), dtype=np.float32)
    for i, parts in parts_of.items():
        found = [vectors[p] for p in parts if p in vectors]
        if found:
            vector = np.sum(found, axis=0)
            norm = float(np.linalg.norm(vector)) or 1.0
            cosines[i] = float(vector @ query_embedding) / norm
    return cosines


# --- choosing and writing -----------------------------------------------------------------------


def _overlaps(a: Sentence, b: Sentence) -> bool:
    if (a.n, a.block) != (b.n, b.block) or a.kind == "line" or b.kind == "line":
        return a.text in b.text or b.text in a.text
    return a.position < b.position + b.parts and b.position < a.position + a.parts


def _without_repeats(chosen: Sequence[Scored]) -> list[Scored]:
    """*chosen* with each sentence of a paper quoted once: overlapping chunks hold the same
    sentences, so two windows from two passages may share one ("A. S." and "S. B."); the later
    quote keeps only what is new ("B."), and a quote with nothing new goes. The same sentence in
    two papers is two papers' evidence (Bigtable and MapReduce describe one benchmark network in
    the same words), quoted for each."""
    out: list[Scored] = []
    said: set[tuple[int, str]] = set()
    for s in chosen:
        sentences = split_sentences(s.candidate.text) if s.candidate.kind != "line" else [s.candidate.text]
        paper = s.candidate.paper_id
        new = [sentence for sentence in sentences if (paper, sentence) not in said]
        if not new:
            continue
        if len(new) < len(sentences):
            kind = s.candidate.kind if len(new) > 1 else "sentence"
            s = replace(s, candidate=replace(s.candidate, text=" ".join(new), parts=len(new), kind=kind))
        said.update((paper, sentence) for sentence in sentences)
        out.append(s)
    return out


def choose_evidence(scored: Sequence[Scored], analysis: QuestionAnalysis) -> list[Scored]:
    """The quotes, best paper first: each quoted paper's best candidate (and, for the first paper,
    a second close one not overlapping it, that states the fact when the first does). A paper is
    quoted when its best candidate reaches RELATIVE_BAR of the overall best; when the question
    names papers, the named ones are quoted (and others only if it compares or none of them has
    evidence); a comparison quotes every named paper and every paper over the bar, the named papers
    whose candidates state the fact first, a named one none of whose candidates does once only."""
    ranked = sorted(
        (s for s in scored if s.score >= MIN_SCORE or s.candidate.paper_id in analysis.named_paper_ids),
        key=lambda s: (-s.states, -s.score),
    )
    by_paper: dict[int, list[Scored]] = {}
    for s in ranked:
        by_paper.setdefault(s.candidate.paper_id, []).append(s)
    if not by_paper:
        return []
    best = max(s.score for s in ranked)
    named = [pid for pid in analysis.named_paper_ids if pid in by_paper]
    # A paper's best score (its first item is the best that states the fact, which may score lower).
    over_bar = sorted(
        (pid for pid, items in by_paper.items() if max(s.score for s in items) >= RELATIVE_BAR * best),
        key=lambda pid: (-by_paper[pid][0].states, -by_paper[pid][0].score),
    )
    if named and not analysis.comparison:
        # A name two papers share ("Paxos") names both: quote those whose evidence is close to the best.
        best_named = max(by_paper[pid][0].score for pid in named)
        papers = [pid for pid in named if by_paper[pid][0].score >= RELATIVE_BAR * best_named]
        papers.sort(key=lambda pid: (-by_paper[pid][0].states, -by_paper[pid][0].score))
    else:
        papers = list(dict.fromkeys([*named, *over_bar]))
        if named and analysis.comparison:
            papers.sort(key=lambda pid: not by_paper[pid][0].states)  # stable: a paper stating it first
    chosen: list[Scored] = []
    for rank, pid in enumerate(papers):
        first = by_paper[pid][0]
        picked = [first]
        limit = MAX_QUOTES_FIRST if rank == 0 else MAX_QUOTES_OTHER
        if pid in named and analysis.comparison and not first.states:
            limit = 1  # a compared paper none of whose candidates states the fact: its closest quote
        for other in by_paper[pid][1:]:
            if len(picked) >= limit:
                break
            close = other.score >= SECOND_QUOTE_BAR * first.score and other.states >= first.states
            if close and not any(_overlaps(other.candidate, p.candidate) for p in picked):
                picked.append(other)
        chosen.extend(picked)
    if analysis.related_names:
        # A related paper whose side of the relation another quote states needs no quote that does not.
        chosen = [s for s in chosen if s.states or not relation_stated_for(s.candidate.paper_id, chosen, analysis)]
    return chosen


# A sub-question of a compound question quotes at most this many sentences per paper.
MAX_QUOTES_PART = 2


@dataclass(frozen=True)
class PartEvidence:
    """The quotes for a compound question (`choose_part_evidence`) and the sub-questions
    (`QuestionAnalysis.parts`) none of whose chosen quotes states what they ask."""

    chosen: list[Scored]
    unanswered: list[QuestionAnalysis]


def choose_part_evidence(parts: Sequence[tuple[Sequence[Scored], QuestionAnalysis]]) -> PartEvidence:
    """The quotes for a compound question: `choose_evidence` for each sub-question (its scored
    candidates and its analysis, in the question's order), at most MAX_QUOTES_PART per paper each,
    merged in that order without a quote that overlaps one already chosen. "What is an SSTable and
    what does it provide?" quotes the definition and the sentence on what it provides, where one
    ranking for the whole question would quote two sentences near its echo. A sub-question is
    unanswered when none of its quotes (counting one another part already chose) states its fact."""
    chosen: list[Scored] = []
    unanswered: list[QuestionAnalysis] = []
    for scored, analysis in parts:
        per_paper: Counter[int] = Counter()
        stated = False
        for s in choose_evidence(scored, analysis):
            if per_paper[s.candidate.paper_id] >= MAX_QUOTES_PART:
                continue
            stated = stated or bool(s.states)
            if any(_overlaps(s.candidate, c.candidate) for c in chosen):
                continue
            chosen.append(s)
            per_paper[s.candidate.paper_id] += 1
        if not stated:
            unanswered.append(analysis)
    return PartEvidence(chosen, unanswered)


def joined_with_and(items: Sequence[str]) -> str:
    """*items* as a list in prose: "A", "A and B", "A, B and C"."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# A question ending on its main verb: after do-support ("How many tokens does the corpus contain?")
# or a participle after "is"/"was", perhaps with its preposition ("What licence is S2ORC released under?").
# The words between are the subject alone: no preposition ("What does the master store for each
# chunk?" ends on a noun).
_SUBJECT_WORD = r"\s+(?!(?:for|of|in|on|to|with|from|by|at|about|per|each|when|if)\b)[\w'\u2019-]+"
_STRANDED = r"(?:under|for|in|on|with|by|from|to|of|at|about|into|as)"
_FINAL_VERB = re.compile(
    rf"\b(?:does|do|did)\b(?:{_SUBJECT_WORD}){{1,6}}?\s+[a-z]+\s*\?\s*$"
    rf"|\b(?:is|are|was|were)\b(?:{_SUBJECT_WORD}){{1,6}}?\s+[a-z]+(?:ed|en)(?P<stranded>\s+{_STRANDED})?\s*\?\s*$"
    # "... who decides where replicas go?": an embedded where-clause closing on its verb.
    rf"|\bwhere\s+(?!(?:is|are|was|were|do|does|did|can|could|will|would|should)\b)"
    rf"(?:the\s+|a\s+|an\s+)?[\w-]+(?:\s+[\w-]+)?\s+[a-z]+\s*\?\s*$"
)


# "How large is the S2ORC corpus in gigabytes?": a measure asked by its adjective, whose words are
# all asked terms; the not-stated line restates it as a clause ("how large the S2ORC corpus is in
# gigabytes", "how often heartbeats are sent to the master").
_HOW_ADJECTIVE_IS = re.compile(
    r"^\s*(?:and\s+|but\s+|so\s+)?how\s+(?P<adjective>large|big|small|long|short|fast|slow|often|old|far|high|"
    r"low|heavy|wide|deep|frequent)\s+(?P<verb>is|are|was|were)\s+"
    r"(?P<subject>(?:(?:the|a|an|its|their|each|every)\s+)?\S.*?)"
    r"(?:\s+(?P<participle>[a-z]+(?:ed|en)|sent|kept|held|made|built|run|spent|paid|lost|written))?"
    r"(?P<rest>(?:,?\s+(?:in|on|at|for|during|when|compared|per|to|from|by|with|before|after)\b.*?)?)\s*\?*\s*$",
    re.IGNORECASE,
)


# Words a noun phrase asked about follows: "What *percentage*", "how many *annotators*", "the *vocabulary size*".
_BEFORE_NOUN = frozenset("what which whose the a an many much its their his her each every per of".split())
_DETERMINERS = frozenset("the a an its their his her this that these those".split())


def _asked_noun_phrase(words: Sequence[str], asked: set[str]) -> str:
    """The question's asked words (*words* whose stem is in *asked*) when they are one run after a
    determiner or "what"/"how many" ("vocabulary size" in "What is the vocabulary size of ...?"),
    else "": "train" in "How long did it take to train ...?" or "removes" in "Which of them removes
    the most?" is a verb, and "the train asked about" is no English."""
    at = [i for i, word in enumerate(words) if _stem(word.lower()) in asked]
    if not at or at != list(range(at[0], at[-1] + 1)) or at[0] == 0:
        return ""
    # A past tense closing the run, with words after it, is the question's verb: "Which company
    # developed ZooKeeper?" asks about the company.
    verb = next((k for k in range(1, len(at)) if len(words[at[k]]) >= 5 and words[at[k]].endswith("ed")), None)
    if verb is not None and at[verb] + 1 < len(words):
        at = at[:verb]
    # A determiner after the run makes its last word a verb: "the filters removes the most".
    verb_after = at[-1] + 1 < len(words) and words[at[-1] + 1].lower() in _DETERMINERS
    after_determiner = words[at[0] - 1].lower() in _BEFORE_NOUN
    return " ".join(words[i] for i in at) if after_determiner and not verb_after else ""


def _question_words(analysis: QuestionAnalysis) -> list[str]:
    """The query's words, without a closing verb ("... does the corpus contain?") or its stranded
    preposition ("... is S2ORC released under?"): a verb, no topic."""
    words = re.findall(r"[\w-]+", analysis.query)
    final_verb = _FINAL_VERB.search(analysis.query)
    if final_verb:
        words = words[: -2 if final_verb["stranded"] else -1]
    return words


def asked_wording(analysis: QuestionAnalysis, missing: Sequence[str] = ()) -> str:
    """What was asked, worded for a not-stated line: "anything about Zab" (*missing* names), "a
    figure for the vocabulary size asked about", "how large the corpus is", "the company asked
    about", else the question itself: "an answer to “How does Raft ...?”"."""
    if missing:
        years = [name for name in missing if _ASKED_YEAR.fullmatch(name)]
        names = [name for name in missing if name not in years]
        about = [f"anything about {joined_with_and(names)}"] if names else []
        return " or ".join(about + ([f"anything for {joined_with_and(years)}"] if years else []))
    noun = _asked_noun_phrase(_question_words(analysis), set(asked_terms(analysis.query)))
    kind = answer_type(analysis)
    wanted = f"the {noun} asked about" if noun else "what was asked"
    how_adjective = _HOW_ADJECTIVE_IS.match(analysis.query)
    if kind == AnswerType.QUANTITY and how_adjective:
        clause = how_adjective.groupdict()
        verb = " ".join(filter(None, (clause["verb"], clause["participle"])))
        wanted = f"how {clause['adjective']} {clause['subject']} {verb}{clause['rest']}".rstrip(",")
    elif kind == AnswerType.QUANTITY and noun:
        wanted = f"a figure for the {noun} asked about"
    elif kind not in (AnswerType.QUANTITY, AnswerType.ENTITY, AnswerType.DEFINITION) or not noun:
        # How, why, whether, or asked words that are no noun phrase ("the S2ORC handle failures",
        # "a figure for the train asked about"): the question itself says what was asked.
        body = analysis.query.strip().rstrip("?.!\uff1f\uff01\u3002 ")
        mark = "\uff1f" if is_cjk(body) else "?"  # a CJK question ends in the fullwidth mark
        wanted = f"an answer to “{body}{mark}”"
    return wanted


def not_stated_in(analysis: QuestionAnalysis, titles: Sequence[str]) -> str:
    """The answer to a question naming papers (*titles*) none of whose passages was relevant
    enough to quote: "No passage of “The Chubby lock service ...” states the university asked
    about." The project covers the paper, so "the papers don't cover this question" would mislead."""
    named = joined_with_and([f"“{title}”" for title in titles])
    return f"No passage of {named} states {asked_wording(analysis)}: none was relevant enough to quote."


def not_stated_sentence(analysis: QuestionAnalysis, candidates: Sequence[Sentence], missing: Sequence[str]) -> str:
    """ "The papers discuss X but do not state Y.": X the question's terms the candidates contain,
    Y what was asked (`asked_wording`: *missing* names, or the asked terms)."""
    present = set()
    for candidate in candidates:
        present.update(terms(candidate.text))
    words = _question_words(analysis)
    asked = set(asked_terms(analysis.query))

    def phrases(keep: Callable[[str], bool]) -> list[str]:
        """Runs of adjacent question words that *keep* admits, as phrases ("full text", not "full and text")."""
        runs: list[list[str]] = [[]]
        for k, word in enumerate(words):
            # A verb after "to" ("How many GPUs were used to evaluate Raft?") is no topic: "Raft" is
            # (a name after it is: "How does NightOwl relate to S2ORC?").
            if keep(word) and not (k and words[k - 1].lower() == "to" and word.islower()):
                runs[-1].append(word)
            elif runs[-1]:
                runs.append([])
        return list(dict.fromkeys(" ".join(run) for run in runs if run))

    def discussed(word: str) -> bool:
        if _stem(word.lower()) not in present:
            return False
        # A capitalised word inside the question is part of a name ("Paper Plain"), even one that
        # otherwise only asks ("paper").
        return word.lower() not in _ASKING | _RELATING or (word[:1].isupper() and word != words[0])

    topic = phrases(lambda w: discussed(w) and _stem(w.lower()) not in asked) or phrases(discussed)
    subject = joined_with_and(topic[:4]) if topic else "related topics"
    return f"The papers discuss {subject} but do not state {asked_wording(analysis, missing)}."


def _acronym(title: str) -> str:
    words = re.findall(r"[A-Z][\w'-]*", title)
    return "".join(w[0] for w in words if w.lower() not in {"the", "a", "an", "of", "for", "on", "in"}).casefold()


def missing_names(
    analysis: QuestionAnalysis, texts: Sequence[str], titles: Sequence[str], mentioned: Collection[str] = ()
) -> list[str]:
    """Names in the question (`_named_things`) that none of *texts* (the passages) and none of the
    *titles* contains, nor a title's acronym ("GFS" for "The Google File System"), nor *mentioned*
    (names the caller found elsewhere in the papers' text: "the Yahoo! coordination kernel" is
    ZooKeeper, whose paper says Yahoo! on other pages than the passage), and the years it
    asks about ("... receive in 2023?") that no passage names: a figure from another year does not
    answer it. A name of hyphenated names ("the Fischer-Lynch-Paterson result") is there when most
    of its names are ("Fischer, Lynch, and Patterson"). A follow-up's rewrite is held only to the
    names its own words say: "What's the equivalent rule on the ZooKeeper side?" after a question
    about Chubby's KeepAlives asks about ZooKeeper's rule, which need not be called a KeepAlive."""
    haystack = " ".join(texts).casefold() + " " + " ".join(titles).casefold()
    elsewhere = {name.casefold() for name in mentioned}
    acronyms = {_acronym(title) for title in titles}
    # Question analysis leaves the names of the papers a question names ("Raft", "Ongaro") out of its
    # key terms: such a name says which paper to read, not a thing the passages must name.
    key = set(key_stems(analysis))
    haystack_terms = set(terms(haystack))
    return [
        name
        for name in _named_things(analysis.query)
        if (not analysis.rewritten or name.casefold() in analysis.question.casefold())
        and name.casefold() not in haystack
        and name.casefold().removesuffix("s") not in haystack
        and not (terms(name) and set(terms(name)) <= haystack_terms)  # "PDFs" where passages say "PDF"
        and name.casefold() not in acronyms
        and name.casefold() not in elsewhere
        and not _most_names_in(name, haystack)
        and (not key or any(t in key for t in terms(name)))
    ] + [year for year in _ASKED_YEAR.findall(analysis.query) if not re.search(rf"\b{year}\b", haystack)]


def _most_names_in(name: str, haystack: str) -> bool:
    """Whether *name* is hyphenated names ("Fischer-Lynch-Paterson", each capitalised) most of which
    the case-folded *haystack* holds as words."""
    parts = name.split("-")
    if len(parts) < 2 or not all(part[:1].isupper() and len(part) > 1 for part in parts):
        return False
    held = sum(re.search(rf"\b{re.escape(part.casefold())}\b", haystack) is not None for part in parts)
    return held * 2 > len(parts)


# Prepositions whose phrase says which figure is asked for: "across *continents*", "on a
# *wide-area network*" ("to" is left out: "to extract text" is a purpose, no qualifier).
_QUALIFYING = frozenset(
    "of in on for with from at per about into over under across during within between among".split()
)


def _phrase_words(question: str) -> list[str]:
    """The words of *question*'s prepositional phrases (`_QUALIFYING`), up to three after each
    preposition, determiners skipped, within one sentence of the question; a phrase that is a name
    ends with it ("in S2ORC end up not linked": "S2ORC")."""
    out: list[str] = []
    for sentence in re.split(r"[?.!]+", question):
        words = re.findall(r"[\w-]+", sentence)
        for k, word in enumerate(words):
            if word.casefold() not in _QUALIFYING:
                continue
            phrase = [w for w in words[k + 1 : k + 5] if w.casefold() not in _DETERMINERS]
            for n, w in enumerate(phrase[:3]):
                if w.casefold() in _QUALIFYING or re.fullmatch(_AUX, w.casefold()):
                    break
                if n and phrase[0][:1].isupper() and not w[:1].isupper():
                    break
                out.append(w)
    return out


def missing_qualifiers(analysis: QuestionAnalysis, texts: Sequence[str]) -> list[str]:
    """Words of a quantity or entity question, as it writes them, that none of *texts* (the
    passages) contains, when they say which figure or name is asked for: a modifier of the asked
    thing ("font" in "Which font size does Paper Plain use ...?", where the passages give only
    sample sizes), or, for a quantity, two words or more of its prepositional phrases ("continents",
    "wide-area" in "What leader election latency does Raft achieve across continents on a wide-area
    network?"). A figure or a name the passages give is then about something else. [] for other
    questions."""
    kind = answer_type(analysis)
    if kind not in (AnswerType.QUANTITY, AnswerType.ENTITY):
        return []
    present = set(terms(" ".join(texts)))
    key = set(key_stems(analysis)) - _ASKING

    def absent(word: str) -> bool:
        stems = set(terms(word))
        if not stems or not stems <= key or word.isdigit() or word.casefold() in _ASKING:
            return False
        # "PDFs" where passages say "PDF"; "maximum" where they say "limit".
        return not (stems | set(terms(word.removesuffix("s")))) & with_classes(present, stems, (_LIMITS,))

    query = _QUOTED_TITLE.sub(" ", analysis.query)
    modifiers = set(_asked_thing_terms(analysis.query)[:-1]) - _PLAIN_MODIFIERS
    unnamed = [w for w in re.findall(r"[\w-]+", query) if set(terms(w)) & modifiers and absent(w)]
    in_phrases = [w for w in _phrase_words(query) if absent(w)]
    if len(in_phrases) < 2 or kind != AnswerType.QUANTITY:
        in_phrases = []
    return list(dict.fromkeys(unnamed + in_phrases))


# A sentence that opens by pointing back at the one before it ("To address these issues, Dynamo uses a
# variant of consistent hashing", "This allows ...", "As a result, ..."): alone, the quote hides what it
# answers to.
_ANAPHORIC_OPENING = re.compile(
    r"^(?:(?:this|these|those|such)\b(?!\s+(?:paper|section|work|article|chapter)\b)"
    r"|(?:to|in order to)\s+(?:address|remedy|solve|overcome|avoid|fix|handle|mitigate|tackle|counter)\s+"
    r"(?:this|these|those|that|such|both|the\s+(?:above|former|latter))\b"
    r"|(?:for\s+(?:this|that|these)\s+reasons?|as\s+a\s+result|consequently|therefore|hence)\b)",
    re.IGNORECASE,
)


def _with_context(chosen: Sequence[Scored], scored: Sequence[Scored], analysis: QuestionAnalysis) -> list[Scored]:
    """*chosen* with each lone sentence that cannot stand alone quoted with its neighbour (their
    window among *scored*, keeping the sentence's own flags), unless the neighbour is quoted
    already: a sentence that opens by pointing back (`_ANAPHORIC_OPENING`) with the sentence before
    it ("First, the random position assignment ... leads to non-uniform data and load distribution.
    To address these issues, ..." says why), and a sentence that mostly restates the question
    (novelty below ECHO_NOVELTY) with the sentence after it ("After a file is deleted, GFS does not
    immediately reclaim the available physical storage. It does so only lazily during regular
    garbage collection ..."), unless it states the number or name asked for itself."""
    windows = {(s.candidate.n, s.candidate.block, s.candidate.position): s for s in scored if s.candidate.parts == 2}
    atomic = answer_type(analysis) in (AnswerType.QUANTITY, AnswerType.ENTITY)
    out: list[Scored] = []
    for s in chosen:
        c = s.candidate
        window = None
        if c.parts == 1 and c.kind == "sentence":
            if _ANAPHORIC_OPENING.match(c.text):
                window = windows.get((c.n, c.block, c.position - 1))
            elif s.novelty < ECHO_NOVELTY and not (atomic and s.states):
                window = windows.get((c.n, c.block, c.position))
        if window is not None and not any(_overlaps(window.candidate, o.candidate) for o in chosen if o is not s):
            s = replace(s, candidate=window.candidate)
        out.append(s)
        if c.parts == 1 and _ANNOUNCES_LIST.search(c.text):
            # "... the algorithm operates in the following two phases." says nothing until what it
            # announces: the next sentence of its passage (a label such as "Phase 1." may stand
            # between them), quoted after it.
            after = [
                o
                for o in scored
                if (o.candidate.n, o.candidate.block) == (c.n, c.block)
                and o.candidate.parts == 1
                and c.position < o.candidate.position <= c.position + 2
            ]
            nearest = min(after, key=lambda o: o.candidate.position, default=None)
            if nearest is not None and not any(_overlaps(nearest.candidate, o.candidate) for o in [*chosen, *out]):
                out.append(replace(nearest, states=s.states))
    return out


# A sentence that announces a list or steps after it: "... operates in the following two phases.",
# "... the master executes the following steps:".
_ANNOUNCES_LIST = re.compile(r"(?:\b(?:the|these) following\b[^.;:]*[.:]|:)$")


def _with_headers(chosen: Sequence[Scored]) -> list[Scored]:
    """*chosen* with each quoted table row preceded by its table's header line ("Protocol Msgs/s
    Bytes" before "Gossip 940 120"), unless that header is quoted already: a bare row does not say
    which number is which. The header is evidence with its row (same scores)."""
    out: list[Scored] = []
    quoted = {s.candidate.text for s in chosen}
    for s in chosen:
        header = s.candidate.context
        if s.candidate.kind == "line" and header and _quote(header) not in quoted:
            quoted.add(_quote(header))
            out.append(replace(s, candidate=replace(s.candidate, text=_quote(header), context="")))
        out.append(s)
    return out


def _asks_beyond(analysis: QuestionAnalysis, missing: Sequence[str]) -> bool:
    """Whether a question whose *missing* names no passage holds still asks about more than them:
    it compares or relates several things, or has several parts, and names something else
    ("How do Raft, Multi-Paxos and Chubby elect leaders?" with only "Multi-Paxos" missing)."""
    several = analysis.comparison or analysis.broad or len(analysis.parts) > 1
    found = [name for name in _named_things(analysis.query) if name not in missing]
    return several and (bool(found) or bool(analysis.named_paper_ids))


def _undefined_term(analysis: QuestionAnalysis, chosen: Sequence[Scored]) -> str:
    """The term a definition question asks to define ("What is GROBID?" -> "GROBID") when none of
    the *chosen* quotes defines it (`_defines_term`: they only mention it), else ""."""
    if answer_type(analysis) != AnswerType.DEFINITION:
        return ""
    words = _definienda(analysis)
    if not words or any(_defines_term(s.candidate.text, words) for s in chosen):
        return ""
    return defined_term(analysis.query) or " ".join(words)


# The commonest function words of French, German, Spanish, Italian and Portuguese that are no
# English words: a question holding several, and more of them than of English ones, is in one of
# those languages.
_FOREIGN_FUNCTION_WORDS = frozenset(
    "le la les des une du dans pour est sont quel quelle quels quelles qui que quoi comment combien avec sur "
    "der das dem ein eine einer einen einem eines ist sind wie welche welcher welches wer warum wieviel viele "
    "und auf von zu im "
    "el los las una del es cuál cuáles qué cómo cuántos cuántas cuánto para por "
    "il gli della delle che è sono quale quali quanto quanti nel "
    "os uma umas dos é são qual quais como quantos quantas com em".split()
)
_ENGLISH_FUNCTION_WORDS = frozenset(
    "the a an of in on is are was were what which who how why when where does do did for with to from by and "
    "that this it its their there many much".split()
)
OTHER_LANGUAGE = (
    "This question is not in English, and the passages retrieved for it are: the sentences below share words "
    "with it but may not answer it. Ask it in English for an answer from these papers."
)


def _function_words(text: str) -> tuple[int, int]:
    """(foreign, English) function words among *text*'s words (`_FOREIGN_FUNCTION_WORDS`)."""
    words = [w.casefold() for w in re.findall(r"[^\W\d_]+", text)]
    return sum(w in _FOREIGN_FUNCTION_WORDS for w in words), sum(w in _ENGLISH_FUNCTION_WORDS for w in words)


def asked_in_another_language(question: str, passages: Sequence[str]) -> bool:
    """Whether *question* is in French, German, Spanish, Italian or Portuguese (two function words
    of those languages or more, outnumbering its English ones) while *passages* are in English
    (more English function words than foreign ones): the embedding model and the answer-type tests
    read English, so a match of a shared word or two ("chunk") is no answer. A question in the
    passages' own language, or in English, is False."""
    foreign, english = _function_words(question)
    if foreign < 2 or foreign <= english:
        return False
    passage_foreign, passage_english = _function_words(" ".join(passages))
    return passage_english > passage_foreign


def compose_answer(
    scored: Sequence[Scored],
    analysis: QuestionAnalysis,
    *,
    titles: dict[int, str] | None = None,
    texts: Sequence[str] = (),
    chosen: Sequence[Scored] | None = None,
    unanswered: Sequence[QuestionAnalysis] = (),
    mentioned_in: Callable[[Sequence[str], Collection[int]], Collection[str]] | None = None,
) -> ExtractiveAnswer:
    """The extractive answer for *scored* candidates: quotes of `choose_evidence`, each `[N]`-cited
    and flagged supported when it states the kind of fact asked for. Status: answered (every quote
    supported), partly answered (some; or a comparison, broad or compound question names something
    no passage names, besides what they do state: the answer says what is not mentioned), not
    stated (none, or a question about one thing names something no passage names: then the answer
    says so and lists the closest quotes as related). *titles* are
    the citation labels by paper id; *texts* the passages' texts (default: the candidates');
    *chosen* the quotes when the caller chose them (`choose_part_evidence`), *unanswered* the
    sub-questions none of them states: the answer is then partly answered and says, for each, that
    the papers do not state it. *mentioned_in*: given names of the question no passage holds and
    the quoted papers' ids, those the papers' text holds elsewhere, which are then not missing
    (see `missing_names`); called only when a name is missing."""
    candidates = [s.candidate for s in scored]
    chosen = choose_evidence(scored, analysis) if chosen is None else list(chosen)
    chosen = _without_repeats(_with_headers(_with_context(chosen, scored, analysis)))
    if not chosen:
        return ExtractiveAnswer(text="", status=Status.NOT_STATED)
    labels = titles or {}
    passages = texts or [c.text for c in candidates]
    titles_seen = [c.title for c in candidates]
    missing = missing_names(analysis, passages, titles_seen)
    if missing and mentioned_in is not None:
        elsewhere = mentioned_in(missing, {s.candidate.paper_id for s in chosen})
        missing = missing_names(analysis, passages, titles_seen, elsewhere)
    stated = any(s.states for s in chosen)
    if missing and not _asks_beyond(analysis, missing):
        stated = False
    # A question about named papers (not comparing them) asks what those say: "In the Dynamo paper,
    # what is the chunk size?" is not answered by a size because a GFS passage speaks of chunks.
    focus = set(analysis.named_paper_ids) if not analysis.comparison else set()
    own = [c.matchable for c in candidates if c.paper_id in focus] if focus else passages
    unmentioned = [] if missing or not stated else missing_qualifiers(analysis, own)
    if unmentioned and not _asks_beyond(analysis, unmentioned):
        stated = False
    # "Quelle est la taille d'un chunk dans GFS ?" over English passages: their sentences share a
    # word or two with it ("chunk"), which says nothing of whether they answer it.
    other_language = asked_in_another_language(analysis.query, passages)
    if other_language:
        stated = False
    sentences = [
        AnswerSentence(text=f"“{s.candidate.text}” [{s.candidate.n}]", citations=(s.candidate.n,), supported=s.states)
        for s in chosen
    ]
    if stated:
        head = [_HEADER]
        status = Status.ANSWERED if all(s.states for s in chosen) else Status.PARTLY_ANSWERED
        # A compared paper with no quote, or none that states the fact: the answer names it.
        stating = {s.candidate.paper_id for s in chosen if s.states}
        unstated = [pid for pid in analysis.named_paper_ids if pid not in stating] if analysis.comparison else []
        unstated = [pid for pid in unstated if not relation_stated_for(pid, chosen, analysis)]
        title_of = {c.paper_id: c.title for c in candidates} | labels
        quoted_papers = {s.candidate.paper_id for s in chosen}
        unquoted_titles = [title_of[pid] for pid in unstated if pid in title_of and pid not in quoted_papers]
        quoted_titles = [title_of[pid] for pid in unstated if pid in title_of and pid in quoted_papers]
        undefined = _undefined_term(analysis, chosen)
        if unanswered or missing or unstated or undefined:
            status = Status.PARTLY_ANSWERED
            gaps = [not_stated_sentence(part, candidates, []) for part in unanswered]
            if undefined:
                gaps.append(f"The quotes mention {undefined}; none says what it is.")
            if missing:
                gaps.append(f"The papers quoted here do not mention {joined_with_and(missing)}.")
            # Quoted and not stating: said so of the quotes, lest the answer seem to contradict itself.
            if quoted_titles:
                gaps.append(f"The passages quoted from {joined_with_and(quoted_titles)} do not state it.")
            if unquoted_titles:
                gaps.append(f"No passage retrieved from {joined_with_and(unquoted_titles)} states it.")
            sentences += [AnswerSentence(text=gap, not_stated=True) for gap in gaps]
    else:
        line = not_stated_sentence(analysis, candidates, missing)
        if other_language:
            line = OTHER_LANGUAGE
        elif unmentioned:
            line += f" No passage mentions {joined_with_and(unmentioned)}."
        head = [line, "Related passages (they do not answer the question):"]
        sentences = [AnswerSentence(text=line, not_stated=True)] + [replace(s, supported=False) for s in sentences]
        status = Status.NOT_STATED
    lines = list(head)
    by_paper: dict[int, list[Scored]] = {}
    for s in chosen:
        by_paper.setdefault(s.candidate.paper_id, []).append(s)
    for pid, items in by_paper.items():
        # Lines (a table's caption, header and rows) one to a line: each keeps its marker, as a
        # sentence does (a marker repeated within one sentence is dropped, `chat.citations`).
        quoted = ""
        for k, item in enumerate(items):
            if k:
                lines_meet = "line" in (item.candidate.kind, items[k - 1].candidate.kind)
                quoted += "\n  " if lines_meet else " "
            quoted += f"“{item.candidate.text}” [{item.candidate.n}]"
        lines.append(f"- {labels.get(pid, items[0].candidate.title)}: {quoted}")
    if stated:
        lines += [s.text for s in sentences if s.not_stated]
    return ExtractiveAnswer(text="\n".join(lines), status=status, sentences=sentences)


def fallback_candidates(references: Sequence[Reference]) -> list[Sentence]:
    """When a passage qualified but holds no quotable sentence or line: its first line(s), up to
    MAX_SENTENCE_CHARS, so the answer never claims the papers do not cover the question."""
    out = []
    for ref in references:
        text = " ".join(ref.text.split())[:MAX_SENTENCE_CHARS].strip()
        if text and not looks_like_bibliography(ref.text):
            out.append(Sentence(ref.n, ref.paper_id, ref.title, _quote(neutralise_paper_markers(text)), ref.page, 0, 0))
    return out
