"""Retrieval and answer quality on a labelled question set: `python -m benchmarks.evaluate` (`./run eval`).

The corpus (`../shared/papers/`, read in place) is ingested once into one project under
`.data/eval` (its own SQLite file, PDFs and embedded chunk index) and reused by later runs; pass
`--reindex` after changing chunking or embeddings. The small generated PDFs of
`benchmarks.generated` (a results table, one-line pages, Chinese sentences) go into a second
project, "generated", and the questions marked `"corpus": "generated"` are asked there.

Every question in `benchmarks/questions.json` names, for each paper it needs, the gold pages
(physical, 1-based) and the gold fact: a short string printed on one of those pages (`"64 MB"`), or
`{"pattern": regex}`. Kinds: fact, exact, paraphrase, cross and comparison (two or more papers),
named (names a paper), followup (a first question, then `followup.question` asked in the same
conversation, with its own gold), table, short_line, cjk (generated PDFs); unanswerable (on-topic,
the papers do not say) and offtopic. `split` is "tune" (used while improving the answerer) or
"holdout" (kept back from tuning, to check that gains carry over). A holdout is written from the
papers' text by someone who has not seen the answers, and measured once before any change made for
it; once measured and studied, it joins the tune split and a fresh holdout takes its place.

Retrieval metrics, per retrieval mode (dense, lexical, hybrid, hybrid without the per-paper cap),
over the answerable questions' first turns unless said otherwise:

- recall@K: the share of gold pages among the pages of the top-K references (K = the top-K budget,
  `PROJECT_CHAT_TOP_K`), averaged over questions;
- MRR: mean over questions of 1 / rank of the first reference on a gold page (0 if none);
- cross-paper coverage: the share of cross/comparison questions whose references include every gold paper;
- off-topic refused (retrieval): the share of off-topic questions that retrieve nothing.

Answer metrics, from `answer_question` with no chat model (extractive), per mode:

- gold fact quoted: per answerable question, the share of its needed papers whose gold fact
  appears in the answer's quoted evidence (the `“...” [N]` quotes, N a reference to that paper; not
  a title, not the answer's own words), averaged; an answer whose status says "not stated" quotes
  no evidence;
- gold page cited: the share of answerable questions citing at least one gold page;
- needed papers at evidence pages: the share of answerable questions citing every needed paper at
  one of its gold pages;
- unneeded references: over every reference cited in answers to answerable questions, the share
  from papers the question does not need;
- not stated (unanswerable): the share of unanswerable questions answered "not stated" (or refused);
- off-topic refused (answer): the share of off-topic questions answered "not stated" / refused;
- false not stated (answerable): the share of answerable questions answered "not covered" / "not stated";
- follow-ups resolved: the share of follow-ups whose answer cites the follow-up's gold paper and
  quotes its gold fact;
- citation precision: over every quote `“sentence” [N]`, the share whose cited page's extracted
  text contains the sentence.

An answer's status is its `status` attribute ("answered" | "partly_answered" | "not_stated" |
"no_papers") when the answerer sets one, else read from its text (`answer_status`).

Prints the tables (targets from issue 9 beside each figure) and writes
`benchmarks/results/evaluation.md` and `.json`. `--split tune|holdout|all` limits the questions,
`--modes hybrid` (comma-separated) the retrieval modes, `--kinds fact,named` the question kinds
(a quick run); a run so limited writes `evaluation-partial.md` and `.json` instead (not committed),
so the committed full results stay whole. `python -m benchmarks.diagnose` lists, per failing tune question, what was
retrieved and quoted. The metadata extraction accuracy (`benchmarks.metadata`) is reported
after a full run; `--metadata` reports only that (no index needed).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import metadata as metadata_benchmark
from benchmarks.environment import BASE_DIR, PAPERS_DIR, RESULTS_DIR, configure, stop_chunk_index

QUESTIONS_FILE = Path(__file__).resolve().parent / "questions.json"
# Retrieval modes by the name `--modes` takes, in run order (hybrid, the app's default, first):
# (label in the report, retrieve_passages mode, whether the per-paper cap is lifted).
MODES: dict[str, tuple[str, str, bool]] = {
    "hybrid": ("hybrid", "hybrid", False),
    "dense": ("dense", "dense", False),
    "lexical": ("lexical", "lexical", False),
    "uncapped": ("hybrid, no per-paper cap", "hybrid", True),
}
SPLITS = ("tune", "holdout")
STATUSES = ("answered", "partly_answered", "not_stated", "no_papers")
REFUSED = frozenset({"not_stated", "no_papers"})
NOT_ANSWERABLE = frozenset({"offtopic", "unanswerable"})
MULTI_PAPER = frozenset({"cross", "comparison"})
GENERATED_PROJECT = "generated"

# Targets from issue 9 ("What it must show"): metric -> (comparison, bound).
TARGETS: dict[str, tuple[str, float]] = {
    "fact_quoted": (">=", 0.75),
    "needed_papers_at_evidence": (">=", 0.85),
    "unneeded_references": ("<=", 0.20),
    "not_stated_unanswerable": (">=", 0.70),
    "false_not_stated": ("<=", 0.10),
    "followups_resolved": (">=", 0.80),
}


# --- the question set -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    """A gold fact: *text* printed in the paper (matched after `fold`), or a regular expression
    (*pattern* True) searched case-insensitively in the text after `loosen`."""

    text: str
    pattern: bool = False

    def found_in(self, text: str) -> bool:
        if self.pattern:
            return re.search(self.text, loosen(text), re.IGNORECASE) is not None
        return fold(self.text) in fold(text)


@dataclass(frozen=True)
class Needed:
    """A paper a question needs: its file (relative to its corpus folder), the gold pages that hold
    the evidence, the gold fact, and extra words printed on a gold page (label checks only)."""

    paper: str
    pages: tuple[int, ...]
    fact: Fact | None = None
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class Question:
    id: str
    kind: str  # see the module docstring
    text: str
    needed: tuple[Needed, ...] = ()
    split: str = "tune"
    corpus: str = "papers"  # "papers" (the shared corpus) or "generated"
    followup: Question | None = None

    @property
    def gold(self) -> tuple[tuple[str, int], ...]:
        """(paper file, physical page) pairs."""
        return tuple((n.paper, page) for n in self.needed for page in n.pages)

    @property
    def evidence(self) -> tuple[tuple[str, str], ...]:
        return tuple((n.paper, words) for n in self.needed for words in n.evidence)

    @property
    def gold_papers(self) -> set[str]:
        return {n.paper for n in self.needed}

    @property
    def answerable(self) -> bool:
        return self.kind not in NOT_ANSWERABLE


def _needed(items: Iterable[dict[str, Any]]) -> tuple[Needed, ...]:
    needed = []
    for item in items:
        fact = item.get("fact")
        if isinstance(fact, dict):
            fact = Fact(fact["pattern"], pattern=True)
        elif isinstance(fact, str):
            fact = Fact(fact)
        needed.append(Needed(item["paper"], tuple(item["pages"]), fact, tuple(item.get("evidence", []))))
    return tuple(needed)


def load_questions(path: Path = QUESTIONS_FILE) -> list[Question]:
    """The labelled set: a JSON list of `{id, kind, split, question, corpus?, gold: [{paper, pages:
    [int], fact: str | {pattern}, evidence?: [str]}], followup?: {question, gold}}`.
    Raises ValueError on an unknown split or an answerable question without a gold fact."""
    questions = []
    for item in json.loads(path.read_text()):
        follow = item.get("followup")
        question = Question(
            id=item["id"],
            kind=item["kind"],
            text=item["question"],
            needed=_needed(item.get("gold", [])),
            split=item.get("split", "tune"),
            corpus=item.get("corpus", "papers"),
            followup=Question(
                id=item["id"] + "/followup",
                kind="followup",
                text=follow["question"],
                needed=_needed(follow["gold"]),
                split=item.get("split", "tune"),
                corpus=item.get("corpus", "papers"),
            )
            if follow
            else None,
        )
        if question.split not in SPLITS:
            raise ValueError(f"{question.id}: split must be one of {SPLITS}, not {question.split!r}")
        for turn in (question, question.followup):
            if turn is not None and turn.answerable and not all(n.fact for n in turn.needed):
                raise ValueError(f"{turn.id}: every needed paper of an answerable question needs a gold fact")
        questions.append(question)
    return questions


def select_split(questions: Sequence[Question], split: str) -> list[Question]:
    """The questions of *split* ("tune", "holdout", or "all")."""
    return [q for q in questions if split == "all" or q.split == split]


def select_kinds(questions: Sequence[Question], kinds: Iterable[str]) -> list[Question]:
    """The questions of the given *kinds* (all of them when *kinds* is empty), for a quick run
    over part of the set. Raises ValueError on a kind no question has."""
    wanted = set(kinds)
    unknown = wanted - {q.kind for q in questions}
    if unknown:
        raise ValueError(f"no question of kind {sorted(unknown)}")
    return [q for q in questions if not wanted or q.kind in wanted]


# --- pure text and answer metrics -----------------------------------------------------------------

_QUOTE_MARKS = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u00b4": "'"})
_INVISIBLE = re.compile(r"[\u00ad\u200b\u2060\ufeff]")


def fold(text: str) -> str:
    """Letters, digits and punctuation only, lower case: NFKC (ligatures, full-width punctuation),
    curly apostrophes as straight ones, and white space and hyphens dropped (line breaks add
    hyphens that dehyphenation removes, so "man-\\nages", "man- ages" and "manages" all match);
    quoted "[ref N]" markers read as the page's "[N]"."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTE_MARKS)
    text = re.sub(r"\[\u2060?ref ([^\]]+)\]", r"[\1]", _INVISIBLE.sub("", text))
    text = re.sub(r"\[\u2060([^\]]+)\]", r"[\1]", text)
    return re.sub(r"[\s\-\u2010\u2011]+", "", text).lower()


