"""Project chat: retrieve, answer (chat model or extractive), parse citations, save the turn.

`AnswerSession.events()` yields the WebSocket event vocabulary (documented in `chat.events`); the
consumer only forwards them. `answer_question` is the synchronous form used by `manage.py ask`.
`StreamedAnswer` holds what project chat and per-paper chat (`chat.paper_chat`) share: the citation
parsing of the stream, the partial answer, and saving it exactly once.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncGenerator, Collection, Iterable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from typing import Any

import numpy as np
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.urls import reverse

from annotagent import llm
from annotagent.errors import AnnotagentError
from annotagent.ratelimit import check_user_rate
from chat import events, metadata_answers
from chat.citations import CitationStream, citations_unreadable, renumber_by_first_citation
from chat.extractive import (
    AnswerSentence,
    ExtractiveAnswer,
    Scored,
    Sentence,
    Status,
    analysis_for,
    asks_about_funding,
    candidate_sentences,
    candidate_windows,
    caption_lines,
    cheap_scores,
    choose_evidence,
    choose_part_evidence,
    compose_answer,
    embed_candidates,
    fallback_candidates,
    joined_with_and,
    looks_like_bibliography,
    not_stated_in,
    not_stated_sentence,
    score_candidates,
    with_extreme_row,
    with_table_pointed_to,
)
from chat.metadata_answers import MetadataAnswer
from chat.models import ChatMessage, ProjectChat
from chat.pool import in_answer_pool
from chat.prompts import REFUSAL, Turn, answered_turns, build_messages, trim_history
from chat.question import (
    PaperRef,
    QuestionAnalysis,
    analyse_question,
    cut_mentions,
    defined_term,
    figure_label,
    first_author,
    key_terms,
    rewrite_with_model,
)
from chat.support import UNREADABLE_NOTE, SentenceBuffer, answer_status, check_sentence
from indexing.chunking import count_tokens
from indexing.embedding_cache import sentence_embeddings
from indexing.embeddings import embed_query
from indexing.fulltext import front_matter
from indexing.retrieval import Focus, Reference, Retrieval, retrieve_passages
from indexing.store import ChunkStoreError
from papers.citation import PaperLabel, author_year_citation, paper_bibtex, paper_labels
from papers.figures import first_mentioned
from papers.fulltext import TextMatch, find_text
from papers.models import Figure, Paper
from papers.services import author_names
from projects.models import Project, papers_to_search
from projects.services import get_project_for_user

logger = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 4000
# History is read newest first up to this many messages before the token budget trims it further.
HISTORY_READ_LIMIT = 60


class QuestionError(AnnotagentError):
    """The question cannot be asked as sent."""

    code = "invalid_question"


class QuestionTooLongError(QuestionError):
    code = "question_too_long"


_CONTROL = re.compile(r" *[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]+ *")


def check_question(text: object) -> str:
    """The question to ask, from what a client sent: stripped of surrounding space, its NUL and other
    control characters (PostgreSQL cannot store NUL in text) read as spaces, so "chunk\x00size"
    stays two words; tabs and newlines are kept. Raises QuestionError when it is not a
    string, is empty, has no letter or digit ("?!?"), holds lone surrogates, or is longer than
    MAX_QUESTION_CHARS."""
    if text is None:
        raise QuestionError("A question needs a non-empty text.")
    if not isinstance(text, str):
        raise QuestionError("A question must be text (a JSON string).")
    text = _CONTROL.sub(" ", text).strip()
    if not text:
        raise QuestionError("A question needs a non-empty text.")
    if not re.search(r"[^\W_]", text):  # "?!?" asks nothing (and would be read as a follow-up)
        raise QuestionError("A question needs at least one word.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: valid JSON escapes, but not storable text
        raise QuestionError("The question holds characters that are not text.") from None
    if len(text) > MAX_QUESTION_CHARS:
        raise QuestionTooLongError(f"Questions may be at most {MAX_QUESTION_CHARS} characters.")
    return text


def get_or_create_chat(project: Project) -> ProjectChat:
    chat, _ = ProjectChat.objects.get_or_create(project=project)
    return chat


def chat_history(project: Project) -> list[ChatMessage]:
    """The project's saved messages, oldest first."""
    return list(ChatMessage.objects.filter(chat__project=project).select_related("author").order_by("created_at", "pk"))


def chat_history_page(project: Project, *, before: int | None = None, limit: int) -> tuple[list[ChatMessage], bool]:
    """One page of *project*'s chat: the newest *limit* messages with an id below *before* (all
    when None), oldest first; and whether older messages remain. Ids grow with creation time, so
    pages by id are pages by time."""
    messages = ChatMessage.objects.filter(chat__project=project).select_related("author")
    if before is not None:
        messages = messages.filter(pk__lt=before)
    page = list(messages.order_by("-pk")[: limit + 1])
    has_more = len(page) > limit
    page = page[:limit]
    page.reverse()
    return page, has_more


@transaction.atomic
def clear_chat(*, project: Project) -> int:
    """Delete every message of *project*'s chat. Returns how many went."""
    deleted, _ = ChatMessage.objects.filter(chat__project=project).delete()
    return deleted