def loosen(text: str) -> str:
    """*text* for pattern facts: NFKC, straight apostrophes, invisible characters dropped, words
    split by a line-break hyphen joined ("man-\\nages" -> "manages"; a number range keeps its
    hyphen), white space as one space."""
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text).translate(_QUOTE_MARKS))
    text = re.sub(r"([^\W\d_])-\s*\n\s*([^\W\d_])", r"\1\2", text)  # not number ranges ("150-\n300")
    return re.sub(r"\s+", " ", text).strip()


@dataclass(frozen=True)
class Quote:
    """One quoted piece of evidence: its text and the reference numbers cited right after it."""

    text: str
    refs: tuple[int, ...]


# “...” then one or more markers: [1], [1, 2], [1][2].
_QUOTED = re.compile(r"“(.+?)”\s*((?:\[\d+(?:\s*,\s*\d+)*\]\s*)+)", re.DOTALL)


def quoted_evidence(text: str) -> list[Quote]:
    """The `“...” [N]` quotes of an answer, in order. Text outside curly quotes (titles, the
    answer's own words, "not stated" notes) is not evidence."""
    return [
        Quote(match.group(1).strip(), tuple(int(n) for n in re.findall(r"\d+", match.group(2))))
        for match in _QUOTED.finditer(text)
    ]


_NO_PAPERS = re.compile(r"has no papers|no papers yet|none of this project's papers", re.IGNORECASE)
_NOT_STATED = re.compile(
    r"(?:do(?:es)?n['\u2019]?t|do(?:es)? not) (?:cover|state|say|mention)|not (?:covered|stated)|no passage in them",
    re.IGNORECASE,
)


def answer_status(answer: Any) -> str:
    """*answer*'s status: its `status` attribute when it is one of `STATUSES`, else read from its
    text with the quotes taken out (a quoted sentence may itself say "not covered"): "no_papers"
    for an empty or not-yet-indexed project, "not_stated" for a refusal or a "not stated" note,
    otherwise "answered"."""
    status = getattr(answer, "status", None)
    status = getattr(status, "value", status)  # an enum member
    if status in STATUSES:
        return str(status)
    own_words = _QUOTED.sub(" ", getattr(answer, "text", "") or "")
    if _NO_PAPERS.search(own_words):
        return "no_papers"
    if _NOT_STATED.search(own_words) or not own_words.strip():
        return "not_stated"
    return "answered"


@dataclass(frozen=True)
class Turn:
    """What one answer shows, in the question set's terms: its status, the resolved question,
    the cited (paper file, page) pairs in order, and the quotes with the papers they cite."""

    status: str
    query: str
    cited: tuple[tuple[str, int], ...]
    quotes: tuple[tuple[str, tuple[str, ...]], ...]  # (quoted text, papers of its references)

    @property
    def refused(self) -> bool:
        return self.status in REFUSED


def read_turn(answer: Any, question: str, file_of: dict[int, str]) -> Turn:
    """The `Turn` of an `answer_question` result (`text`, `references` with `n`, `paper_id`,
    `page`; `status` and `query` when the answerer sets them)."""
    references = {ref.n: ref for ref in answer.references}
    quotes = []
    for quote in quoted_evidence(answer.text):
        papers = tuple(file_of.get(references[n].paper_id, "?") for n in quote.refs if n in references)
        quotes.append((quote.text, papers))
    return Turn(
        status=answer_status(answer),
        query=getattr(answer, "query", None) or question,
        cited=tuple((file_of.get(ref.paper_id, "?"), ref.page) for ref in answer.references),
        quotes=tuple(quotes),
    )