def trim_chat(*, project: Project, keep: int | None = None) -> int:
    """Delete all but the newest *keep* messages (default `PROJECT_CHAT_MAX_MESSAGES`) of
    *project*'s chat: the thread's growth bound. Returns how many went."""
    keep = settings.PROJECT_CHAT_MAX_MESSAGES if keep is None else keep
    messages = ChatMessage.objects.filter(chat__project=project)
    newest = list(messages.order_by("-created_at", "-pk").values_list("pk", flat=True)[:keep])
    deleted, _ = messages.exclude(pk__in=newest).delete()
    return deleted


def history_turns(project: Project) -> list[Turn]:
    """The answered turns of *project*'s chat that fit `PROJECT_CHAT_HISTORY_TOKENS`, oldest first."""
    recent = list(ChatMessage.objects.filter(chat__project=project).order_by("-created_at", "-pk")[:HISTORY_READ_LIMIT])
    recent.reverse()
    turns = answered_turns([_turn(m) for m in recent])
    return trim_history(turns, budget_tokens=settings.PROJECT_CHAT_HISTORY_TOKENS, count_tokens=count_tokens)


def _turn(message: ChatMessage) -> Turn:
    """*message* as a turn of the conversation: an answer with the papers and pages it cited, in
    the order of their first citation number, and the sentences it quoted."""
    numbered = sorted(
        ((int(n), c) for n, c in message.citations.items() if n.isdigit() and isinstance(c, dict)),
        key=lambda item: item[0],
    )
    cited = [c for _, c in numbered if isinstance(c.get("paper_id"), int)]
    located = [c for c in cited if isinstance(c.get("page"), int)]
    return Turn(
        role=message.role,
        text=message.text,
        complete=message.state == ChatMessage.State.COMPLETE,
        paper_ids=tuple(dict.fromkeys(c["paper_id"] for c in cited)),
        pages=tuple(dict.fromkeys((c["paper_id"], c["page"]) for c in located)),
        quotes=tuple(c["quote"] for c in located if c.get("quote")),
    )


def accept_question(*, user: User, text: object) -> str:
    """The question *user* sent (`check_question`), counted against their question rate: what the
    API and MCP do before answering. Raises QuestionError, QuestionTooLongError, RateLimitedError."""
    question = check_question(text)
    check_user_rate(user_id=user.pk, action="question")
    return question


def search_for_user(
    *, user: User, project_id: int | None, query: str, top_k: int | None = None
) -> tuple[Project, Retrieval]:
    """A search request (API, MCP): the project checked for *user* (`get_project_for_user`; None:
    their default project), the search counted against their question rate, then `search_project`.
    Raises Http404 for a project they are not a member of, RateLimitedError."""
    project = get_project_for_user(user, project_id)
    check_user_rate(user_id=user.pk, action="question")
    return project, search_project(project=project, query=query, top_k=top_k)


def search_project(*, project: Project, query: str, top_k: int | None = None) -> Retrieval:
    """The passages of *project*'s ready papers that answer *query* best (no chat turn is saved).
    The caller checked the project with `get_project_for_user`; retrieval reads only its papers."""
    return retrieve_passages(papers=_project_papers(project), question=query, top_k=top_k)


def _project_papers(project: Project) -> list[Paper]:
    """*project*'s papers that retrieval reads: each work once, its primary version and its
    supplements (`projects.models.papers_to_search`); untitled ones are named by the file name that
    the member who added each gave it (`projects.models.papers_as_added`), so every member sees the
    same names."""
    return papers_to_search(project)


def paper_ref(paper: Paper) -> PaperRef:
    """What question analysis knows of *paper*: title (a file name without ".pdf" when it has
    none), first author, year and the start of its abstract."""
    filename = getattr(paper, "library_filename", None) or ""
    title = paper.cited.title or re.sub(r"\.pdf$", "", filename, flags=re.IGNORECASE) or paper.display_title
    return PaperRef(
        paper_id=paper.pk,
        title=title,
        first_author=first_author(paper.cited.authors_text),
        year=paper.cited.year,
        abstract=paper.abstract[:1500],
        venue=paper.venue,
    )


def analyse_for_project(project_papers: list[Paper], question: str, history: list[Turn]) -> QuestionAnalysis:
    """*question* analysed against *history* (the chat's answered turns) and the project's papers
    (`_project_papers`); a follow-up is rewritten by the project chat model when one is configured
    (the deterministic rewrite stands when the model fails)."""
    papers = [paper_ref(paper) for paper in project_papers]
    analysis = analyse_question(question, history=history, papers=papers)
    if analysis.rewritten and llm.chat_model_configured():
        try:
            analysis = rewrite_with_model(
                analysis, history=history, papers=papers, model=llm.configured_chat_model(project=True)
            )
        except llm.ChatModelError:
            logger.warning("Rewriting the follow-up %r failed; using %r", question, analysis.query, exc_info=True)
    return analysis


@lru_cache(maxsize=50_000)
def _sentences_of(text: str) -> tuple[str, ...]:
    """The candidate sentence texts of one chunk text (`candidate_sentences`), unique, in order."""
    reference = Reference(n=1, paper_id=0, title="", page=1, text=text, score=0.0)
    return tuple(dict.fromkeys(sentence.text for sentence in candidate_sentences([reference])))


def _known(texts: Sequence[str]) -> dict[str, np.ndarray]:
    """The sentence vectors already held (`sentence_vectors.known`); none when the chunk index
    cannot be read (logged): retrieval then ranks by chunks alone, and the answer embeds only its
    best candidates."""
    try:
        return sentence_vectors.known(texts)
    except ChunkStoreError:
        logger.warning("Stored sentence vectors could not be read", exc_info=True)
        return {}