def fact_quoted_share(needed: Sequence[Needed], turn: Turn) -> float:
    """The share of *needed* papers (those with a fact) whose fact is in a quote citing that paper;
    0 when the answer is a refusal or "not stated"."""
    with_fact = [n for n in needed if n.fact is not None]
    if not with_fact:
        return float("nan")
    if turn.refused:
        return 0.0
    found = sum(
        any(n.paper in papers and n.fact is not None and n.fact.found_in(text) for text, papers in turn.quotes)
        for n in with_fact
    )
    return found / len(with_fact)


def gold_page_cited(needed: Sequence[Needed], turn: Turn) -> bool:
    gold = {(n.paper, page) for n in needed for page in n.pages}
    return any(hit in gold for hit in turn.cited)


def needed_papers_at_evidence(needed: Sequence[Needed], turn: Turn) -> bool:
    """Every needed paper is cited at one of its gold pages."""
    return all(any((n.paper, page) in turn.cited for page in n.pages) for n in needed)


def unneeded_references(needed: Sequence[Needed], turn: Turn) -> tuple[int, int]:
    """(references cited from papers the question does not need, references cited)."""
    papers = {n.paper for n in needed}
    return sum(paper not in papers for paper, _ in turn.cited), len(turn.cited)


def followup_resolved(needed: Sequence[Needed], turn: Turn) -> bool:
    """The follow-up's answer cites every paper it needs and quotes every gold fact."""
    cited = {paper for paper, _ in turn.cited}
    return {n.paper for n in needed} <= cited and fact_quoted_share(needed, turn) == 1.0


@dataclass
class Outcome:
    """One question's answer metrics in one mode (None where the metric does not apply)."""

    id: str
    kind: str
    split: str
    status: str
    query: str = ""
    fact_quoted: float | None = None
    gold_page: bool | None = None
    needed_at_evidence: bool | None = None
    unneeded: int = 0
    cited: int = 0
    followup_status: str | None = None
    followup_query: str | None = None
    followup_resolved: bool | None = None
    quotes: int = 0
    quotes_on_page: int = 0


def score(question: Question, turn: Turn, follow: Turn | None = None) -> Outcome:
    """The metrics of *question*'s answer (*turn*) and of its follow-up's answer (*follow*)."""
    outcome = Outcome(question.id, question.kind, question.split, turn.status, turn.query)
    if question.answerable:
        outcome.fact_quoted = fact_quoted_share(question.needed, turn)
        outcome.gold_page = gold_page_cited(question.needed, turn)
        outcome.needed_at_evidence = needed_papers_at_evidence(question.needed, turn)
        outcome.unneeded, outcome.cited = unneeded_references(question.needed, turn)
    if question.followup is not None and follow is not None:
        outcome.followup_status = follow.status
        outcome.followup_query = follow.query
        outcome.followup_resolved = followup_resolved(question.followup.needed, follow)
    return outcome


def _mean(values: Iterable[Any]) -> float:
    values = [v for v in values if v is not None and v == v]
    return sum(values) / len(values) if values else float("nan")


def summarise(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """The answer metrics (module docstring) over *outcomes*."""
    answerable = [o for o in outcomes if o.kind not in NOT_ANSWERABLE]
    cited = sum(o.cited for o in answerable)
    quotes = sum(o.quotes for o in outcomes)
    return {
        "fact_quoted": _mean(o.fact_quoted for o in answerable),
        "gold_page_cited": _mean(o.gold_page for o in answerable),
        "needed_papers_at_evidence": _mean(o.needed_at_evidence for o in answerable),
        "unneeded_references": sum(o.unneeded for o in answerable) / cited if cited else float("nan"),
        "not_stated_unanswerable": _mean(o.status in REFUSED for o in outcomes if o.kind == "unanswerable"),
        "offtopic_refused_answer": _mean(o.status in REFUSED for o in outcomes if o.kind == "offtopic"),
        "false_not_stated": _mean(o.status in REFUSED for o in answerable),
        "followups_resolved": _mean(o.followup_resolved for o in outcomes),
        "citation_precision": sum(o.quotes_on_page for o in outcomes) / quotes if quotes else float("nan"),
        "citations": float(quotes),
    }


def meets(metric: str, value: float) -> bool | None:
    """Whether *value* meets *metric*'s target (None: no target, or no value)."""
    if metric not in TARGETS or value != value:
        return None
    comparison, bound = TARGETS[metric]
    return value >= bound if comparison == ">=" else value <= bound


# --- running the set --------------------------------------------------------------------------------


def ingest_corpus(*, reindex: bool) -> Any:
    """The evaluation project holding every paper of the corpus, indexed (reused across runs)."""
    return _ingest(PAPERS_DIR, "corpus", reindex=reindex)


def ingest_generated(*, reindex: bool) -> tuple[Any, Path]:
    """The small project of generated PDFs (`benchmarks.generated`) and the folder holding them."""
    from django.conf import settings

    from benchmarks.generated import write_generated

    folder = Path(settings.DATA_DIR) / "generated"
    write_generated(folder)
    return _ingest(folder, GENERATED_PROJECT, reindex=reindex), folder


def _ingest(folder: Path, project_name: str, *, reindex: bool) -> Any:
    from django.contrib.auth import get_user_model

    from indexing.ingest import ingest_paths
    from indexing.services import index_paper

    user, _ = get_user_model().objects.get_or_create(username="eval")
    started = time.perf_counter()

    def on_file(path: Path, number: int, total: int) -> None:
        print(f"  [{number}/{total}] {path.relative_to(folder)}", file=sys.stderr, flush=True)

    report = ingest_paths(user=user, paths=[folder], project_name=project_name, on_file=on_file)
    if report.failed:
        raise SystemExit(f"Ingest failed: {report.failed}")
    if reindex:
        from django.conf import settings

        (Path(settings.DATA_DIR) / "pages.json").unlink(missing_ok=True)  # extraction may have changed
        for paper in report.skipped:
            index_paper(paper_id=paper.pk)
    if report.indexed or reindex:
        print(f"  indexed in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return report.project


def corpus_pages(papers: list[Any], folder: Path = PAPERS_DIR) -> tuple[dict[int, str], dict[int, list[str]]]:
    """(paper id -> file relative to *folder*, paper id -> its pages' extracted text, folded).

    The text is the app's own extraction (`indexing.pdf.extract_text`, pdfplumber), cached in the
    data folder by file hash because pdfplumber takes seconds a paper.
    """
    import hashlib

    from django.conf import settings

    from indexing.pdf import extract_text

    cache_file = Path(settings.DATA_DIR) / "pages.json"
    cache = json.loads(cache_file.read_text()) if cache_file.exists() else {}
    by_sha = {paper.sha256: paper for paper in papers}
    file_of: dict[int, str] = {}
    pages: dict[int, list[str]] = {}
    for path in sorted(folder.rglob("*.pdf")):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        paper = by_sha.get(digest)
        if paper is None:
            continue
        file_of[paper.pk] = str(path.relative_to(folder))
        if digest not in cache:
            cache[digest] = extract_text(path).pages
        pages[paper.pk] = cache[digest]
    cache_file.write_text(json.dumps(cache, ensure_ascii=False))
    return file_of, pages


def check_gold(questions: list[Question], file_of: dict[int, str], pages: dict[int, list[str]]) -> list[str]:
    """Problems with the labels: a gold fact or evidence words not printed on any gold page of
    their paper (raw page text, compared as `Fact.found_in` does)."""
    text_of = {file_of[paper_id]: texts for paper_id, texts in pages.items()}
    problems = []
    for question in questions:
        for turn in (question, question.followup):
            if turn is None:
                continue
            for needed in turn.needed:
                texts = text_of.get(needed.paper)
                if texts is None:
                    problems.append(f"{turn.id}: no paper {needed.paper}")
                    continue
                on_page = [texts[page - 1] for page in needed.pages if 0 < page <= len(texts)]
                checks = [Fact(words) for words in needed.evidence] + ([needed.fact] if needed.fact else [])
                for check in checks:
                    if not any(check.found_in(text) for text in on_page):
                        problems.append(
                            f"{turn.id}: {check.text!r} is not on {needed.paper} pages {list(needed.pages)}"
                        )
    return problems


def ask(project: Any, question: str, *, new_conversation: bool) -> Any:
    """One turn of a conversation with *project*'s chat (the one place the answerer is called).

    The conversation is the project's chat thread: `answer_question(chat=True)` saves each question
    and answer there, and a follow-up is resolved against it; *new_conversation* clears it first, so
    every question that is not a follow-up starts afresh.
    """
    from chat.services import answer_question, clear_chat

    if new_conversation:
        clear_chat(project=project)
    return answer_question(project=project, user=project.owner, question=question, chat=True)


@dataclass
class Corpus:
    """A project with its papers, their files and page texts."""

    project: Any
    papers: list[Any]
    file_of: dict[int, str]
    page_texts: dict[int, list[str]]
    folded: dict[int, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.folded = {paper_id: [fold(text) for text in texts] for paper_id, texts in self.page_texts.items()}


def answer_outcome(corpus: Corpus, question: Question) -> Outcome:
    """Ask *question* (and its follow-up) in a new conversation and score the answers."""
    answer = ask(corpus.project, question.text, new_conversation=True)
    turn = read_turn(answer, question.text, corpus.file_of)
    follow = None
    answers = [answer]
    if question.followup is not None:
        follow_answer = ask(corpus.project, question.followup.text, new_conversation=False)
        follow = read_turn(follow_answer, question.followup.text, corpus.file_of)
        answers.append(follow_answer)
    outcome = score(question, turn, follow)
    for item in answers:
        references = {ref.n: ref for ref in item.references}
        for quote in quoted_evidence(item.text):
            for n in quote.refs[:1]:
                ref = references.get(n)
                outcome.quotes += 1
                if ref is not None:
                    texts = corpus.folded.get(ref.paper_id, [])
                    outcome.quotes_on_page += 0 < ref.page <= len(texts) and fold(quote.text) in texts[ref.page - 1]
    return outcome


def retrieval_outcome(corpus: Corpus, question: Question, mode: str, per_paper: int | None) -> dict[str, Any]:
    """Retrieve for *question* in *mode* (*per_paper*: the cap, None for the setting); the
    per-question retrieval metrics (`recall`, `reciprocal_rank`, `covered` for multi-paper kinds,
    `refused` for off-topic) and `ms`."""
    from indexing.retrieval import retrieve_passages

    started = time.perf_counter()
    retrieval = retrieve_passages(papers=corpus.papers, question=question.text, mode=mode, per_paper=per_paper)
    outcome: dict[str, Any] = {"ms": 1000 * (time.perf_counter() - started)}
    found = [(corpus.file_of.get(ref.paper_id, "?"), ref.page) for ref in retrieval.references]
    if question.kind == "offtopic":
        outcome["refused"] = not found
    elif question.answerable:
        outcome["recall"] = len(set(question.gold) & set(found)) / len(set(question.gold))
        rank = next((i for i, hit in enumerate(found, start=1) if hit in question.gold), None)
        outcome["reciprocal_rank"] = 1 / rank if rank else 0.0
        if question.kind in MULTI_PAPER:
            outcome["covered"] = question.gold_papers <= {paper for paper, _ in found}
    return outcome


def summarise_retrieval(outcomes: Sequence[dict[str, Any]]) -> dict[str, float]:
    timings = sorted(o["ms"] for o in outcomes)
    return {
        "recall_at_k": _mean(o.get("recall") for o in outcomes),
        "mrr": _mean(o.get("reciprocal_rank") for o in outcomes),
        "cross_paper_coverage": _mean(o.get("covered") for o in outcomes),
        "offtopic_refused": _mean(o.get("refused") for o in outcomes),
        "retrieval_ms_p50": timings[len(timings) // 2] if timings else float("nan"),
    }


def evaluate(corpora: dict[str, Corpus], questions: list[Question], *, mode: str, with_answers: bool) -> dict[str, Any]:
    """Run every question in retrieval mode *mode* (a `MODES` name); return `{"label": ...,
    "splits": {split: metrics}, "questions": {id: outcome}}` (see the module docstring)."""
    from django.conf import settings
    from django.test.utils import override_settings

    label, retrieval_mode, uncapped = MODES[mode]
    top_k = settings.PROJECT_CHAT_TOP_K
    per_paper = top_k if uncapped else None
    started = time.perf_counter()
    retrieved = {q.id: retrieval_outcome(corpora[q.corpus], q, retrieval_mode, per_paper) for q in questions}
    rows: dict[str, dict[str, float]] = {}
    for split in (*SPLITS, "all"):
        chosen = select_split(questions, split)
        if chosen:
            rows[split] = summarise_retrieval([retrieved[q.id] for q in chosen])
    outcomes: list[Outcome] = []
    if with_answers:
        overrides: dict[str, Any] = {"RETRIEVAL_MODE": retrieval_mode}
        if per_paper is not None:
            overrides["PROJECT_CHAT_MAX_CHUNKS_PER_PAPER"] = per_paper
        with override_settings(**overrides):
            outcomes = [answer_outcome(corpora[q.corpus], q) for q in questions]
        for split in rows:
            chosen_ids = {q.id for q in select_split(questions, split)}
            rows[split].update(summarise([o for o in outcomes if o.id in chosen_ids]))
    print(f"  {label}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return {"label": label, "splits": rows, "questions": {o.id: _compact(o) for o in outcomes}}


def _compact(outcome: Outcome) -> dict[str, Any]:
    """An outcome without the fields that do not apply (for the JSON results)."""
    skip = {"id", "kind", "split"}
    return {k: v for k, v in vars(outcome).items() if k not in skip and v is not None and v != ""}


# --- the report ---------------------------------------------------------------------------------------

ANSWER_COLUMNS = [
    ("fact_quoted", "gold fact quoted"),
    ("gold_page_cited", "gold page cited"),
    ("needed_papers_at_evidence", "needed papers at evidence pages"),
    ("unneeded_references", "unneeded references"),
    ("not_stated_unanswerable", "not stated (unanswerable)"),
    ("offtopic_refused_answer", "off-topic refused"),
    ("false_not_stated", "false not covered/stated (answerable)"),
    ("followups_resolved", "follow-ups resolved"),
    ("citation_precision", "citation precision"),
]


def _cell(metric: str, value: float) -> str:
    if value != value:
        return "-"
    ok = meets(metric, value)
    if ok is None:
        return f"{value:.3f}"
    comparison, bound = TARGETS[metric]
    return f"{value:.3f} {'✓' if ok else '✗'} ({'≥' if comparison == '>=' else '≤'}{bound:.2f})"


def render(results: dict[str, Any], questions: list[Question], top_k: int) -> str:
    kinds: dict[str, int] = {}
    for question in questions:
        kinds[question.kind] = kinds.get(question.kind, 0) + 1
    splits = {split: len(select_split(questions, split)) for split in SPLITS}
    lines = [
        f"Questions: {len(questions)} ({', '.join(f'{n} {kind}' for kind, n in sorted(kinds.items()))}); "
        f"{splits['tune']} tune, {splits['holdout']} holdout; K = {top_k}. Answers are extractive (no chat model).",
        "",
        "Retrieval:",
        "",
        f"| mode | split | recall@{top_k} | MRR | cross-paper coverage | off-topic refused (retrieval) | "
        "retrieval p50 ms (with embedding) |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in results["modes"].values():
        label, rows = result["label"], result["splits"]
        for split, row in rows.items():
            lines.append(
                f"| {label} | {split} | {_cell('', row['recall_at_k'])} | {_cell('', row['mrr'])} | "
                f"{_cell('', row['cross_paper_coverage'])} | {_cell('', row['offtopic_refused'])} | "
                f"{row['retrieval_ms_p50']:.1f} |"
            )
    if any("fact_quoted" in row for result in results["modes"].values() for row in result["splits"].values()):
        lines += [
            "",
            "Answers (target from issue 9 in brackets; ✓ met, ✗ not met):",
            "",
            "| mode | split | " + " | ".join(title for _, title in ANSWER_COLUMNS) + " |",
            "|---|---|" + "---|" * len(ANSWER_COLUMNS),
        ]
        for result in results["modes"].values():
            label, rows = result["label"], result["splits"]
            for split, row in rows.items():
                cells = [_cell(metric, row[metric]) for metric, _ in ANSWER_COLUMNS]
                cells[-1] += f" ({int(row['citations'])})"
                lines.append(f"| {label} | {split} | " + " | ".join(cells) + " |")
        lines += ["", *render_kinds(results, questions)]
    return "\n".join(lines)


def render_kinds(results: dict[str, Any], questions: list[Question]) -> list[str]:
    """Gold fact quoted and status per question kind, for each mode (all splits)."""
    kinds = sorted({q.kind for q in questions})
    lines = [
        'Gold fact quoted (answerable kinds) or share answered "not stated" (unanswerable, off-topic), per kind:',
        "",
        "| mode | " + " | ".join(kinds) + " |",
        "|---|" + "---|" * len(kinds),
    ]
    for result in results["modes"].values():
        label, outcomes = result["label"], result["questions"]
        if not outcomes:
            continue
        cells = []
        for kind in kinds:
            chosen = [o for qid, o in outcomes.items() if next(q.kind for q in questions if q.id == qid) == kind]
            if kind in NOT_ANSWERABLE:
                cells.append(f"{_mean(o['status'] in REFUSED for o in chosen):.2f}")
            else:
                cells.append(f"{_mean(o.get('fact_quoted') for o in chosen):.2f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reindex", action="store_true", help="re-index every paper (after chunking changes)")
    parser.add_argument("--no-answers", action="store_true", help="retrieval metrics only (no answers)")
    parser.add_argument("--ingest-only", action="store_true", help="build the evaluation projects and stop")
    parser.add_argument("--keep-server", action="store_true", help="leave the embedded chunk index running")
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="all", help="which questions (default all)")
    parser.add_argument(
        "--modes", default=",".join(MODES), help=f"comma-separated, from {', '.join(MODES)} (default all)"
    )
    parser.add_argument("--output", help="results file stem (default benchmarks/results/evaluation)")
    parser.add_argument(
        "--metadata", action="store_true", help="only the metadata extraction accuracy (benchmarks.metadata)"
    )
    parser.add_argument(
        "--kinds", default="", help="comma-separated question kinds, for a quick run (default every kind)"
    )
    args = parser.parse_args(argv)
    if args.metadata:
        metadata_benchmark.main([])
        return
    modes = [mode.strip() for mode in args.modes.split(",") if mode.strip()]
    unknown = [mode for mode in modes if mode not in MODES]
    if unknown or not modes:
        parser.error(f"unknown mode(s) {unknown}; choose from {list(MODES)}")
    questions = select_split(load_questions(), args.split)
    try:
        questions = select_kinds(questions, [kind.strip() for kind in args.kinds.split(",") if kind.strip()])
    except ValueError as error:
        parser.error(str(error))
    if not PAPERS_DIR.is_dir():
        parser.error(
            f"the evaluation corpus is not at {PAPERS_DIR}: set PAPERS_DIR to the folder of papers the "
            "questions are about (see benchmarks/questions.json)"
        )
    configure(BASE_DIR / ".data" / "eval")
    from django.conf import settings

    try:
        corpora: dict[str, Corpus] = {}
        project = ingest_corpus(reindex=args.reindex)
        generated, folder = ingest_generated(reindex=args.reindex)
        if args.ingest_only:
            return
        for name, proj, source in (("papers", project, PAPERS_DIR), (GENERATED_PROJECT, generated, folder)):
            papers = list(proj.papers.all())
            file_of, pages = corpus_pages(papers, source)
            corpora[name] = Corpus(proj, papers, file_of, pages)
        problems = check_gold(
            questions,
            {**corpora["papers"].file_of, **corpora[GENERATED_PROJECT].file_of},
            {**corpora["papers"].page_texts, **corpora[GENERATED_PROJECT].page_texts},
        )
        if problems:
            raise SystemExit("Gold labels do not match the papers:\n" + "\n".join(problems))
        # A partial run (some split, modes or kinds) must not overwrite the committed full results.
        partial = args.split != "all" or bool(args.kinds.strip()) or modes != list(MODES) or args.no_answers
        output = args.output or str(RESULTS_DIR / ("evaluation-partial" if partial else "evaluation"))
        results: dict[str, Any] = {"split": args.split, "kinds": args.kinds, "modes": {}}
        for mode in modes:
            results["modes"][mode] = evaluate(corpora, questions, mode=mode, with_answers=not args.no_answers)
            # Written after each mode, so an interrupted run keeps the modes it finished.
            write_results(results, questions, settings.PROJECT_CHAT_TOP_K, output)
    finally:
        if not args.keep_server:
            stop_chunk_index()
    print(render(results, questions, settings.PROJECT_CHAT_TOP_K))
    print(f"Written to {output}.md and .json")
    if not partial:
        metadata_benchmark.main([], configured=True)


def json_safe(value: Any) -> Any:
    """*value* with every NaN float (a metric over no questions) replaced by None, since JSON has no NaN."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def write_results(results: dict[str, Any], questions: list[Question], top_k: int, output: str) -> None:
    """`<stem>.md` (the tables) and `<stem>.json` (metrics and per-question outcomes, NaN written as
    null); the stem is *output*: `benchmarks/results/evaluation` for a full run,
    `benchmarks/results/evaluation-partial` for a run limited by split, mode or kind."""
    stem = Path(output)
    stem.parent.mkdir(parents=True, exist_ok=True)
    stem.with_suffix(".md").write_text(
        "# Retrieval and answer evaluation (last run of `./run eval`)\n\nMetrics are defined in "
        "`benchmarks/evaluate.py`; the questions, their gold pages and gold facts are in "
        "`benchmarks/questions.json`.\n\n" + render(results, questions, top_k) + "\n"
    )
    stem.with_suffix(".json").write_text(
        json.dumps(json_safe(results), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    )


if __name__ == "__main__":
    main()