def best_sentence_cosines(texts: Sequence[str], query: np.ndarray) -> np.ndarray:
    """`indexing.retrieval.SentenceScorer`: per chunk text, the highest cosine similarity of one of
    its candidate sentences (the extractive answer's splitter, so the vectors indexing pre-filled
    are found) to *query*; NaN for a chunk none of whose sentences has a known vector (nothing is
    embedded here). A chunk index that cannot be read gives all NaN (logged)."""
    per_chunk = [_sentences_of(text) for text in texts]
    best = np.full(len(texts), np.nan, dtype=np.float32)
    vectors = _known(list(dict.fromkeys(s for sentences in per_chunk for s in sentences)))
    if not vectors:
        return best
    known = list(vectors)
    cosine = dict(zip(known, np.stack([vectors[s] for s in known]) @ query, strict=True))
    for row, sentences in enumerate(per_chunk):
        found = [cosine[s] for s in sentences if s in cosine]
        if found:
            best[row] = max(found)
    return best


def lexical_query(analysis: QuestionAnalysis, refs: Sequence[PaperRef]) -> str:
    """The query of a question about one named paper without that paper's name, for the lexical
    leg (see `Focus.lexical_query`); *refs* the project's papers. "" for any other question, or
    when nothing but the name is left ("What is Raft?")."""
    if len(analysis.named_paper_ids) != 1:
        return ""
    (named,) = analysis.named_paper_ids
    return _without_own_name(analysis.query, named, refs)


def side_lexical_queries(analysis: QuestionAnalysis, refs: Sequence[PaperRef]) -> tuple[tuple[int, str], ...]:
    """Each side of a comparison (`QuestionAnalysis.paper_queries`) without its own paper's name,
    for that side's lexical leg (see `Focus.lexical_queries`); "" where nothing but names is left."""
    return tuple((paper_id, _without_own_name(text, paper_id, refs)) for paper_id, text in analysis.paper_queries)


def _without_own_name(text: str, paper_id: int, refs: Sequence[PaperRef]) -> str:
    """*text* without the mentions of paper *paper_id* (other papers' names stay); "" when nothing
    but names is left."""
    cut = cut_mentions(text, refs, keep={ref.paper_id for ref in refs if ref.paper_id != paper_id})
    return cut if key_terms(cut) else ""


def _retrieve(papers: list[Paper], analysis: QuestionAnalysis) -> Retrieval:
    refs = [paper_ref(paper) for paper in papers]
    focus = Focus(
        paper_ids=analysis.named_paper_ids,
        comparison=analysis.comparison,
        broad=analysis.broad,
        queries=analysis.paper_queries,
        define=defined_term(analysis.query) or "",  # "" unless a definition question
        caption=figure_label(analysis.query) or "",
        funding=asks_about_funding(analysis.query),
        lexical_query=lexical_query(analysis, refs),
        lexical_queries=side_lexical_queries(analysis, refs),
        carried=analysis.said_before,
    )
    return retrieve_passages(papers=papers, question=analysis.query, focus=focus, sentence_scorer=best_sentence_cosines)


def _paper_described(papers: list[Paper], description: str) -> tuple[int, ...]:
    """The id of the paper among *papers* whose passage retrieval ranks first for *description*
    ("the Yahoo! coordination service"), as a 1-tuple; () when nothing is retrieved."""
    found = _retrieve(papers, analyse_question(description, history=[], papers=[paper_ref(p) for p in papers]))
    return (found.references[0].paper_id,) if found.references else ()


# The extractive answer's and the support check's `embed`: each sentence is embedded once, across
# processes (indexing pre-fills it, `chat.prefill`).
sentence_vectors = sentence_embeddings


def extractive_answer(
    question: str,
    references: list[Reference],
    *,
    refusal: str = REFUSAL,
    query_embedding: np.ndarray | None = None,
    analysis: QuestionAnalysis | None = None,
    labels: dict[int, str] | None = None,
    papers: Sequence[Paper] = (),
) -> ExtractiveAnswer:
    """Compose the extractive answer for *references* (see `chat.extractive`); *refusal* (status
    not stated) when there is no passage. *query_embedding* is the question's embedding when
    retrieval already computed it; *analysis* the question's analysis (default: the question alone,
    `chat.extractive.analysis_for`); *labels* the citation label of each paper id. *papers*: the
    papers the passages come from, whose full text is searched for a name of the question no
    passage holds before the answer says the papers do not mention it (a chunk index that cannot
    be read then leaves the name missing)."""
    if not references:
        return ExtractiveAnswer(text=refusal, status=Status.NOT_STATED)
    if analysis is None:
        texts: dict[int, str] = {}
        for ref in references:
            texts[ref.paper_id] = f"{texts.get(ref.paper_id, '')}\n{ref.text}"
        analysis = analysis_for(question, {ref.paper_id: ref.title for ref in references}, texts)
    # "Who funded the sleep study?" is answered by its acknowledgements, filler for other questions.
    candidates = candidate_sentences(references, acknowledgements=asks_about_funding(analysis.query))
    candidates += candidate_windows(candidates)
    if not candidates:
        candidates = fallback_candidates(references)
    passages = [ref.text for ref in references]
    label = figure_label(analysis.query)
    if label and (lines := caption_lines(references, label)):
        # "What does Table 3 show?": its caption and rows, as the paper prints them.
        quoted = [Scored(line, 1.0, 1.0, 1.0, 1.0, 1.0, True) for line in lines]
        return compose_answer(quoted, analysis, titles=labels, texts=passages, chosen=quoted)
    query = embed_query(analysis.query) if query_embedding is None else query_embedding
    scored = _scored_for(candidates, analysis, query)
    chosen, unanswered = None, []
    if analysis.parts:  # a compound question: evidence for each thing it asks
        evidence = choose_part_evidence(
            [(_scored_for(candidates, part, embed_query(part.query)), part) for part in analysis.parts]
        )
        chosen, unanswered = evidence.chosen, evidence.unanswered
    if chosen is None:
        chosen = with_table_pointed_to(choose_evidence(scored, analysis), references)
        chosen = with_extreme_row(chosen, candidates, analysis)
    answer = compose_answer(
        scored,
        analysis,
        titles=labels,
        texts=passages,
        chosen=chosen,
        unanswered=unanswered,
        mentioned_in=partial(_mentioned_in, papers) if papers else None,
    )
    if answer.text:
        return answer
    # A passage qualified, so never "not covered": quote its best candidates as related.
    line = not_stated_sentence(analysis, candidates, [])
    related = fallback_candidates(references[:1])
    listing = "\n".join(f"- {(labels or {}).get(c.paper_id, c.title)}: “{c.text}” [{c.n}]" for c in related)
    return ExtractiveAnswer(
        text=f"{line}\nRelated passages (they do not answer the question):\n{listing}" if related else line,
        status=Status.NOT_STATED,
        sentences=[AnswerSentence(text=line, not_stated=True)],
    )


def _mentioned_in(papers: Sequence[Paper], names: Sequence[str], paper_ids: Collection[int]) -> set[str]:
    """Those of *names* that the full text of a paper of *paper_ids* (one of *papers*) holds in its
    prose (`_in_prose`: "research.microsoft.com" says nothing of Microsoft). A chunk index that
    cannot be read finds none."""
    searched = [paper for paper in papers if paper.pk in paper_ids]
    found: set[str] = set()
    for name in names if searched else ():
        try:
            matches = find_text(searched, name)
        except AnnotagentError:
            logger.warning("Full-text search for %r failed; the name counts as not mentioned", name)
            continue
        if any(_in_prose(match) for match in matches.values()):
            found.add(name)
    return found


# A reference list's entry: "[17] LAMPORT, L.", "[4] Mike Burrows."
_REFERENCE_ENTRY = re.compile(r"\[\d{1,3}\]\s+[A-Z][A-Za-z]+,?\s+[A-Z]")


def _in_prose(match: TextMatch) -> bool:
    """Whether a full-text *match* is a mention in the paper's prose: not in a web or mail address
    ("research.microsoft.com") nor in a reference list's entry."""
    before, after = re.search(r"\S*$", match.before), re.match(r"\S*", match.after)
    token = f"{before[0] if before else ''}{match.match}{after[0] if after else ''}"
    if re.search(r"/|@|\bwww\.|\.(?:com|org|edu|net)\b", token):
        return False
    return not (_REFERENCE_ENTRY.search(match.before[-80:]) or looks_like_bibliography(match.snippet))


def _scored_for(candidates: list[Sentence], analysis: QuestionAnalysis, query: np.ndarray) -> list[Scored]:
    """*candidates* scored against *analysis* (the question, or one of its `parts`), whose query's
    embedding is *query*; each side of a comparison (`paper_queries`, unless the question has parts)
    against its own side of the question (the closest of its sides when it has several)."""
    cheap = cheap_scores(candidates, analysis)  # both the embedding choice and the scores read them
    dense = embed_candidates(candidates, analysis, query, sentence_vectors.embed, cheap=cheap, known=_known)
    sides: dict[int, np.ndarray] = {}  # a paper with several queries (relating papers): the closest
    for paper_id, own_query in analysis.paper_queries if not analysis.parts else ():
        own = embed_candidates(
            candidates, analysis, embed_query(own_query), sentence_vectors.embed, cheap=cheap, known=_known
        )
        sides[paper_id] = np.maximum(sides[paper_id], own) if paper_id in sides else own
    for paper_id, own in sides.items():
        rows = [row for row, candidate in enumerate(candidates) if candidate.paper_id == paper_id]
        dense[rows] = own[rows]
    return score_candidates(candidates, analysis, dense, cheap=cheap)


def figure_cards(paper_ids: Iterable[int]) -> dict[int, dict[str, dict[str, object]]]:
    """Paper id -> figure label -> what a citation's hover card shows of that figure of the paper:
    `url` (its image, served to those who may read the paper), `label` and `page`."""
    cards: dict[int, dict[str, dict[str, object]]] = {}
    for figure in Figure.objects.of_papers(paper_ids):
        cards.setdefault(figure.paper_id, {})[figure.label] = {
            "url": reverse("papers:figure", args=[figure.paper_id, figure.pk]),
            "label": figure.label,
            "page": figure.page_number,
        }
    return cards


def words(text: str) -> list[str]:
    """Split *text* into stream pieces (a word with its following space)."""
    return re.findall(r"\S+\s*|\s+", text)


@dataclass(kw_only=True)
class StreamedAnswer:
    """One question being answered, as a stream of events. Subclasses supply `_prepare` (save the
    question, find the references, return the `answer.start` event), `_pieces` (the raw answer
    text) and `_save_answer`; they may check each sentence before it is shown (`_checks_support`,
    `_check`) and settle the answer's status at the end (`_finish`).

    Holds the partial answer so a cancelled session can still be saved (`save(state=...)`); the
    answer is saved exactly once, even when a cancel arrives while the final save is running.
    """

    question: str
    text: str = ""
    references: dict[int, Reference] = field(default_factory=dict)
    cited: list[int] = field(default_factory=list)
    extractive: bool = False
    status: str = ""
    sentences: list[AnswerSentence] = field(default_factory=list)
    saved: Any = None
    _saving: asyncio.Future[Any] | None = field(default=None, init=False, repr=False)
    _unannounced: list[int] = field(default_factory=list, init=False, repr=False)
    # The papers references may cite, by id: their printed page numbers and OCR'd pages.
    cited_papers: dict[int, Paper] = field(default_factory=dict, init=False, repr=False)
    # The figures of the papers references may cite (`figure_cards`), for the hover cards.
    figures: dict[int, dict[str, dict[str, object]]] = field(default_factory=dict, init=False, repr=False)

    async def events(self) -> AsyncGenerator[dict[str, Any], None]:
        """Yield `answer.start`, `answer.delta` and `answer.citation` events, then `answer.done`.

        Raises AnnotagentError subclasses (chunk index, embedding or chat model failures); the
        partial answer is saved as failed first. Cancellation propagates (the caller saves the
        partial answer as stopped); closing the generator closes the model's stream.
        """
        try:
            async with aclosing(self._generate()) as stream:
                async for event in stream:
                    yield event
        except Exception:
            await self.save(state=ChatMessage.State.FAILED)
            raise
        message = await self.save(state=ChatMessage.State.COMPLETE)
        yield events.answer_done(message)

    async def _generate(self) -> AsyncGenerator[dict[str, Any], None]:
        yield await self._prepare()
        parser = CitationStream(valid=set(self.references), brackets_only=self.extractive)
        buffer = SentenceBuffer() if self._checks_support() else None
        last_checkpoint = time.monotonic()
        async with aclosing(self._pieces()) as pieces:
            async for piece in pieces:
                for event in await self._release(*parser.feed(piece), buffer, final=False):
                    yield event
                if time.monotonic() - last_checkpoint >= settings.CHAT_PARTIAL_SAVE_SECONDS:
                    await self._checkpoint()
                    last_checkpoint = time.monotonic()
        for event in await self._release(*parser.close(), buffer, final=True):
            yield event
        for event in await self._finish(parser.cited):
            yield event

    async def _release(
        self, text: str, new: list[int], buffer: SentenceBuffer | None, *, final: bool
    ) -> list[dict[str, Any]]:
        """Events for parsed *text*: at once, or (with a *buffer*) sentence by sentence, each
        checked first. Citation events always go out before any text that cites them."""
        if buffer is None:
            return self._emit(text, new)
        self._unannounced.extend(new)
        out: list[dict[str, Any]] = []
        for sentence in buffer.feed(text) + (buffer.close() if final else []):
            shown = await in_answer_pool(self._check)(sentence)
            # A citation is announced with the first sentence that shows it.
            cited = {int(n) for n in re.findall(r"\[(\d+)\]", sentence)}
            announce = [n for n in self._unannounced if n in cited or final]
            self._unannounced = [n for n in self._unannounced if n not in announce]
            out.extend(self._emit(shown, announce))
        return out

    async def _checkpoint(self) -> None:
        """Save the answer so far as stopped (`_save_progress`), unless the final save has begun:
        if this process dies mid-answer, the turn keeps the text written until then."""
        if self._saving is None:
            await sync_to_async(self._save_progress)()

    def _emit(self, text: str, new: list[int]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for n in new:
            self.cited.append(n)
            out.append(events.answer_citation(self.references[n], self.citation(n)))
        if text:
            self.text += text
            out.append(events.answer_delta(text))
        return out

    async def save(self, *, state: str) -> Any:
        """Save the (possibly partial) answer with its citation map, once; later calls return the
        first save's message whatever *state* they ask for."""
        if self._saving is None:
            self._saving = asyncio.ensure_future(sync_to_async(self._save_answer)(state))
        # Shielded: a cancel arriving mid-save must not leave the answer half-saved or saved twice.
        self.saved = await asyncio.shield(self._saving)
        return self.saved

    def citation(self, n: int) -> dict[str, object]:
        """The JSON form of reference *n* (see `Reference.as_citation`), with the cited page's
        printed number and OCR flag (`Paper.page_facts`) when the session knows the paper, and
        `figure` ({"url", "label", "page"}) when the cited text is a caption of the paper's or
        mentions one of its figures or tables ("as Figure 3 shows")."""
        reference = self.references[n]
        paper = self.cited_papers.get(reference.paper_id)
        citation = reference.as_citation() | (paper.page_facts(reference.page) if paper is not None else {})
        cards = self.figures.get(reference.paper_id)
        label = first_mentioned(self._cited_texts(n), cards) if cards else None
        if cards and label:
            citation["figure"] = cards[label]
        return citation

    def _cited_texts(self, n: int) -> list[str]:
        """What reference *n* is cited for, most specific first: where a figure mention is sought."""
        return [self.references[n].text]

    def citation_map(self) -> dict[str, dict[str, object]]:
        """`{"N": citation}` for every reference cited so far, saved with the message."""
        return {str(n): self.citation(n) for n in self.cited}

    def _checks_support(self) -> bool:
        return False

    def _check(self, sentence: str) -> str:
        return sentence

    async def _finish(self, cited: list[int]) -> list[dict[str, Any]]:
        return []

    async def _prepare(self) -> dict[str, Any]:
        raise NotImplementedError

    def _pieces(self) -> AsyncGenerator[str, None]:
        raise NotImplementedError

    def _save_answer(self, state: str) -> Any:
        raise NotImplementedError

    def _save_progress(self) -> None:
        """Save the partial answer while it streams; `_save_answer` then completes that save.
        Optional: by default only the final answer is saved."""


NO_PAPERS = "This project has no papers yet: add papers to it, then ask again."
WHICH_OTHER_PAPER = "Which paper do you mean? This project's other papers are {papers}: ask again naming one."
NO_OTHER_PAPER = (
    "This project has one paper, “{title}”: there is no other paper to ask about. Add papers to the "
    "project to ask across them."
)


def _spoken_of(name: str, references: Iterable[Reference]) -> bool:
    """Whether *name* appears, as a whole word, in the text or title of one of *references*."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.IGNORECASE)
    return any(pattern.search(reference.text) or pattern.search(reference.title) for reference in references)


ABSENT_PAPER = (
    "This project has no paper called “{name}”, so its papers cannot say what that paper states. "
    "Add the paper to the project, or ask without naming it."
)
CLOSE_NAME = " Did you mean “{name}”?"
NOT_READY = "None of this project's papers is ready to search yet; ask again once indexing finishes."
NONE_INDEXED = "None of this project's papers could be indexed, so there is nothing to search yet."


def _quote_of(sentence: AnswerSentence) -> str:
    return re.sub(r"^“|”\s*(?:\[\d+\]\s*)*$", "", sentence.text).strip()


@dataclass(kw_only=True)
class AnswerSession(StreamedAnswer):
    """A question to a project's chat: retrieval over the project's ready papers, then the project
    chat model (`OPENAI_PROJECT_CHAT_MODEL`, else `OPENAI_CHAT_MODEL`) or the extractive answerer.

    Extractive answers carry their status from `chat.extractive`; a chat model's sentences are
    checked against their passages as they stream (`chat.support`), and an answer whose citations
    could not be read is kept, marked and logged."""

    project: Project
    user: User
    retrieval: Retrieval | None = None
    # False: a one-off question (`manage.py ask` without --chat): no history read, nothing saved.
    persist: bool = True
    history: list[Turn] = field(default_factory=list)
    analysis: QuestionAnalysis | None = None
    # The titles of the papers the question names (for a not-stated answer when none has a passage).
    named_titles: list[str] = field(default_factory=list)
    labels: dict[int, PaperLabel] = field(default_factory=dict)
    quotes: dict[int, str] = field(default_factory=dict)
    answer_message: ChatMessage | None = None
    question_message: ChatMessage | None = None
    # Whether the members were sent the question (`chat.question`), which goes out once, before
    # the answer's first event.
    question_announced: bool = False
    # Paper id -> "2 pages of X could not be read", for the project's papers with unreadable pages.
    unreadable: dict[int, str] = field(default_factory=dict)
    metadata_answer: MetadataAnswer | None = None
    # "And the other paper?" with several other papers: their titles (`QuestionAnalysis.unclear_papers`).
    unclear_titles: list[str] = field(default_factory=list)
    # "And the other paper?" in a project of one paper: its title (`QuestionAnalysis.no_other_paper`).
    only_title: str | None = None

    async def _prepare(self) -> dict[str, Any]:
        if self.persist:
            self.history = await sync_to_async(history_turns)(self.project)
        await sync_to_async(self._save_question)()
        # Read once: analysis, retrieval and the citation labels all describe the same papers.
        papers = await sync_to_async(_project_papers)(self.project)
        # Metadata questions (who, when, where, how many) are answered from the database alone:
        # by the patterns without a chat model, by the model through its lookup tool with one. A
        # content question limited by metadata ("the 2006 papers") searches only those papers.
        names = await sync_to_async(author_names)(self.user)
        if not llm.chat_model_configured():
            answered = [turn for turn in self.history if turn.role == "assistant"]
            previous = answered[-1].paper_ids if answered else ()
            described = metadata_answers.described_paper(self.question, papers)
            if described is not None:
                # "Who wrote the paper about the Yahoo! coordination service?": the paper whose
                # passage best matches the description, not the conversation's last one.
                previous = await in_answer_pool(_paper_described)(papers, described)
            self.metadata_answer = metadata_answers.answer_from_metadata(
                self.question, papers, author_names=names, previous=previous
            ) or await in_answer_pool(metadata_answers.answer_affiliations)(
                self.question, papers, front_matter=front_matter, previous=previous
            )
        elif metadata_answers.is_metadata_question(self.question):
            self.metadata_answer = await in_answer_pool(metadata_answers.answer_with_lookup)(
                self.question,
                papers,
                model=llm.configured_chat_model(project=True),
                history=self.history,
                author_names=names,
            )
        if self.metadata_answer is not None:
            return self._metadata_start(papers)
        scope = metadata_answers.papers_in_scope(self.question, papers, author_names=names)
        question = self.question if scope is None else scope.question
        self.analysis = await in_answer_pool(analyse_for_project)(papers, question, self.history)
        self.retrieval = await in_answer_pool(_retrieve)(papers if scope is None else scope.papers, self.analysis)
        self.references = {ref.n: ref for ref in self.retrieval.references}
        self.named_titles = [paper.display_title for paper in papers if paper.pk in self.analysis.named_paper_ids]
        self.unclear_titles = [p.display_title for p in papers if p.pk in self.analysis.unclear_papers]
        if self.analysis.no_other_paper:
            self.only_title = papers[0].display_title
        self.extractive = not llm.chat_model_configured()
        self._load_labels(papers)
        self.figures = await sync_to_async(figure_cards)({ref.paper_id for ref in self.retrieval.references})
        return events.answer_start(
            extractive=self.extractive, indexing=self.retrieval.indexing, failed=self.retrieval.failed
        )

    def _metadata_start(self, papers: list[Paper]) -> dict[str, Any]:
        """Set up an answer from metadata: its page-1 references and no retrieval. A model-written
        one is checked sentence by sentence against the metadata records it cites."""
        assert self.metadata_answer is not None
        self.references = {ref.n: ref for ref in self.metadata_answer.references}
        self.extractive = not self.metadata_answer.by_model
        self._load_labels(papers)
        return events.answer_start(extractive=self.extractive, indexing=[], failed=[])

    def _load_labels(self, papers: list[Paper]) -> None:
        self.unreadable = {p.pk: note for p in papers if (note := p.unreadable_pages_note())}
        self.cited_papers = {p.pk: p for p in papers}
        # The metadata the project's owner sees: the PDF's, with their corrections over it.
        self.labels = paper_labels((p.pk, p.display_title, p.cited.authors_text, p.cited.year) for p in papers)

    def citation(self, n: int) -> dict[str, object]:
        """The reference's citation plus what the hover card shows: the paper's label (title, with
        first author and year when another project paper has the same title; "Supplement to
        <title>" for a supplement), first author, year, the quoted text, an author-year citation
        ("(Surname 2020, supplement, p. 3)" for a supplement) and a BibTeX entry to copy."""
        reference = self.references[n]
        citation = super().citation(n)
        paper = self.labels.get(reference.paper_id)
        if paper is None:
            return citation
        # The labels' papers are `cited_papers` (`_load_labels`); an entry is built per citation.
        record = self.cited_papers[reference.paper_id]
        return citation | {
            "label": paper.label,
            "author": paper.first_author,
            "year": paper.year,
            "quote": self.quotes.get(n, ""),
            "cite": author_year_citation(
                first_author=paper.first_author,
                year=paper.year,
                page=str(citation.get("printed") or reference.page),
                title=paper.title,
                supplement=record.is_supplement,
            ),
            "bibtex": paper_bibtex(record),
        }

    def _cited_texts(self, n: int) -> list[str]:
        return [self.quotes.get(n, ""), *super()._cited_texts(n)]

    async def _pieces(self) -> AsyncGenerator[str, None]:
        if self.metadata_answer is not None:
            self.status = self.metadata_answer.status
            for word in words(self.metadata_answer.text):
                yield word
            return
        retrieval = self.retrieval
        assert retrieval is not None
        if self.only_title is not None:
            # "And the other paper?" in a project of one paper: re-asking about that paper would
            # answer another question.
            self.status = Status.NOT_STATED
            for word in words(NO_OTHER_PAPER.format(title=self.only_title)):
                yield word
            return
        if self.unclear_titles:
            # Which of several papers "the other paper" is, the reader says: asking them all at once
            # answers another question.
            self.status = Status.NOT_STATED
            listing = joined_with_and([f"“{title}”" for title in self.unclear_titles])
            for word in words(WHICH_OTHER_PAPER.format(papers=listing)):
                yield word
            return
        absent = self.analysis.absent_name if self.analysis is not None else None
        acting = self.analysis.acting_name if self.analysis is not None else None
        if absent is None and acting is not None and not _spoken_of(acting, retrieval.references):
            # "How does Chubby handle that?" in a project without Chubby, whose passages never name
            # it: the previous turn's passages would pass for what Chubby does.
            absent = acting
        if absent is not None and retrieval.searched_papers:
            # "How big is a chunk in the GFS paper?" in a project without GFS: other papers' passages
            # about chunks would pass for what that paper says.
            self.status = Status.NOT_STATED
            like = self.analysis.absent_like if self.analysis is not None else None
            message = ABSENT_PAPER.format(name=absent) + (CLOSE_NAME.format(name=like) if like else "")
            for word in words(message):
                yield word
            return
        if not retrieval.references:
            answer, self.status = REFUSAL, Status.NOT_STATED
            if not retrieval.searched_papers and not retrieval.indexing and not retrieval.failed:
                answer, self.status = NO_PAPERS, Status.NO_PAPERS
            elif retrieval.indexing and not retrieval.searched_papers:
                answer, self.status = NOT_READY, Status.NO_PAPERS
            elif retrieval.failed and not retrieval.searched_papers:
                answer, self.status = NONE_INDEXED, Status.NO_PAPERS
            else:
                if self.named_titles and self.analysis is not None:  # "Which university developed Chubby?"
                    answer = not_stated_in(self.analysis, self.named_titles)
                answer += self._unreadable_note(retrieval)
            for word in words(answer):
                yield word
            return
        if self.extractive:
            result = await in_answer_pool(extractive_answer)(
                self.question,
                retrieval.references,
                query_embedding=retrieval.query_embedding,
                analysis=self.analysis,
                labels={pid: paper.label for pid, paper in self.labels.items()},
                papers=list(self.cited_papers.values()),
            )
            # The whole answer is known before it streams: number references as they appear.
            answer, mapping = renumber_by_first_citation(result.text, self.references)
            self.references = {mapping[n]: replace(ref, n=mapping[n]) for n, ref in self.references.items()}
            self.sentences = [
                replace(s, citations=tuple(mapping.get(n, n) for n in s.citations)) for s in result.sentences
            ]
            for sentence in self.sentences:
                for n in sentence.citations:
                    self.quotes.setdefault(n, _quote_of(sentence))
            self.status = result.status
            for word in words(answer + self._unreadable_note(retrieval)):
                yield word
                await asyncio.sleep(0)
            return
        messages = build_messages(question=self.question, references=retrieval.references, history=self.history)
        async with aclosing(llm.stream_chat(messages, model=llm.configured_chat_model(project=True))) as stream:
            async for piece in stream:
                yield piece
        for word in words(self._unreadable_note(retrieval)):
            yield word

    def _unreadable_note(self, retrieval: Retrieval) -> str:
        """ "" or a closing line admitting the unread pages of the papers this answer drew on (every
        searched paper when it quotes none): "Note: 2 pages of X could not be read ..."."""
        about = {ref.paper_id for ref in retrieval.references} or set(self.unreadable)
        notes = [note for pid, note in self.unreadable.items() if pid in about]
        if not notes:
            return ""
        return f"\nNote: {'; '.join(notes)} (no readable text), so they were not searched."

    def _checks_support(self) -> bool:
        return not self.extractive and bool(self.references)

    def _check(self, sentence: str) -> str:
        shown, checked = check_sentence(sentence, self.references, sentence_vectors.embed)
        if checked is not None:
            self.sentences.append(checked)
        return shown

    async def _finish(self, cited: list[int]) -> list[dict[str, Any]]:
        if self.extractive or not self.references:
            return []
        self.status = answer_status(self.sentences)
        if citations_unreadable(self.text, cited):
            logger.warning(
                "Citations could not be read in an answer in project %s: %r", self.project.pk, self.text[:500]
            )
            self.sentences = [replace(s, supported=False) for s in self.sentences]
            self.status = Status.PARTLY_ANSWERED if self.sentences else Status.NOT_STATED
            return self._emit(UNREADABLE_NOTE, [])
        return []

    def _save_question(self) -> None:
        if not self.persist:
            return
        chat = get_or_create_chat(self.project)
        # The asker is the session's user (the authenticated one), never anything a client sent.
        self.question_message = ChatMessage.objects.create(
            chat=chat, author=self.user, role=ChatMessage.Role.USER, text=self.question
        )

    def _save_answer(self, state: str) -> ChatMessage | dict[str, Any]:
        if not self.persist:  # the Message shape, unsaved
            return {"id": None, "role": ChatMessage.Role.ASSISTANT, **self._answer_fields(state), "created_at": None}
        with transaction.atomic():
            if self.question_message is None:
                # Stopped before the question was saved (a cancel right after asking): the thread
                # keeps the question before its stopped answer, never an answer to nothing. On the
                # same database thread as `_save_question`, so a save already running comes first.
                self._save_question()
            message = self._write_answer(state)
            trim_chat(project=self.project)
        return message

    def _save_progress(self) -> None:
        if self.persist:
            self._write_answer(ChatMessage.State.STOPPED)

    def _answer_fields(self, state: str) -> dict[str, Any]:
        """The answer's saved fields (ChatMessage columns), as they stand now, in *state*."""
        return {
            "text": self.text,
            "citations": self.citation_map(),
            "state": state,
            "extractive": self.extractive,
            "status": self.status,
            "sentences": [s.as_json() for s in self.sentences],
        }

    def _write_answer(self, state: str) -> ChatMessage:
        """Update the row a progress save made; create it when there is none (or it was cleared)."""
        fields = self._answer_fields(state)
        message = self.answer_message
        if message is not None and ChatMessage.objects.filter(pk=message.pk).update(**fields):
            for name, value in fields.items():
                setattr(message, name, value)
            return message
        self.answer_message = ChatMessage.objects.create(
            chat=get_or_create_chat(self.project), role=ChatMessage.Role.ASSISTANT, **fields
        )
        return self.answer_message


@dataclass(frozen=True)
class Answer:
    """A finished answer: its text, the cited references in order of first citation, whether it is
    extractive, its status ("answered", "partly_answered", "not_stated", "no_papers"), its
    sentences with their `supported` flags, and `query`, the standalone question retrieval used (the
    question, or its rewrite when it followed up an earlier turn)."""

    text: str
    references: list[Reference]
    extractive: bool
    query: str = ""
    status: str = ""
    sentences: list[AnswerSentence] = field(default_factory=list)


def answer_question(*, project: Project, user: User, question: str, chat: bool = False) -> Answer:
    """Answer *question* synchronously (for commands). With *chat*, the question is a turn of the
    project's chat: it is resolved against the thread's history (follow-ups) and the question and
    answer are appended to the thread; without, it stands alone and nothing is saved."""
    session = AnswerSession(project=project, user=user, question=question, persist=chat)

    async def run() -> None:
        async for _ in session.events():
            pass

    # async_to_sync, not asyncio.run: the session's database calls then run in this thread, on this
    # thread's connection (and inside a caller's transaction), instead of a worker thread's.
    async_to_sync(run)()
    return Answer(
        text=session.text,
        references=[session.references[n] for n in session.cited],
        extractive=session.extractive,
        query=session.analysis.query if session.analysis is not None else question,
        status=str(session.status),
        sentences=session.sentences,
    )
