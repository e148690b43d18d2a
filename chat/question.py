"""Question analysis: what a question asks for, before anything is retrieved.

One pure step shared by retrieval (which papers to search first, which need a slot of their own)
and the answer step (which sentences hold the kind of fact asked for). `analyse_question` is the
entry point; everything here is a pure function over strings and paper descriptions, except
`rewrite_with_model`, which asks the configured chat model (`annotagent.llm`) for a standalone question.

How a question names a paper (`paper_names`, `mentions`): by its title; by a short name derived from
the title (a leading "Name:" before a colon, a parenthesised name, a CamelCase word or acronym, a
capitalised word in a sentence-case title, the initials of a title-case title: "The Google File
System" -> "GFS") or from the abstract's own introduction of it ("Raft is a consensus algorithm",
"we describe ZooKeeper, ..."); by its first author's surname ("Burrows"). No paper list is built in.

Follow-ups are resolved without a chat model by a deterministic rewrite against the previous
answered turn (`resolve_follow_up`): "the second paper", "the other one", "the former", "both",
"it" (as the subject) become the papers of that turn; "that", "this", "it" (as the object), "do
it", "the same" become its topic; a question with no content of its own ("And Bigtable?", "What
about the other one?") becomes the previous question about the new papers.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import lru_cache

from chat.prompts import Turn
from indexing.chunking import is_vocabulary_word
from indexing.lexical import plural_stem
from papers import figures
from papers.citation import first_author_surname

logger = logging.getLogger(__name__)


class AnswerType(StrEnum):
    """The kind of fact a question asks for."""

    QUANTITY = "quantity"  # how many, how much, what size/range/latency ...: a number, often with a unit
    ENTITY = "entity"  # who, which system, what name: a named thing
    YES_NO = "yes_no"  # does/is/can ...: a polar question
    MECHANISM = "mechanism"  # how does X do Y, why: a process or reason
    DEFINITION = "definition"  # what is X, define X
    OTHER = "other"


@dataclass(frozen=True)
class PaperRef:
    """What the analysis knows of a searchable paper: its id and the names a question may call it by
    (title, short name such as "Raft" or "GFS", first author's surname). `abstract` (optional) lets a
    short name the title lacks be found where the paper introduces itself ("Raft is a ...")."""

    paper_id: int
    title: str
    first_author: str = ""
    year: int | None = None
    abstract: str = ""
    venue: str = ""  # "OSDI 2006": "the OSDI paper" calls a paper by it


@dataclass(frozen=True)
class QuestionAnalysis:
    """The analysed question.

    `query` is the standalone question retrieval and quoting use: the question itself, or its
    rewrite against the conversation when it is a follow-up (`rewritten` then True).
    `named_paper_ids` are the papers the question (or the turn it follows up) names, in the order
    named; `comparison` is True when the question compares or relates several papers or asks
    broadly across them, `broad` when it asks across the project's papers (not only named ones);
    `answer_type` the kind of fact asked for; `key_terms` the content words (lower case) that
    evidence should contain: the query's words without question words, function
    words, light verbs ("use", "handle") and the names of the papers it names.
    """

    question: str
    query: str
    answer_type: AnswerType = AnswerType.OTHER
    named_paper_ids: tuple[int, ...] = ()
    comparison: bool = False
    rewritten: bool = False
    broad: bool = False
    key_terms: tuple[str, ...] = field(default=())
    # The sub-questions of a compound question, each analysed alone (see `question_parts`); empty
    # for a question that asks one thing.
    parts: tuple[QuestionAnalysis, ...] = field(default=())
    # For a question about several named papers, each one's own query (see `paper_queries`).
    paper_queries: tuple[tuple[int, str], ...] = field(default=())
    # For a question about how named papers bear on one another (`relates_papers`): (paper id, the
    # name the question calls it by). A passage of one of them states the relation only where it
    # names another.
    related_names: tuple[tuple[int, str], ...] = field(default=())
    # For a follow-up, the previous answer's cited (paper id, page) pairs and the sentences it
    # quoted: what the follow-up asks next is often beside what was just quoted, and not the same.
    previous_pages: tuple[tuple[int, int], ...] = field(default=())
    said_before: tuple[str, ...] = field(default=())
    # "And the other paper?" with several other papers in the project and none brought into the
    # conversation: the candidates; the answer asks which one is meant.
    unclear_papers: tuple[int, ...] = field(default=())
    # A paper the question calls by a name none of the project's papers goes by ("the GFS paper"):
    # `absent_paper`; None when it names none, or names papers of the project.
    absent_name: str | None = None
    # The project's paper name closest in spelling to `absent_name` ("Bigtable" for "Bigtabel"),
    # when one is close (`close_paper_name`): the answer asks whether that paper was meant.
    absent_like: str | None = None
    # "And the other paper?" in a project of one paper: there is none, and the answer says so.
    no_other_paper: bool = False
    # A system the question asks about as the subject of its verb, by a name that is no paper's of
    # the project ("How does Chubby handle that?"): `acting_name`. Unlike `absent_name` it may be a
    # thing a paper discusses (a tool S2ORC uses), which only the passages can tell.
    acting_name: str | None = None


# --- answer type ----------------------------------------------------------------------------------

# Nouns whose value is a number: "What chunk size does GFS use?", "What is the lease timeout?".
_QUANTITY_NOUNS = (
    r"size|sizes|number|count|amount|range|rate|rates|latency|latencies|throughput|ratio|proportion|percentage|"
    r"percent|fraction|share|length|duration|timeout|timeouts|interval|period|limit|threshold|capacity|bandwidth|"
    r"overhead|speedup|speed|frequency|delay|accuracy|precision|recall|score|cost|fanout|factor|budget|"
    r"year|age|total|average|mean|median|maximum|minimum|max|min|dimension|dimensions|granularity|"
    r"temperature|temperatures|percent|percentage"
)
# A thing that is a measure ("throughput", "election timeout", "chunk size"): its last word is one.
_MEASURE_THING = re.compile(rf"\b(?:{_QUANTITY_NOUNS})\s*$", re.IGNORECASE)
# "What servers make up a Chubby cell?" is answered by how many ("five servers"); "Which servers
# take snapshots?" by which ones (an entity); "What data structure lets replicas ...?" by a name.
_COUNTED_NOUNS = r"participants|replicas|nodes|servers|machines"
# Words between the question word and the asked noun, none an auxiliary ("what chunk size", not
# "what does GFS use as its size").
_NOT_AUX_WORDS = r"(?: (?!(?:does|do|did|is|are|was|were|has|have|had|can|could|will|would)\b)[\w-]+)"
_QUANTITY = re.compile(
    r"\b(?:how (?:many|much|long|large|big|fast|often|small|far|high|low|quickly|frequently|deep|wide|tall|heavy|"
    r"old|well)|"
    r"at what (?:rate|size|speed|temperature|frequency|cost)|by how (?:much|many)|in what year|"
    # "How did Grobid fare on the same evaluation?": a result, in figures; not "How does Raft
    # perform leader election?", where the verb has an object.
    r"how (?:did|does|do) [\w' -]{1,40}? (?:fare|perform|score|do)"
    r"(?=\s*(?:[?.!]|$|on\b|in\b|at\b|against\b|compared\b|relative\b|with\b|when\b|under\b))|"
    r"what (?:percentage|fraction|proportion)|"
    rf"(?:what|which)(?: (?:is|are|was|were|'s))?(?: the| a| an| its| their)?"
    rf"{_NOT_AUX_WORDS}{{0,3}}? (?:{_QUANTITY_NOUNS})\b|"
    rf"what{_NOT_AUX_WORDS}? (?:{_COUNTED_NOUNS})\b)",
    re.IGNORECASE,
)
_YES_NO = re.compile(
    r"^(?:does|do|did|is|are|was|were|can|could|will|would|should|has|have|had|may|might)\b", re.IGNORECASE
)
_MECHANISM = re.compile(
    r"^(?:how|why)\b|\b(?:how (?:does|do|did|is|are|can|could|would)|why (?:does|do|did|is|are)|what happens|"
    r"explain|in what way)\b",
    re.IGNORECASE,
)
# "in ZooKeeper", "in the Bigtable paper": where the defined thing lives, not part of its name.
_WHERE = r"(?: (?:in|of) (?:the )?(?-i:[A-Z])[\w-]*(?: paper)?)?"
_DEFINITION = re.compile(
    rf"^(?:what (?:is|are) (?:a |an |the )?[\w-]+(?: [\w-]+)?{_WHERE}\??$|define\b|what does .+ (?:mean|stand for)|"
    r"what is meant by\b)",
    re.IGNORECASE,
)
# The thing a definition question asks about: "What is a znode in ZooKeeper?" -> "znode".
_DEFINED = re.compile(
    rf"^(?:what (?:is|are) (?:a |an |the )?(?P<a>[\w-]+(?: [\w-]+)?){_WHERE}\??$|"
    r"define (?:a |an |the )?(?P<b>[\w -]+?)\W*$|"
    r"what does (?:a |an |the )?(?P<c>.+?) (?:mean|stand for)\W*$|what is meant by (?:a |an |the )?(?P<d>.+?)\W*$)",
    re.IGNORECASE,
)
# "In which programming language ...?", "On which hardware ...?": a preposition before the question word.
_ENTITY = re.compile(
    r"^(?:(?:in|on|at|by|from|for|with|under|to)\s+(?:which|what)\s+(?!extent\b|way\b|ways\b|order\b|sense\b)"
    r"|who|whom|which|what (?:system|systems|tool|tools|method|methods|dataset|datasets|paper|papers|model|"
    r"models|algorithm|algorithms|name|language|library|company|service|protocol|technique|data|hardware|"
    r"software|framework|frameworks|platform|platforms|device|devices|database|databases|format|formats|"
    r"toolkit|toolkits|benchmark|benchmarks|corpus|corpora|metric|metrics)"
    # "What cloud provider ...?", "What operating system ...?": a maker or place, named.
    r"|what (?:[a-z-]+\s+)?(?:provider|providers|vendor|vendors|company|companies|organi[sz]ation|"
    r"organi[sz]ations|institution|institutions|university|universities|manufacturer|operating\s+system|"
    r"compiler|browser|editor|processor|processors|cpus?|gpus?|"
    # "What PDF library ...?", "Which web framework ...?": a named tool of a kind.
    r"library|libraries|toolkit|toolkits|framework|frameworks|parser|parsers|package|packages))\b"
    # "What does S2ORC use to split text into sentences?": the thing used, a tool ("scispaCy"); not
    # "What does Bigtable use Chubby for?", which asks what for.
    r"|^what (?:does|do|did) (?:(?!use\b)[\w'\u2019-]+\s+){1,4}use (?:to|for)\b",
    re.IGNORECASE,
)
_LEAD_IN = re.compile(r"^(?:according to [^,]+,|in [^,]{1,60},|and|also|so|then|but)\s+", re.IGNORECASE)


def _without_lead_in(question: str) -> str:
    text = question.strip()
    while (lead := _LEAD_IN.match(text)) is not None:
        text = text[lead.end() :]
    return text


# Pure, and asked once per candidate sentence while an answer is scored (`chat.extractive`).
@lru_cache(maxsize=4096)
def defined_term(question: str) -> str | None:
    """What a definition question asks to define, as written ("What is a znode in ZooKeeper?" ->
    "znode", "What does SSTable stand for?" -> "SSTable"); None for any other question."""
    match = _DEFINED.match(_without_lead_in(question))
    if match is None or classify_answer_type(question) != AnswerType.DEFINITION:
        return None
    return next(group for group in match.groups() if group).strip()


# "What similarity score is used ...", "Which threshold does GFS pick ...": the thing asked for, at
# most four words between "what"/"which" and the verb.
_ASKED_THING = re.compile(
    r"^(?:what|which)\s+(?!(?:is|are|was|were|does|do|did|has|have|can|will|would|should|kind|sort|type)\b)"
    r"(?P<thing>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)\s+(?:is|are|was|were|does|do|did|has|have|can|will)\b",
    re.IGNORECASE,
)


# "What is the chunk size in Bigtable?", "What's the problem with the simplest lock recipe?": the
# thing after "the" (a problem, a difficulty, with what it is of).
_WHAT_IS_THE_THING = re.compile(
    r"^what\s+(?:is|are|was|were)\s+the\s+(?P<thing>(?:problems?|difficulty|drawback|downside|issues?|limitation)"
    r"\s+(?:with|of)\s+(?:the\s+)?(?:[a-z][\w-]*\s+){0,3}?[a-z][\w-]*"
    # not what a thing is for ("What is the purpose of the master?": "it" is then the master)
    r"|(?!(?:purpose|role|goal|aim|difference|reason|advantage|benefit|idea|point|meaning)\b)"
    r"(?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*)"
    r"(?=\s*(?:[?.!,]|$|\b(?:in|of|for|on|with|that|when|used|at)\b))",
    re.IGNORECASE,
)
# "What do GFS shadow masters offer while ...?": the things that act (a paper's name before them left out).
_WHAT_DO_THINGS = re.compile(
    r"^what\s+(?:do|did)\s+(?:(?-i:[A-Z])[\w-]*\s+)?(?P<thing>(?:(?-i:[a-z])[\w-]*\s+)?(?-i:[a-z])[\w-]*[^s\W]s)"
    r"\s+(?-i:[a-z])+\b",
    re.IGNORECASE,
)
# "Which of the filters removes the most?": one of the things named after "of".
_WHICH_OF_THINGS = re.compile(
    r"^which\s+of\s+(?:the|these|those|its|their)\s+"
    r"(?P<thing>(?-i:[a-z])[\w-]*[^s\W]s|(?-i:[a-z])[\w-]*[^s\W]\s+(?-i:[a-z])[\w-]*[^s\W]s)\b",
    re.IGNORECASE,
)
# "What does the snapshot operation in GFS do?": the thing that does it (the paper it is in left out).
_WHAT_DOES_THE_THING_DO = re.compile(
    r"^what\s+(?:does|did|do)\s+the\s+(?P<thing>(?-i:[a-z])[\w-]*(?:\s+(?-i:[a-z])[\w-]*){0,2}?)"
    r"(?:\s+(?:in|of)\s+(?-i:[A-Z])[\w-]*)?\s+(?:do|provide|offer|guarantee|achieve|return|store|contain)\s*[?.!]*$",
    re.IGNORECASE,
)
# "How is the similarity score (for linking bibliography entries) computed?", "Why are leases
# renewed ...": the thing a passive how/why question is about, at most seven words between the
# verb and its participle.
_PASSIVE_THING = re.compile(
    r"^(?:how|why|when|where)\s+(?:is|are|was|were)\s+(?:the\s+|an?\s+)?"
    r"(?P<thing>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,6}?)\s+"
    r"(?:[a-z]+(?:ed|en)|built|kept|held|made|sent|run|set|chosen|done|split|spent|paid|read|written)\b",
    re.IGNORECASE,
)


# "What servers make up a Chubby cell?", "Which filters remove the most papers?": plural things as
# the subject of a plural verb (no auxiliary).
# Verbs in -s that follow "what" with no thing between: "What happens ...?", "What follows?".
_WHAT_VERBS = r"happens|goes|means|matters|remains|follows|changes|comes|causes"
_SUBJECT_THINGS = re.compile(
    rf"^(?:what|which)\s+(?!(?:{_WHAT_VERBS}|is|was|does|has)\b)"
    # The word after the things is their verb, no article ("Which filter removes the most?": a verb).
    r"(?P<thing>(?:[a-z][\w-]*\s+)?[a-z][\w-]*[^s\W]s)\s+"
    r"(?!(?:the|a|an|its|their|this|that|these|those|each|every)\s)(?=[a-z]+(?<![^s]s)(?<!ed)\s)",
    re.IGNORECASE,
)


# "Which cloud provider hosts the servers?": a thing, its verb, then the verb's object.
_SUBJECT_THING = re.compile(
    rf"^(?:what|which)\s+(?!(?:{_WHAT_VERBS}|is|are|was|were|"
    r"does|do|did|has|have|can|could|will|would|should|kind|sort|type)\b)"
    r"(?P<thing>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+(?!(?:is|are|was|were|does|do|did|has|have|can|will)\b)"
    r"[a-z]+\s+(?:the|a|an|its|their|each|every)\b",
    re.IGNORECASE,
)


# "What did the first version of Chubby use as its database?": the thing is the role named last.
_USED_AS = re.compile(
    r"^(?:what|which)\s+(?:is|are|was|were|does|do|did)\b.+?\b(?:use|used|choose|chose|pick|adopt)\s+(?:as|for)\s+"
    r"(?:its|their|the|a|an)\s+(?P<thing>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s*[?.!]*$",
    re.IGNORECASE,
)
# "How large is the raw click table that Google Analytics keeps?": a measure of the copula's subject.
_MEASURED_SUBJECT = re.compile(
    r"^how\s+(?!many\b|much\b)[a-z]+\s+(?:is|are|was|were)\s+(?:the|an?)\s+"
    r"(?P<thing>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)(?=\s+(?:that|which|who|in|of|for|on|at)\b|\s*[?.!]*$)",
    re.IGNORECASE,
)


# "How long does a Chubby lease last by default?": the thing whose doing is measured (a paper's name
# before it left out), what "it" of "Can it be extended?" is.
_MEASURED_DOING = re.compile(
    r"^how\s+(?:long|often|fast|quickly)\s+(?:does|do|did)\s+(?:the|an?)\s+(?:(?-i:[A-Z])[\w-]*\s+)?"
    r"(?P<thing>(?-i:[a-z])[\w-]*(?:\s+(?-i:[a-z])[\w-]*){0,2}?)\s+(?:last|lasts|take|run|live|stay|hold|persist)\b",
    re.IGNORECASE,
)


# "What is GROBID used for in S2ORC?", "How does CoreRecipe parse a PDF?": a name (a tool, a model, a
# component; capitals inside the word or an acronym) as the subject of the question's auxiliary.
_NAMED_SUBJECT = re.compile(
    r"^(?:what|how|why|where|when|which\s+[a-z]+)\s+(?:is|are|was|were|does|do|did|can|could)\s+(?:the\s+)?"
    r"(?P<name>(?-i:[A-Z][a-z]*[A-Z0-9][\w-]*|[A-Z]{2,}[\w-]*))\b(?!['\u2019])",
    re.IGNORECASE,
)


def named_subject(question: str, papers: Sequence[PaperRef] = ()) -> str | None:
    """The name that is the subject of *question* when it is no paper's name ("What is GROBID used
    for in S2ORC?" -> "GROBID"): what a follow-up's "it" is ("What F1 does it achieve?"). None for
    another form, or a paper's name ("How does Raft elect a leader?")."""
    match = _phrase_match(_NAMED_SUBJECT, question, papers, "name")
    return None if match is None else match["name"]


# "How does Paper Plain generate section gists?": the plural object of a how-question's verb.
_HOW_OBJECT = re.compile(
    r"^how\s+(?:does|do|did|can|could|would|will)\s+[\w' -]+?\s+(?P<verb>[a-z]{3,})\s+(?:the\s+|its\s+|their\s+)?"
    r"(?P<thing>(?:[a-z][\w-]*\s+)?[a-z][\w-]*[^s\W]s)\s*[?.!]*$",
    re.IGNORECASE,
)


def how_object(question: str, papers: Sequence[PaperRef] = ()) -> str | None:
    """The plural things a "how does X <verb> <things>?" question is about ("How does Paper Plain
    generate section gists?" -> "section gists"): what a follow-up's "they"/"them" are ("Were they
    accurate?"). None for another form, or things that name a paper."""
    match = _phrase_match(_HOW_OBJECT, question, papers, "thing")
    return None if match is None or match["verb"].casefold() in _NOT_A_VERB else match["thing"]


# Words that end a how-question's subject without being its verb.
_NOT_A_VERB = frozenset("and or of the a an in on for with".split())


def measured_subject(question: str, papers: Sequence[PaperRef] = ()) -> str | None:
    """The subject a "how <adjective> is the X ...?" question measures ("How large is the raw
    click table that Google Analytics keeps?" -> "raw click table"): what a follow-up's "it" is
    ("How well does it compress?"). None for another form, or when the subject names a paper."""
    match = _phrase_match(_MEASURED_SUBJECT, question, papers, "thing")
    match = match or _phrase_match(_MEASURED_DOING, question, papers, "thing")
    return None if match is None else match["thing"]


def _phrase_match(
    pattern: re.Pattern[str], question: str, papers: Sequence[PaperRef], group: str
) -> re.Match[str] | None:
    """*pattern* matched at the start of *question* (its lead-in left out), None when it does not
    match or its *group* names one of *papers*."""
    match = pattern.match(_without_lead_in(question))
    return None if match is None or mentions(match[group], papers) else match


# "What is the chunk size?", "What was the median election time?": a measure with its modifiers,
# asked for after "is the"; a definition's "What is a chunk?" has no measure noun.
_WHAT_IS_MEASURE = re.compile(
    rf"^(?:what|which)\s+(?:is|are|was|were)\s+(?:the|its|their)\s+"
    rf"(?P<thing>(?:[\w-]+\s+){{1,3}}?(?:{_QUANTITY_NOUNS}))(?=\s*(?:[?.!,]|$|(?:in|of|for|on|at|that|used)\b))",
    re.IGNORECASE,
)


def measured_thing(question: str, papers: Sequence[PaperRef] = ()) -> str | None:
    """The measure a "what is the X <measure noun>?" question asks for, with its modifiers ("In the
    Dynamo paper, what is the chunk size?" -> "chunk size"); None for another form, a measure of
    no modifier ("What is the size?") or one that names a paper."""
    match = _phrase_match(_WHAT_IS_MEASURE, question, papers, "thing")
    return None if match is None else match["thing"]


def asked_thing(question: str, papers: Sequence[PaperRef] = ()) -> str | None:
    """The thing a "what X"/"which X" question asks for, as written ("What similarity score is used
    for bibliography linking?" -> "similarity score"), or the subject of a passive how/why question
    ("How is the similarity score computed?" -> "similarity score"); None when there is none, or it
    names a paper or the papers themselves ("Which paper introduced Raft?")."""
    return _thing_of(question, papers, (_ASKED_THING, _PASSIVE_THING, _SUBJECT_THINGS, _SUBJECT_THING, _USED_AS))


def _referent(question: str, papers: Sequence[PaperRef]) -> str | None:
    """What "it" of a follow-up to *question* may stand for: its `asked_thing`, or the thing after
    "What is the" ("What's the chunk size in Bigtable?" -> "chunk size"; "What is the problem with
    the simplest lock recipe?" -> "problem with the simplest lock recipe"), the subject of "What
    does the X do?" ("snapshot operation"), or the things of "Which of the X ...?" ("filters")."""
    plain = re.sub("(?<!\\w)['\u2018]|['\u2019](?!\\w)|[\"\u201c\u201d]", "", question)  # "GFS 'shadow' masters"
    return asked_thing(question, papers) or _thing_of(
        plain, papers, (_WHAT_IS_THE_THING, _WHAT_DO_THINGS, _WHAT_DOES_THE_THING_DO, _WHICH_OF_THINGS)
    )


def _thing_of(question: str, papers: Sequence[PaperRef], patterns: Sequence[re.Pattern[str]]) -> str | None:
    """The `thing` group of the first of *patterns* that matches *question* (lead-in skipped,
    "what's" read as "what is"), unless it names a paper or the papers themselves."""
    question = _CONTRACTED_IS.sub(r"\1 is", _without_lead_in(question))
    match = next((m for pattern in patterns if (m := pattern.match(question)) is not None), None)
    if match is None:
        return None
    thing = match.group("thing")
    # "the first paper" names a paper; "paper clustering" is a thing of its own.
    if mentions(thing, papers) or thing.split()[-1].casefold() in _PAPER_WORDS:
        return None
    return thing


def _thing_phrase(question: str, thing: str) -> str:
    """*thing*, the subject *question* asks about (`asked_thing`), with what the question says of it
    as a relative clause: "What servers make up a Chubby cell?" -> "servers that make up a Chubby
    cell"; *thing* alone when it is no subject ("What chunk size does GFS use?")."""
    question = _without_lead_in(question)
    match = _SUBJECT_THINGS.match(question) or _SUBJECT_THING.match(question)
    if match is None or match.group("thing") != thing:
        return thing
    rest = question[match.end("thing") :].strip(" ?.!")
    return f"{thing} that {rest}" if rest else thing


# Case-blind, unlike a paper's own labels (`papers.figures`): questions are typed "table 3".
_LABEL = re.compile(r"\b(?P<kind>table|figure|fig\.)\s*(?P<number>\d+)\b", re.IGNORECASE)


def figure_label(question: str) -> str | None:
    """The table or figure a question asks about, as a caption labels it ("What does Table 3
    show?" -> "Table 3", "what is in fig. 2" -> "Figure 2"; `papers.figures.figure_label`'s normal
    form); None when it names none."""
    match = _LABEL.search(question)
    return None if match is None else figures.figure_label(match["kind"], match["number"])[1]


def classify_answer_type(question: str) -> AnswerType:
    """The kind of fact *question* asks for, from its wording (English question forms).

    A lead-in ("According to the ZooKeeper paper, ...", "And ...") is skipped first. Quantity wins
    over the other kinds: "What chunk size does GFS use?" asks for a number."""
    text = _without_lead_in(question)
    if _QUANTITY.search(text):
        return AnswerType.QUANTITY
    if _DEFINITION.search(text):
        return AnswerType.DEFINITION
    if _ENTITY.search(text):
        return AnswerType.ENTITY
    if _YES_NO.search(text):
        return AnswerType.YES_NO
    if _MECHANISM.search(text):
        return AnswerType.MECHANISM
    return AnswerType.OTHER


# --- words ----------------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")
_FUNCTION_WORDS = frozenset(
    "a an the and or but nor of in on at to for from by with without into onto over under about above below "
    "between among through during before after since until upon within across against along around as than "
    "then so if whether while because though although this that these those it its they them their there "
    "here we our us you your i my me he she his her him what which who whom whose when where why how "
    "is are was were be been being am do does did done doing has have had having can could will would shall "
    "should may might must not no yes also too very just only more most much many some any each every all "
    "both either neither other another such same own again further once s t".split()
)
# Verbs that carry no topic of their own: "How does Chubby handle that?" is about "that".
_LIGHT_VERBS = frozenset(
    "use uses used using handle handles handled handling deal deals dealt work works worked get gets got "
    "make makes made provide provides achieve achieves ensure ensures say says said mention mentions "
    "describe describes described discuss discusses discussed report reports reported tell "
    "apply applies applied employ employs employed adopt adopts adopted".split()
)
# Words that say something about papers, not about their content.
_PAPER_WORDS = frozenset(
    "paper papers article articles author authors work publication according one ones "
    "former latter first second third fourth fifth last compare compared comparison differ differs "
    "difference differences versus vs respectively each et al".split()
)
_NON_TERMS = _FUNCTION_WORDS | _LIGHT_VERBS | _PAPER_WORDS


# The noun a paper states a dimension with, by the adjective a question asks "how ..." with: "How
# deep does the crawler crawl?" is answered by "Maximum crawl depth: 6 links".
DIMENSIONS = {
    "deep": "depth", "wide": "width", "tall": "height", "heavy": "weight", "old": "age", "far": "distance",
    "large": "size", "big": "size",
}  # fmt: skip
_HOW_DIMENSION = re.compile(r"\bhow (" + "|".join(DIMENSIONS) + r")\b", re.IGNORECASE)


def how_dimensions(text: str) -> list[str]:
    """The nouns of the dimensions *text* asks "how ..." about, in order (`DIMENSIONS`: "How deep
    does the crawler crawl?" -> ["depth"])."""
    return [DIMENSIONS[adjective.casefold()] for adjective in _HOW_DIMENSION.findall(text)]


def key_terms(text: str) -> tuple[str, ...]:
    """The content words of *text*, lower case, in order, without repeats: no function words,
    question words, light verbs or paper words ("paper", "authors", "compare"). An adjective asked
    with "how" brings its dimension's noun (`DIMENSIONS`: "how deep" -> "deep", "depth")."""
    terms: list[str] = []
    previous = ""
    for word in _WORD.findall(text):
        folded = word.casefold().replace("\u2019", "'")
        if folded.endswith("'s"):
            folded = folded[:-2]
        dimension = DIMENSIONS.get(folded) if previous == "how" else None
        previous = folded
        if dimension and dimension not in terms:
            terms += [t for t in (folded, dimension) if t not in terms and t not in _NON_TERMS]
            continue
        if folded in _NON_TERMS or folded in terms or (len(folded) < 2 and not folded.isdigit()):
            continue
        terms.append(folded)
    return tuple(terms)


# --- paper names ----------------------------------------------------------------------------------

_LEADING_NAME = re.compile(r"^\s*([^:]{2,40}?)\s*:\s+\S")
_PARENTHESISED = re.compile(r"\(([A-Z][\w-]*(?: [A-Z][\w-]*)?)\)")
_DISTINCT_WORD = re.compile(r"^(?:[A-Z]?[a-z]+[A-Z][\w]*|[A-Z][A-Z0-9]{1,}[a-z]?|[A-Z]+\d[\w]*)$")
_NAME = r"([A-Z][\w-]*(?: [A-Z][\w-]*)?)"
_ABSTRACT_NAME = (
    re.compile(rf"(?:^|[.;!?]\s+){_NAME} (?:is|are) (?:a|an|the)\b"),
    re.compile(
        rf"\b(?:we|paper|work|article) (?:present|presents|describe|describes|introduce|introduces|propose|"
        rf"proposes|call|calls|built|build|designed|implemented) (?:the )?{_NAME}(?=[,:(]| is| a | an )"
    ),
    re.compile(rf"\b(?:called|named|dubbed) {_NAME}\b"),
)
_GENERIC_NAMES = frozenset(
    "extended version draft preprint abstract full long short appendix supplementary revised technical report "
    "introduction overview this it we our the a an in on there these those here".split()
)
_TITLE_SMALL_WORDS = frozenset("a an the of for and or in on at to with by from via is are".split())


def _usable_name(name: str) -> bool:
    words = name.casefold().split()
    return bool(words) and not any(word in _GENERIC_NAMES for word in words) and len(name) >= 2


def _title_words(title: str) -> list[str]:
    return re.findall(r"[\w\u2019'-]+", title)


@lru_cache(maxsize=4096)
def paper_names(paper: PaperRef) -> tuple[str, ...]:
    """Short names *paper* may be called by, best first, case kept (see the module docstring).

    A name from the title's own wording comes first ("ZooKeeper" from "ZooKeeper: Wait-free ..."),
    then one the abstract introduces, then distinctive title words and the title's initials.
    """
    title = " ".join(paper.title.split())
    names: list[str] = []

    def add(name: str) -> None:
        name = name.strip(" ,.;'\u2019\"")
        if _usable_name(name) and name not in names:
            names.append(name)

    if 1 <= len(title.split()) <= 2 and ":" not in title:  # a title of a word or two is a name itself
        add(title)
    leading = _LEADING_NAME.match(title)
    if leading and len(leading.group(1).split()) <= 3:
        add(leading.group(1))
    for parenthesised in _PARENTHESISED.findall(title):
        add(parenthesised)
    for pattern in _ABSTRACT_NAME:
        for found in pattern.findall(paper.abstract[:1500]):
            add(found)
    if leading:  # the paper has a name of its own; more words of its subtitle would only mislead
        return tuple(names)
    words = _title_words(title)
    # A coined word opening the title is the paper's subject and name: "Paxos Made Simple".
    opening = [w for w in words if w.casefold() not in ("the", "a", "an")][:1]
    if opening and opening[0][:1].isupper() and opening[0].isalpha() and not is_vocabulary_word(opening[0]):
        add(opening[0])
    for word in words:
        if "-" not in word and _DISTINCT_WORD.match(word):
            add(word)
    # A capitalised word inside an otherwise lower-case (sentence-case) title is a name: "The Chubby
    # lock service for loosely-coupled distributed systems". The first word is capitalised anyway.
    inner = [w for w in words[1:] if len(w) >= 4 and w.casefold() not in _TITLE_SMALL_WORDS and "-" not in w]
    capitalised = [w for w in inner if w[0].isupper()]
    if inner and len(capitalised) <= len(inner) / 3:
        for word in capitalised:
            add(word)
    else:
        initials = "".join(w[0] for w in _title_words(title) if w.casefold() not in _TITLE_SMALL_WORDS)
        if 2 <= len(initials) <= 6 and initials.isupper() and initials.isalpha():
            add(initials)
    return tuple(names)


def surname(first_author: str) -> str:
    """The surname in a first author's name as a question would write it (`first_author_surname`,
    the citation labels' reading): "Mike Burrows" -> "Burrows", "Burrows, M." -> "Burrows", "Amy X.
    Zhang" -> "Zhang"; an all-capitals surname is capitalised ("AUGUST" -> "August"); "" when there
    is none."""
    last = first_author_surname(first_author)
    return last.capitalize() if last.isupper() else last


def first_author(authors: str) -> str:
    """The first of an author list ("A, B and C", "A; B", "A and B"), without affiliation marks
    ("Kyle Lo\u03b1\u2217, ..." -> "Kyle Lo"); "" when the list gives no separator and reads as
    several names run together (more than three words)."""
    first = re.split(r"\s*(?:;|,| and | & )\s*", authors.strip(), maxsplit=1)[0].strip()
    # Affiliation marks glued to names by PDF extraction (Greek letters, asterisks, digits) are no part of them.
    first = " ".join(re.sub(r"[^A-Za-z\u00c0-\u024f.'\u2019-]", "", word) for word in first.split()).strip()
    if len(first.split()) > 3:
        return ""
    return first


@dataclass(frozen=True)
class Mention:
    """Where a text names a paper: characters [start, end) of the text."""

    start: int
    end: int
    paper_id: int


# "Okafor et al.", "Lo et al.'s paper": the citation form of a first author's surname.
_ET_AL = r"(?:\s+et\s+al\b\.?(?:['\u2019]s)?)"


# The lower-case particles of a surname ("van Renesse", "de Moura"), part of the mention.
_SURNAME_PARTICLES = r"(?:(?:van|von|de|der|den|da|di|du|la|le|del|dos|ten|ter)\s+)*"
# The co-authors after a first author's surname: "Ongaro and Ousterhout", "Ghemawat, Gobioff and
# Leung" name one paper, whose first author alone the project knows.
_COAUTHORS = r"(?:,\s*[A-Z][\w'\u2019-]+){0,4},?\s+(?:and|&)\s+[A-Z][\w'\u2019-]+(?=['\u2019]s\b|[^\w'\u2019-]|$)"


# Months and days: words a question capitalises whatever they mean.
_CALENDAR_WORDS = frozenset(
    "January February March April May June July August September October November December "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
)


def _name_pattern(name: str, *, case_sensitive: bool, particles: bool = False) -> re.Pattern[str]:
    words = r"\s+".join(re.escape(word) for word in name.split())
    coauthors = f"(?P<coauthors>{_COAUTHORS})?" if particles else ""
    # "the Raft paper", "Raft's", "the ZooKeeper authors": the whole phrase is the mention.
    phrase = (
        rf"(?:\bthe\s+)?{_SURNAME_PARTICLES if particles else ''}(?<![\w-]){words}{coauthors}(?:['\u2019]s)?(?![\w-])"
        rf"{_ET_AL}?(?:\s+(?:paper|article|authors|work|system))?"
    )
    return re.compile(phrase, 0 if case_sensitive else re.IGNORECASE)


@lru_cache(maxsize=4096)
def _patterns(paper: PaperRef) -> list[re.Pattern[str]]:
    patterns: list[re.Pattern[str]] = []
    title = re.sub(r"^(?:the|a|an)\s+", "", " ".join(paper.title.split()), flags=re.IGNORECASE)
    if len(title.split()) >= 3:
        patterns.append(_name_pattern(title.rstrip("."), case_sensitive=False))
    for name in paper_names(paper):
        # A plain capitalised word ("Chubby", "Raft") could be an ordinary word in lower case; a
        # CamelCase word, acronym or several words ("ZooKeeper", "GFS", "Paper Plain") could not.
        plain = " " not in name and name[:1].isupper() and name[1:].islower()
        patterns.append(_name_pattern(name, case_sensitive=plain))
    name = surname(paper.first_author)
    if name in _CALENDAR_WORDS:
        # A surname that is a month or a day ("August") names the paper only in a citation's form:
        # "in August 2004" is a date; "August et al." and "August's paper" are the paper.
        cited = rf"(?:{_ET_AL}|['\u2019]s\s+(?:paper|article|work|study))(?:\s+(?:paper|article|work))?"
        patterns.append(re.compile(rf"(?<![\w-]){name}{cited}"))
    elif len(name) >= 3:
        patterns.append(_name_pattern(name, case_sensitive=True, particles=True))
    elif len(name) == 2 and name[0].isupper():
        # A two-letter surname ("Lo") is too common a word alone; "Lo et al." names the paper.
        patterns.append(re.compile(rf"(?<![\w-]){re.escape(name)}{_ET_AL}(?:\s+(?:paper|article|work))?"))
    return patterns


# "the nurse study", "the standing desk paper": a paper described by words of its title.
_DESCRIBED = re.compile(
    r"\bthe\s+(?P<words>(?:[A-Za-z][\w-]*\s+){1,3}?)(?:study|paper|article|survey|trial|experiment|report)\b",
    re.IGNORECASE,
)
# Words that say which paper by its place or kind, never by its title's words.
_NOT_DESCRIPTIVE = frozenset(
    "other same previous next new old first second third fourth fifth last former latter whole two three "
    "above cited present current following original earlier later main this that".split()
)


@lru_cache(maxsize=4096)
def _title_stems(paper: PaperRef) -> frozenset[str]:
    return frozenset(plural_stem(word.casefold()) for word in _title_words(paper.title))


def _described(text: str, papers: Sequence[PaperRef]) -> list[Mention]:
    """The places *text* describes a paper by words of its title ("the nurse study" for "Shift
    Length and Sleep Quality among Hospital Nurses"): every word before "study", "paper", ...
    is in that title (singular or plural) and in no other paper's title."""
    found = []
    for match in _DESCRIBED.finditer(text):
        words = [plural_stem(word.casefold()) for word in match.group("words").split()]
        if any(word in _NOT_DESCRIPTIVE or word in _FUNCTION_WORDS for word in words):
            continue
        fitting = [paper.paper_id for paper in papers if set(words) <= _title_stems(paper)]
        if len(fitting) == 1:
            found.append(Mention(match.start(), match.end(), fitting[0]))
    return found


def _quoted(mention: Mention, text: str) -> Mention:
    """*mention* with the quotation marks around it and an article inside them: a rewritten
    question names a paper as \u201cAn Eight-Week Mindfulness Programme ...\u201d, whose title
    pattern leaves out "An"; swapping the paper must replace the quotes too."""
    opening = re.search(r"\u201c(?:(?:the|a|an)\s+)?$", text[: mention.start], re.IGNORECASE)
    if opening is None or not text[mention.end :].startswith("\u201d"):
        return mention
    return Mention(opening.start(), mention.end + 1, mention.paper_id)


def mentions(text: str, papers: Sequence[PaperRef]) -> list[Mention]:
    """Every place *text* names one of *papers*, in text order, without overlaps (the longer
    mention wins: "The Google File System" over "Google"); a name several papers share gives a
    mention of each at the same place. A paper is also named by a description in its title's
    words (`_described`: "the sleep study")."""
    found: list[Mention] = _described(text, papers)
    listed: list[tuple[Mention, int]] = []  # a surname with co-authors, and where they start
    for paper in papers:
        for pattern in _patterns(paper):
            for m in pattern.finditer(text):
                mention = _quoted(Mention(m.start(), m.end(), paper.paper_id), text)
                if "coauthors" in pattern.groupindex and m.group("coauthors"):
                    listed.append((mention, m.start("coauthors")))
                else:
                    found.append(mention)
    for mention, cut in listed:
        # "Lamport and Ongaro" are two papers' first authors, not one paper's authors.
        other = any(o.paper_id != mention.paper_id and cut <= o.start < mention.end for o in found)
        found.append(Mention(mention.start, cut, mention.paper_id) if other else mention)
    found.sort(key=lambda m: (m.start, -(m.end - m.start)))
    kept: list[Mention] = []
    for mention in found:
        same_span = kept and (mention.start, mention.end) == (kept[-1].start, kept[-1].end)
        if kept and mention.start < kept[-1].end and not same_span:
            continue
        kept.append(mention)  # a name two papers share ("Paxos") names both
    return kept


def _by_place(found: Sequence[Mention]) -> dict[tuple[int, int], set[int]]:
    """The papers each place (start, end) of *found* names: two when they share the name there."""
    sharing: dict[tuple[int, int], set[int]] = {}
    for mention in found:
        sharing.setdefault((mention.start, mention.end), set()).add(mention.paper_id)
    return sharing


def _named_among(found: Sequence[Mention], sharing: dict[tuple[int, int], set[int]]) -> tuple[int, ...]:
    """`named_papers` of the mentions *found* (grouped by place in *sharing*)."""
    alone = {pid for ids in sharing.values() if len(ids) == 1 for pid in ids}
    kept = [
        m.paper_id
        for m in found
        if len(group := sharing[(m.start, m.end)]) == 1 or not group & alone or m.paper_id in alone
    ]
    return tuple(dict.fromkeys(kept))


def _times_named(text: str, papers: Sequence[PaperRef]) -> int:
    """How many papers or groups of papers *text* names apart: "Paxos", shared by two papers, is
    one; "the Dynamo paper by DeCandia et al." names one paper twice, which is one too."""
    found = mentions(text, papers)
    sharing = _by_place(found)
    kept = set(_named_among(found, sharing))
    return len({frozenset(ids & kept) for ids in sharing.values()} - {frozenset()})


def named_papers(text: str, papers: Sequence[PaperRef]) -> tuple[int, ...]:
    """The ids of the papers *text* names, in the order first named. A name several papers share
    names each of them, unless *text* names one of them by a name of its own: then it is that one
    ("the first phase of the Paxos algorithm in Paxos Made Simple" names only Paxos Made Simple)."""
    found = mentions(text, papers)
    return _named_among(found, _by_place(found))


def by_name(text: str, papers: Sequence[PaperRef]) -> str:
    """*text* with each paper it names by its first author's surname named by the paper's short
    name instead ("What did Hunt et al. measure?" -> "What did ZooKeeper measure?"): a surname says
    which paper, not what it is about, and the passages, which seldom print it, are searched by
    what the paper is about. A paper without a proper short name is called by its title, in quotes;
    a surname that several papers share ("Lo et al." wrote two) stays, as does one of a paper the
    question also names otherwise."""
    by_id = {paper.paper_id: paper for paper in papers}
    found = mentions(text, papers)
    spans = Counter((m.start, m.end) for m in found)
    times = Counter(m.paper_id for m in found)
    for mention in reversed(found):
        paper = by_id[mention.paper_id]
        said = text[mention.start : mention.end]
        author = surname(paper.first_author)
        if spans[(mention.start, mention.end)] > 1 or times[paper.paper_id] > 1 or not author or author not in said:
            continue  # a shared surname, or a paper the question also names otherwise ("Lamport's Paxos Made Simple")
        name = _proper_name(paper) or f"\u201c{' '.join(paper.title.split())}\u201d"
        bare = re.sub(rf"{_ET_AL}|{_COAUTHORS}|['\u2019]s\b|\s+(?:paper|article|work)$|^the\s+", "", said)
        if bare.strip() != author:
            continue  # named by title or short name ("the Raft paper"), not by surname
        # "Ongaro's paper" is the paper itself: "What does Raft say ...?", not "What does Raft's say ...?".
        whole = re.search(r"\s+(?:paper|article|work)$", said)
        possessive = "'s" if re.search(r"['\u2019]s\b", said) and not whole else ""
        text = text[: mention.start] + name + possessive + text[mention.end :]
    return text


def _proper_name(paper: PaperRef) -> str | None:
    """*paper*'s first short name when it is a proper name, not merely the title's first word: the
    name before the title's colon ("ZooKeeper: ..."), a coined form ("S2ORC", "PaperMage"), a
    capitalised word inside the title ("The Chubby lock service ...") or the name the abstract
    introduces ("Raft is a consensus algorithm ...")."""
    names = paper_names(paper)
    if not names:
        return None
    name, title = names[0], " ".join(paper.title.split())
    inside = name in _title_words(title)[1:]
    introduced = any(name in pattern.findall(paper.abstract[:1500]) for pattern in _ABSTRACT_NAME)
    return name if title.startswith(f"{name}:") or _DISTINCT_WORD.match(name) or inside or introduced else None


def display_name(paper: PaperRef) -> str:
    """How a rewritten question calls *paper*: its first short name, else its title in quotes
    (which the answer step reads as a name, not as what is asked). Initials longer than four
    letters that neither the title nor the abstract prints ("SDAPOW" for "Standing Desks and
    Afternoon Productivity in Office Workers") are no name a reader knows: the title."""
    names = paper_names(paper)
    title = " ".join(paper.title.split())
    coined = names and len(names[0]) > 4 and names[0] not in title and names[0] not in paper.abstract
    return names[0] if names and not coined else f"\u201c{title}\u201d"


# "the GFS paper", "the Bigtable paper's", "the Dynamo paper": a paper called by a proper name,
# which `absent_paper` checks against the project's papers.
_CALLED_PAPER = re.compile(
    r"\bthe\s+(?P<name>(?-i:[A-Z])[\w-]*(?:\s+(?-i:[A-Z])[\w-]*){0,3})\s+paper\b(?!\s+(?:by|of|from|on|about)\b)",
    re.IGNORECASE,
)


def absent_paper(question: str, papers: Sequence[PaperRef]) -> str | None:
    """The name of a paper *question* asks about by name ("the GFS paper") that none of *papers*
    goes by: the project does not hold it, so no passage of its papers can say what that paper
    states. None when it names none, or only papers of the project; a paper's venue is a name it
    goes by ("the OSDI paper" picks one of them)."""
    venues = [paper.venue for paper in papers if paper.venue]
    for match in _CALLED_PAPER.finditer(question):
        name = match["name"]
        words = {word.casefold() for word in name.split()}
        if words & (_PAPER_WORDS | _FUNCTION_WORDS | _ORDINAL_WORDS) or mentions(name, papers):
            continue
        if any(name.casefold() in venue.casefold() for venue in venues):
            continue
        return name
    return None


# A misspelt name is this close to a paper's name (difflib's ratio: 2 * matches / total length);
# "Bigtabel" and "Bigtable" are 0.875, "Spanner" and "Paxos" 0.33.
CLOSE_NAME_RATIO = 0.8


def close_paper_name(name: str, papers: Sequence[PaperRef]) -> str | None:
    """The name of one of *papers* (`paper_names`) spelt closest to *name*, compared without case,
    when it is at least CLOSE_NAME_RATIO alike ("Bigtabel" -> "Bigtable", "Zookeper" ->
    "ZooKeeper"); None when none is."""
    names = {n.casefold(): n for paper in papers for n in paper_names(paper) if len(n) >= 4}
    close = difflib.get_close_matches(name.casefold(), list(names), n=1, cutoff=CLOSE_NAME_RATIO)
    return names[close[0]] if close else None


# "How does Chubby handle that?", "And how would ZooKeeper do it?", "How does Raft elect a leader?":
# a name acting as a system does.
_ACTING_NAME = re.compile(
    r"^\W*(?:(?:and|so|but|then)\s+)?(?:(?:how|why|when|where)\s+(?:does|do|did|would|can|could|will)\s+"
    r"(?P<name>(?-i:[A-Z])[\w-]*(?:\s+(?-i:[A-Z])[\w-]*){0,2})\s+(?-i:[a-z])[\w-]+"
    r"|what\s+(?:does|do|did|would|can|could|will)\s+(?P<subject>(?-i:[A-Z])[\w-]*(?:\s+(?-i:[A-Z])[\w-]*){0,2})\s+"
    r"(?:do|implement|achieve|avoid|support|guarantee|ensure)\b)",
    re.IGNORECASE,
)


def acting_name(question: str, papers: Sequence[PaperRef]) -> str | None:
    """The name *question* asks about as a system acting ("How does Chubby handle that?" ->
    "Chubby") when none of *papers* goes by it; None otherwise ("How does Raft handle that?" in a
    project with the Raft paper, "How does it handle that?")."""
    match = _ACTING_NAME.match(question)
    if match is None:
        return None
    name = match["name"] or match["subject"]
    words = {word.casefold() for word in name.split()}
    if words & (_PAPER_WORDS | _FUNCTION_WORDS | _ORDINAL_WORDS | {"i", "we", "you", "they", "it"}):
        return None
    # "How do Lo et al. say the name is pronounced?": the first author of a paper, not a system.
    authors = {surname(paper.first_author).casefold() for paper in papers if paper.first_author}
    if name.casefold() in authors:
        return None
    return None if mentions(name, papers) else name


# --- comparison -----------------------------------------------------------------------------------

# A question about papers in general, not one of them: "Which papers rely on S2ORC?", "Do both
# systems use leases?", "Where do the storage systems rely on Paxos?", "How does Raft differ from the others?".
_PAPERS_NOUN = r"(?:papers|systems|works|studies|approaches|protocols|algorithms|services|tools|projects)"
_BROAD = re.compile(
    r"\b(?:which|what|all|any|several|both|these|those|the|other|each|many|most|some|none)\s+"
    rf"(?:of\s+(?:the|these|those)\s+)?(?:[\w-]+\s+)?{_PAPERS_NOUN}\b"
    r"|\b(?:across|among|between)\s+(?:the\s+|these\s+)?(?:papers|systems)\b|\bdo any of\b|\bothers\b|"
    r"\bthe rest\b",
    re.IGNORECASE,
)


def is_broad(text: str, *, names_a_paper: bool = False) -> bool:
    """Whether *text* asks across the project's papers rather than about named ones. When it names
    a paper, "which tools ...", "what algorithms ..." ask about things inside that paper, not
    across papers ("Which tools does S2ORC use ...?")."""
    return any(
        not (names_a_paper and match.group(0).split()[0].casefold() in ("which", "what"))
        for match in _BROAD.finditer(text)
    )


def is_comparison(text: str, *, named: int) -> bool:
    """Whether *text* compares or relates papers, or asks across them: it names two or more
    papers (*named*), or asks broadly (`is_broad`). A comparison word alone ("How does Raft compare
    with Paxos?", "which keys differ") compares things inside one paper, not papers."""
    return named >= 2 or is_broad(text, names_a_paper=named > 0)


# --- follow-ups -----------------------------------------------------------------------------------

_ORDINAL = {"first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4, "last": -1, "former": 0, "latter": -1}
_PAPER_NOUN = r"(?:paper|one|system|work|study|article|approach|design|algorithm|service)"
_VERB_AFTER = r"(?:do|does|did|is|are|was|were|has|have|had|can|could|would|will|handle|handles|use|uses|say|says)"
_PAPER_REFERENCE = re.compile(
    rf"\bthe\s+(?:(?P<ord>first|second|third|fourth|fifth|last)\s+{_PAPER_NOUN}"
    rf"|(?P<pair>former|latter)(?:\s+{_PAPER_NOUN})?"
    rf"|other(?:\s+{_PAPER_NOUN}|(?=\s*(?:[?.!,]|$))|(?=\s+{_VERB_AFTER}\b)))"
    r"|\b(?P<group>both of them|both papers|both systems|the two(?: papers| systems)?|each of them|which one|"
    r"which of the two|they|them|their)\b",
    re.IGNORECASE,
)
_AUXILIARY_IT = r"\b(does|do|did|is|was|can|could|would|will|should|has)\s+it\b(?!\s*[?.!]*\s*$)"
# "its" only right after the question's verb ("What is its chunk size?"): elsewhere ("How does a
# system keep its state?") it belongs to a noun of the question itself.
_SUBJECT_IT = re.compile(
    rf"^(?:it|its)\b|{_AUXILIARY_IT}|^(?:what|how|which|why|where|when)\s+(?:is|are|was|were|does|do|did)\s+its\b",
    re.IGNORECASE,
)
_IT = re.compile(r"\bit\b", re.IGNORECASE)
# "it" doing what a system does and a measure cannot: "when it fails", "if it crashes".
_FAILING_IT = re.compile(
    r"\bit\s+(?:fails|failed|crashes|crashed|restarts|restarted|recovers|recovered|dies|died|goes\s+down|"
    r"went\s+down|breaks|broke|reboots|rebooted)\b",
    re.IGNORECASE,
)
# "What happens when the GFS master fails?": a question about an event a system goes through.
_EVENT = re.compile(
    r"\b(?:when|if|after|once|while)\s+(?:the\s+|a\s+|an\s+)?(?:[\w-]+\s+){1,4}?(?:fails|crashes|restarts|"
    r"recovers|dies|goes\s+down|breaks|reboots|is\s+lost|loses\s+[\w-]+|becomes\s+unavailable|partitions)\b",
    re.IGNORECASE,
)
_PASSIVE_IT = re.compile(
    r"\b(?:(?:is|was)\s+it|(?:can|could|will|would|should|must|may|might)\s+it\s+be)\b", re.IGNORECASE
)
# "What version of it is used?": "it" as the object of "of"/"about" is a thing, not a paper acting.
_OBJECT_IT = re.compile(r"\b(?:of|about|to|with|for|from|on|into|by)\s+it\b", re.IGNORECASE)
# "Which of them removes the most?", "How are they applied?": a plural thing asked for, not the
# authors of the paper ("Why did they choose ...?").
# "How do they choose a master?" after "What servers make up a Chubby cell?": the servers acting, in
# the present tense, with a verb no author does to a paper ("did they find", "do they propose").
_RESEARCH_VERBS = (
    r"find|found|propose|argue|claim|show|conclude|evaluate|measure|study|report|write|recruit|suggest|"
    r"compare|test|survey|interview|describe|present|introduce|mean|say|think|believe|cite|use|build|implement"
)
# What the authors of a paper did in making it, beside `_RESEARCH_VERBS`.
_AUTHOR_CHOICES = (
    r"choose|chose|pick|select|decide|adopt|design|develop|train|run|collect|analy[sz]e|set|tune|need|want|pay|"
    r"ask|give|define|modify|change|replace|make|get|do|obtain|achieve|release|publish|extend|add|include|exclude"
)
_THING_THEY = re.compile(
    r"\bof\s+them\b|\bthey(?=\s+(?:are|were)\b)|\b(?:are|were)\s+they\b"
    # "How did participants rate them?": "them" as the object of a verb done to things.
    r"|\b(?!(?:of|ask|asked|tell|told|pay|paid|give|gave|recruit|recruited|interview|interviewed|thank|thanked|"
    r"let|help|helped)\b)[a-z]{3,}\s+them\b"
    rf"|\b(?:do|can|will|would)\s+they(?=\s+(?!(?:{_RESEARCH_VERBS})\b)[a-z]+\b)"
    # "How often did they wear it?" after a question about a study's participants: a thing the
    # people did, not a choice its authors made ("Why did they choose ...?").
    rf"|\bdid\s+they(?=\s+(?!(?:{_RESEARCH_VERBS}|{_AUTHOR_CHOICES})\b)[a-z]+\b)",
    re.IGNORECASE,
)
# "How often did they use it?" after "Who were the participants in the field study?": a verb a
# study's people do as well as its authors; "they" are the people when the previous question was
# about them.
_PEOPLE_THEY = re.compile(
    r"\b(?:do|did|does|would|will|could|can)\s+they(?=\s+(?:use|think|feel|believe|rate|prefer|like|dislike|read|"
    r"spend|wear|complete|finish|perform|learn|notice|want|need|click|see|save|open|answer|respond|trust|"
    r"understand|remember|struggle|agree)\b)",
    re.IGNORECASE,
)
# "How often did the participants use it?": a tool its users try, the paper's system.
_USED_IT = re.compile(
    r"\b(?:use|used|using|try|tried|like|liked|trust|trusted|rate|rated|prefer|preferred|find|found)\s+(?P<it>it)\b",
    re.IGNORECASE,
)
# "How long does it take?", "What does it cost?": "it" as the subject of a verb that measures it.
_MEASURED_IT = re.compile(
    r"\b(?:does|do|did|will|would|can|could)\s+(?P<it>it)\s+(?:take|last|cost|require|need|use|scale)\b", re.I
)
# "it" as the subject of a clause inside the question ("What happens when it fails?").
_CLAUSE_IT = re.compile(
    r"\bit\b(?=\s+(?:is|was|has|can|cannot|will|would|does|did|becomes|became|fails|failed|crashes|"
    r"crashed|restarts|loses|lost|goes|went|gets|got|runs|stops|starts|receives|sends|needs|uses)\b)",
    re.IGNORECASE,
)
_GENERIC_OWNER = re.compile(r"\b(?:a|an|each|every|any)\s+[\w-]+", re.IGNORECASE)
# "... if the server then gets the same RPC twice after it restarts?": the server, said before "it".
_CLAUSE_OWNER = re.compile(r"\b(?:a|an|each|every|any|the)\s+[\w-]+", re.IGNORECASE)


# "Why is it still safe to replay ...?": an "it" that stands for what follows, no paper or thing.
_DUMMY_IT = re.compile(
    r"\b(?:is|was|isn't|wasn't)\s+it\s+(?:[a-z]+\s+){0,2}?(?:safe|possible|necessary|hard|easy|difficult|"
    r"important|useful|enough|better|worse|worth|correct|okay|true|needed|required|cheaper|faster|slower|"
    r"harmless|harmful|unsafe|acceptable|fine|reasonable|sufficient|unnecessary|impossible|feasible|desirable|"
    r"costly|expensive|cheap|a\s+problem)\s+(?:to|that|for)\b"
    # "Why is it harmless if the server gets the RPC twice?": a judgement of what the clause says
    # ("Is it faster when ...?" may be the system).
    r"|\b(?:is|was|isn't|wasn't)\s+it\s+(?:[a-z]+\s+)?(?:safe|unsafe|harmless|harmful|acceptable|fine|okay|"
    r"correct|a\s+problem|possible|impossible|necessary)\s+(?:if|when|whether)\b",
    re.IGNORECASE,
)
# "Which of them ...?": one of the things the previous question asked for.
_WHICH_OF_THEM = re.compile(r"^\W*(?:and\s+|so\s+)?(?P<which>which|what)\s+of\s+(?:them|these|those)\b", re.IGNORECASE)
# "How many of them ...?", and the people a study question was about, which "them" then means.
_OF_THEM = re.compile(r"\b(?:many|much|few|some|most|all|none|each|one|two|three)\s+of\s+(?P<pronoun>them)\b", re.I)
_PEOPLE = (
    r"participants|students|users|respondents|annotators|interviewees|subjects|volunteers|readers|researchers|"
    r"workers|patients|people"
)
_PEOPLE_NOUN = re.compile(rf"\b(?:{_PEOPLE})\b", re.IGNORECASE)
# "the participants in the CiteSee field study": a study's people, said with the study.
_PEOPLE_OF_STUDY = re.compile(
    rf"(?P<people>{_PEOPLE})\s+(?:in|of|from)\s+the\s+[\w\s-]+?\b(?:study|studies|"
    r"experiment|evaluation|trial|deployment|survey)\b",
    re.IGNORECASE,
)


# "... can servers cause after they ...": a plural noun, then a clause that opens with a
# conjunction before the pronoun; the pronoun is that noun, not a paper of the conversation.
_OWN_ANTECEDENT = re.compile(
    r"\b(?!(?:papers|authors|systems|works|studies|is|was|has|does|this|its|us|as|yes)\b)[a-z][a-z-]{2,}[^s\W]s\b"
    r"[^?,;]*\b(?:after|before|when|once|until|while|if|because|since|unless|whether|so that)\s*$",
    re.IGNORECASE,
)


def _paper_its(text: str) -> re.Match[str] | None:
    """The "its" of *text* that refers back to a paper ("How many people took part in its lab
    study?"), None when there is none or a thing of the question's own comes first to own it ("How
    does a system keep its state?")."""
    its = re.search(r"\bits\b", text, re.IGNORECASE)
    return its if its is not None and not _GENERIC_OWNER.search(text[: its.start()]) else None


# "an ephemeral one", "the persistent ones": a kind of the thing the previous question was about.
_ADJECTIVE_ONE = re.compile(
    r"\b(?P<det>a|an|the)\s+(?P<adj>(?!(?:other|same|first|second|third|fourth|fifth|last|former|latter)\b)"
    r"[a-z][\w-]*)\s+one(?P<plural>s?)\b"
)
# "How does Chubby handle that?", "How would ZooKeeper deal with it?": a light verb whose object
# stands for the previous question's topic.
_HANDLE_THAT = re.compile(
    r"\b(?:handle|handles|handled|deal\s+with|deals\s+with|dealt\s+with|manage|manages|managed|approach|"
    r"approaches|approached|tackle|tackles|tackled|address|addresses|addressed|cope\s+with|copes\s+with)\s+"
    r"(?:that|this|it|the\s+same(?:\s+thing)?)(?=\s*[?.!]*\s*$)",
    re.IGNORECASE,
)
# "How does Raft elect a leader?": a how-question whose verb follows its subject.
_HOW_DOES = re.compile(r"^\s*(?:and\s+)?how\s+(?:does|do|did|can|could|would|will|should)\b", re.IGNORECASE)
_DO_IT = re.compile(r"\b(?:do|does|did)\s+(?:it|that|this|so|the same)(?=\s*[?.!]*\s*$)", re.IGNORECASE)
_TOPIC_PRONOUN = re.compile(
    r"\b(?:that|this|it|the same(?: thing)?)(?:\s+(?:problem|issue|question|case|feature|mechanism|part|step|"
    r"one|thing|aspect))?(?=\s*[?.!]*\s*$)|\b(?:that|this) (?:problem|issue|question|case|feature|mechanism|"
    r"aspect)\b|\b(?:that|this)(?=\s+(?:compares?|differs?|relates?)\s+(?:with|to|from)\b)"
    # The subject between an auxiliary and the closing verb: "How long did that take?", "What does this cost?"
    r"|(?:" + "|".join(rf"(?<=\b{aux}\s)" for aux in "did does do is was will would can could".split()) + ")"
    r"(?:that|this)(?=\s+(?:be\s+|been\s+)?[a-z]+\s*[?.!]*\s*$)",
    re.IGNORECASE,
)
_GENERAL_PAPERS = re.compile(r"\b(?:the|these|both|all(?: the)?) (?:papers|systems|works|studies)\b", re.IGNORECASE)
_OWN_PAPERS = re.compile(r"\b(?:papers|systems|authors|works|studies)\b", re.IGNORECASE)
# "Who are the authors of the paper?" asks about the papers themselves: no follow-up for want of content.
_ABOUT_PAPERS = re.compile(
    r"\b(?:papers?|articles?|authors?|publications?|venues?|journals?|published|wrote|written)\b", re.IGNORECASE
)
_CONTINUATION = re.compile(r"^\s*(?:and|also|so|then|what about|how about|same (?:for|question for))\b", re.I)
# Words that point at something the conversation said: "more than that", "use it that way",
# "something else", "the other kind".
_POINTER = re.compile(
    r"\b(?:than|like)\s+(?:that|this|those|these|it)\b|\b(?:that|this|the\s+same)\s+way\b"
    r"|\bsomething\s+else\b|\bthe\s+other\s+(?:kind|type|way|case)\b",
    re.IGNORECASE,
)
_QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how is are was were do does did can could will would should "
    "has have had may might".split()
)


@dataclass(frozen=True)
class _Resolved:
    """A turn as resolved: its standalone query, the papers it is about (`focus`) and the papers it
    brought into the conversation, in order (`pool`: named ones, then those its answer cited)."""

    query: str
    focus: tuple[int, ...]
    pool: tuple[int, ...]
    comparison: bool
    # "the other paper" when the project has several other papers and the conversation brought in
    # none of them: those papers, one of which the reader must name (`QuestionAnalysis.unclear_papers`).
    unclear: tuple[int, ...] = ()


# "Why?", "And how?", "Why so?": the previous question asked again with another question word.
_BARE_WH = re.compile(
    r"^\s*(?:(?:and|but|so)\s+)?(?P<wh>why|how|(?:by\s+)?how\s+(?:much|many|long|often|far))"
    # "Why is it that low?", "Why is that so high?": the pronoun is the previous answer's figure.
    r"(?:(?<=why)\s+(?:is|are|was|were)\s+(?:it|that|this|they|these|those))?"
    # "Why so?", "Why so low?": the degree is the previous answer's, asked about again.
    r"(?:\s+(?:so|that)(?:\s+(?:low|high|slow|fast|few|many|much|little|large|small|big|long|short|often|rare|bad|good))?)?"
    r"\s*[?.!]*\s*$",
    re.I,
)
_AUXILIARIES = r"(?:does|do|did|is|are|was|were|can|could|will|would|has|have|should)"
# The question word before the auxiliary that opens the clause, with what it asks for: "How does
# Chubby order updates?", "What chunk size does GFS use?", "How many replicas does a cell have?",
# "How long did the run take?"; or no question word ("Does Chubby use Paxos?").
_WH_CLAUSE = re.compile(
    rf"^\s*(?:how(?:\s+(?P<amount>many|much)(?P<counted>(?:\s+[\w-]+){{1,3}}?)|\s+(?P<adjective>[a-z]+(?<!ly)))?"
    rf"|what(?P<thing>(?:\s+[\w-]+){{0,3}}?)|why|when|where|(?=\s*{_AUXILIARIES}\b))"
    rf"\s*(?P<aux>{_AUXILIARIES})\b(?P<rest>.*?)[?.!]*\s*$",
    re.I,
)


def _asked_again(query: str, wh: str) -> str:
    """*query* asked with the question word *wh* ("why", "how") instead of its own: "How does
    Chubby order updates?" -> "Why does Chubby order updates?"; "What chunk size does GFS use?" ->
    "Why does GFS use that chunk size?"; "How many replicas does a cell have?" -> "Why does a cell
    have that many replicas?"; "Does Chubby use Paxos?" -> "How does Chubby use Paxos?". A query
    of another form gets the question word at its end: "Which of the filters removes the most?" ->
    "Which of the filters removes the most, and why?". An amount asked after an amount ("How
    many?" after "How large is the vocabulary?") is the query itself."""
    wh = " ".join(wh.split())
    clause = _WH_CLAUSE.match(query)
    if clause is None:
        body = query.rstrip(" ?.!")
        return f"{body}, and {wh.lower()}?" if body else query
    if (clause["amount"] or clause["adjective"]) and re.match(r"(?i)(?:by\s+)?how\s+\w+$", wh):
        # "How many?" after "How large is the vocabulary?" asks the same amount again, not "How many
        # is the vocabulary that large?".
        return query
    if clause["amount"]:
        thing = f" that {clause['amount'].lower()}{clause['counted']}"
    elif clause["adjective"] and clause["adjective"].casefold() not in _QUESTION_WORDS:
        thing = f" that {clause['adjective'].lower()}"
    else:
        thing = f" that{clause['thing']}" if clause["thing"] else ""
    asked = f"{wh[:1].upper()}{wh[1:].lower()} {clause['aux'].lower()}{clause['rest'].rstrip()}{thing}?"
    # "What is GROBID used for in S2ORC?" asked why: "Why is GROBID used in S2ORC?", its "for" the what's.
    return _WHAT_FOR.sub("", asked) if query.lstrip().casefold().startswith("what") else asked


_WHAT_FOR = re.compile(r"(?<=\wed)\s+for(?=(?:\s+in\s+[^?]+)?\?$)")


# "it", "that" or "this" as the subject of a closing verb: "How long did it take?", "What did that cost?".
_CLOSING_SUBJECT = re.compile(
    r"\b(?:did|does|do|is|was|will|would|can|could)\s+(?P<pronoun>it|that|this)"
    r"(?=\s+(?:be\s+|been\s+)?[a-z]+\s*[?.!]*\s*$)",
    re.IGNORECASE,
)
_PREPOSITIONS = frozenset("on in at with for to from by of about into under over".split())


def _fronted_subject(query: str) -> str:
    """The subject of a *query* that puts what it asks for first ("How many machines did the
    MapReduce sort benchmark use?" -> "the MapReduce sort benchmark"; a passive's participle
    becomes a gerund: "What hardware was S2ORC-SciBERT pretrained on?" -> "pretraining
    S2ORC-SciBERT"), the thing a follow-up's "How long did it take?" is about; "" for a query of
    another form ("How does Raft handle membership changes?": its topic is its object)."""
    clause = _WH_CLAUSE.match(query)
    if clause is None or not (clause["thing"] or clause["amount"]):
        return ""
    words = clause["rest"].split()
    if words and words[-1].casefold() in _PREPOSITIONS:
        words.pop()
    if len(words) < 2:
        return ""
    verb = words.pop()
    if clause["aux"].casefold() in ("is", "are", "was", "were"):
        return f"{verb[:-2]}ing {' '.join(words)}" if verb.endswith("ed") and len(verb) > 4 else ""
    return " ".join(words)


_WHAT_DOES_DO = re.compile(r"^\s*what\s+(?:does|do|did)\b.*\b(do)\s*[?.!]*\s*$", re.IGNORECASE)


def _strip_lead(text: str) -> str:
    text = _CONTINUATION.sub("", text, count=1).strip(" ,")
    return text[:1].upper() + text[1:] if text else text


_ORDINAL_WORDS = frozenset("first second third fourth fifth last".split())


# "What's", "How's": a question word with "is" contracted.
_CONTRACTED_IS = re.compile(r"\b(what|where|how|who|which|when|why|that)['\u2019]s\b", re.IGNORECASE)


def _topic(query: str, papers: Sequence[PaperRef]) -> tuple[str, str]:
    """(noun phrase, verb phrase) of *query*'s topic: its words without question words, auxiliaries
    and paper mentions; the verb phrase keeps a light verb ("handle cluster membership changes"),
    the noun phrase does not ("cluster membership changes")."""
    text = query
    # A name two papers share ("the Paxos") is one place, cut once.
    for start, end in reversed(list(dict.fromkeys((m.start, m.end) for m in mentions(query, papers)))):
        text = text[:start] + " " + text[end:]
    text = re.sub(r"\baccording to\b", " ", text, flags=re.IGNORECASE)
    text = _CONTRACTED_IS.sub(r"\1 is", text)  # "What's the problem ...?"
    how = re.match(r"\s*how\s+(?P<word>[\w-]+)", text, re.IGNORECASE)
    if how is not None and how["word"].casefold() not in _QUESTION_WORDS:
        text = text[how.end() :]  # "How big is an SSTable block?" is about the block, not "big"
    text = re.sub(r"^\s*what\s+(?:happens|happened|happen)\b", " ", text, flags=re.IGNORECASE)
    words = _WORD.findall(text)

    def kept_word(k: int, word: str) -> bool:
        folded = word.casefold()
        if folded in _QUESTION_WORDS:
            return False
        if folded in _ORDINAL_WORDS:  # "the first phase" is a topic, "the first paper" names a paper
            following = words[k + 1].casefold() if k + 1 < len(words) else ""
            return bool(following) and following not in _PAPER_WORDS
        return folded not in _PAPER_WORDS

    kept = [w for k, w in enumerate(words) if kept_word(k, w)]
    verb = next((w for w in kept if w.casefold() in _LIGHT_VERBS), "")
    noun = [w for w in kept if w.casefold() not in _LIGHT_VERBS]
    while noun and noun[0].casefold() in _FUNCTION_WORDS:
        noun.pop(0)
    while noun and noun[-1].casefold() in _FUNCTION_WORDS:
        noun.pop()
    noun_phrase = " ".join(noun)
    return noun_phrase, f"{verb.casefold()} {noun_phrase}".strip()


def _names(paper_ids: Sequence[int], papers: Sequence[PaperRef]) -> str:
    """The papers' display names listed ("Raft and Chubby"); a paper whose display name another
    of *papers* shares is called by its title, in quotes ("Paxos" would name both Paxos papers)."""
    by_id = {paper.paper_id: paper for paper in papers}
    shared = Counter(display_name(paper) for paper in papers)

    def name(paper: PaperRef) -> str:
        own = display_name(paper)
        return own if shared[own] == 1 else f"\u201c{' '.join(paper.title.split())}\u201d"

    names = [name(by_id[pid]) for pid in paper_ids if pid in by_id]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] if names else ""


def _in_papers(query: str, paper_ids: Sequence[int], papers: Sequence[PaperRef]) -> str:
    """*query* with " in <papers>" before its closing punctuation."""
    body = query.rstrip(" ?.!")
    return f"{body} in {_names(paper_ids, papers)}{query[len(body) :].strip() or '?'}"


def _swap_papers(query: str, new: Sequence[int], papers: Sequence[PaperRef]) -> str:
    """*query* about the papers *new* instead of the ones it names: the first run of mentions
    ("Raft", "Raft and Paxos") becomes their names; a query naming none gets " in <papers>"."""
    found = mentions(query, papers)
    if not found:
        general = _GENERAL_PAPERS.search(query)
        if general is not None:
            return _agree(query[: general.start()], new) + _names(new, papers) + query[general.end() :]
        return _in_papers(query, new, papers)
    start, end = found[0].start, found[0].end
    for mention in found[1:]:
        if re.fullmatch(r"\s*(?:,|and|or|&|,\s*and)\s*", query[end : mention.start], re.IGNORECASE):
            end = mention.end
    if any(mention.start >= end for mention in found):
        # Names apart ("... in the Paper Plain study and in the CiteSee study?"): none of them is
        # kept, lest the question mix the old papers with the new ones.
        return _in_papers(_tidy(cut_mentions(query, papers)), new, papers)
    return _agree(query[:start], new) + _names(new, papers) + query[end:]


def _agree(before: str, new: Sequence[int]) -> str:
    """ "How do Raft and Paxos ..." about one paper reads "How does Chubby ..."; "How does ZooKeeper
    ..." about two, "How do Chubby and ZooKeeper ..."."""
    if len(new) == 1:
        return re.sub(r"\bdo(\s+)$", r"does\1", before)
    return re.sub(r"\b(d)oes(\s+)$", r"\1o\2", before, flags=re.IGNORECASE)


def _around(match: re.Match[str]) -> tuple[int, int]:
    """The span of *match* widened to the word before and after it, for `_THING_THEY`."""
    before = re.search(r"\w+\s+$", match.string[: match.start()])
    after = re.match(r"\s+\w+", match.string[match.end() :])
    return (before.start() if before else match.start(), match.end() + (after.end() if after else 0))


# A name as an answer prints it: a word with inner capitals ("CiteSee", "KeepAlive"), a run of
# capitalised words ("Specter Similarity"), an acronym ("CORD-19", "GROBID"), or a capitalised word
# inside a sentence ("uses Zab").
_ANSWER_NAME = re.compile(
    r"(?<![\w-])(?:[A-Z][a-z]+[A-Z][\w-]*|[A-Z][a-z][\w-]*(?:\s+[A-Z][\w-]+)+|[A-Z]{2,}(?:-\d+)?"
    r"|(?<=[a-z,;:] )[A-Z][a-z]{2,})(?![\w-])"
)


def answer_name(quote: str, question: str, papers: Sequence[PaperRef]) -> str | None:
    """The first name the quote *quote* gives that *question* (what it answered) does not say and
    that names no paper: what "it" of a next question means after "Which of the baselines used
    semantic embeddings?" was answered by "Specter Similarity [17]: A strong personalized
    baseline ..." (-> "Specter Similarity"). None when it gives none."""
    said = {word.casefold() for word in _WORD.findall(question)}
    for match in _ANSWER_NAME.finditer(quote):
        name = match.group(0)
        words = {word.casefold() for word in _WORD.findall(name)}
        if words <= said or named_papers(name, papers) or name.casefold() in _FUNCTION_WORDS:
            continue
        return name
    return None


# "... in it?": "it" closing the question.
_CLOSING_IT = re.compile(r"\bit(?=\s*[?.!]*\s*$)", re.IGNORECASE)
_POLAR_START = re.compile(r"^\s*(?:does|do|did|is|was|can|could|will|would|has)\s+", re.IGNORECASE)


def _paper_is_subject(query: str, papers: Sequence[PaperRef]) -> bool:
    """Whether *query* is a yes/no question whose subject is a paper's name ("Does Paxos Made
    Moderately Complex come with code?")."""
    polar = _POLAR_START.match(query)
    return polar is not None and any(mention.start == polar.end() for mention in mentions(query, papers))


def _it_as(text: str, name: str) -> str:
    """*text* with its subject "it" and its "its" read as *name* ("What is its chunk size?" ->
    "What is GFS's chunk size?")."""
    text = re.sub(r"\bits\b", f"{name}'s", text, flags=re.IGNORECASE)
    text = re.sub(r"^it\b", name, text, flags=re.IGNORECASE)
    return re.sub(_AUXILIARY_IT, rf"\1 {name}", text, flags=re.IGNORECASE)


def _resolve_references(
    question: str,
    previous: _Resolved,
    papers: Sequence[PaperRef],
    cited: Sequence[int] = (),
    thing: str | None = None,
    answered: str | None = None,
) -> tuple[str, list[int], bool, bool, tuple[int, ...]]:
    """Replace *question*'s references to papers of the *previous* turn by their names, or its "it"
    by the thing the previous turn asked to define ("What is an SSTable?" -> "How is it stored?" ->
    "How is the SSTable stored?"). *cited*: the papers the previous answer cited; *thing*: the
    thing the previous question asked for (`asked_thing`), once read by the caller. "The other
    paper" is one the conversation brought in that the previous turn was not about (its named
    papers, else the ones its answer cited), else every such paper of the project. Returns (text,
    the papers referred to, whether "it" named a paper, whether a group was meant). *answered*: the
    name the previous answer gave for a question asking for one (`answer_name`), what "it" as an
    object means ("Did the reencountered strategy beat it?")."""
    pool = list(previous.pool)
    referred: list[int] = []
    unclear: list[int] = []
    group = False
    paired = False  # "the other" and "it": the two papers of the previous turn, in turn
    names_own = bool(named_papers(question, papers)) or bool(_OWN_PAPERS.search(question))
    plural = thing or how_object(previous.query, papers)  # "Were they accurate?": the section gists
    things = plural if plural and re.search(r"[^s]s$", plural) and len(previous.focus) <= 1 else None
    # "How big are they?" after "What is a tablet in Bigtable?": tablets, the kind just defined (not
    # a name: "What is Chubby?" then "Were they ...?" is its authors; "SSTables" are a kind).
    kind = defined_term(previous.query) or ""
    proper = kind[:1].isupper() and kind[1:].islower()
    kinds = None
    if kind and not proper and not mentions(kind, papers) and len(previous.focus) <= 1:
        kinds = things = kind if kind.endswith("s") else f"{kind}s"
        thing = thing or things

    users = False  # "they" became the people of the previous question's study

    def pick(match: re.Match[str]) -> str:
        nonlocal group, paired, users
        chosen: list[int] = []
        if things and match.group("group") and _THING_THEY.search(match.string, *_around(match)):
            # "What filters does S2ORC apply?" then "Which of them removes the most?": the filters.
            # "What servers make up a Chubby cell?" then "How do they choose a master?": the servers
            # that make up a Chubby cell.
            said = kinds or _thing_phrase(previous.query, things)
            return match.group(0).replace(match.group("group"), f"the {said}")
        if match.group("ord"):
            index = _ORDINAL[match.group("ord").casefold()]
            chosen = [pool[index]] if -len(pool) <= index < len(pool) else []
        elif match.group("pair"):
            index = _ORDINAL[match.group("pair").casefold()]
            chosen = [pool[index]] if pool else []
        elif match.group("group"):
            if names_own:  # "Raft and Paxos: how do they differ?" refers to its own papers
                return match.group(0)
            if match.group("group").casefold() in ("the two", "which of the two") and len(pool) < 2:
                # "Which of the two helps ...?" after a question about one paper's two levels of
                # caching: two things its answer named, no two papers.
                return match.group(0)
            pronoun = match.group("group").casefold() in ("they", "them", "their")
            if pronoun and _OWN_ANTECEDENT.search(match.string[: match.start()]):
                # "What trouble can servers cause after they have been removed?": the servers.
                return match.group(0)
            people = _PEOPLE_NOUN.search(previous.query)
            if match.group("group").casefold() == "their" and people is not None and len(previous.focus) == 1:
                # "How was their comprehension measured?" after a question about a study's participants.
                return f"the {people[0]}'"
            copula = _THING_THEY.search(match.string, *_around(match)) or _PEOPLE_THEY.search(
                match.string, *_around(match)
            )
            if match.group("group").casefold() == "they" and people is not None and copula and len(previous.focus) == 1:
                # "Were they accurate?", "Which universities were they from?" after a question about
                # a study's participants: the participants.
                users = True
                return f"the {people[0]}"
            subject = _AUX_SUBJECT.search(previous.query)
            if match.group("group").casefold() == "they" and subject is not None and subject["subject"].endswith("s"):
                # "How much RPC traffic did they produce?" after "How many requests did the group of 14
                # busy Bigtable clusters handle?": the clusters, the previous question's subject.
                return subject["subject"]
            if match.group("group").casefold() == "them" and len(previous.focus) == 1:
                # "Which servers take them?" after "How does Raft keep its log short?": things the
                # answer named (snapshots), not the paper or its authors; left as it is.
                return match.group(0)
            if pronoun and len(previous.focus) == 1:
                # "Why did they choose ...?" after a question about one paper: its authors.
                chosen = list(previous.focus)
            else:
                chosen = list(previous.focus if len(previous.focus) >= 2 else pool)
            group = len(chosen) >= 2
        else:  # "the other (one)": the papers of the conversation the last turn was not about
            if named_papers(question, papers):  # "the other paper, Dynamo, ...": it names the paper itself
                return match.group(0)
            about = set(previous.focus or cited)
            chosen = [pid for pid in pool if pid not in about][:1]
            if len(previous.focus) == 2 and _SUBJECT_IT.search(question):
                # "What guarantee does it provide that the other system does not?" after a question
                # about ZooKeeper and Chubby: "it" is the first of the two, the other the second.
                paired = True
                chosen = [previous.focus[1]]
            others = [paper.paper_id for paper in papers if paper.paper_id not in about]
            if not chosen and len(others) >= 2 and match.group(0).casefold() != "the others":
                # "And the other paper?" after a question about one paper of five: which one is meant
                # is the reader's to say, not every other paper at once.
                unclear.extend(pid for pid in others if pid not in unclear)
                return match.group(0)
            chosen = chosen or others
        if not chosen:
            return match.group(0)
        referred.extend(pid for pid in chosen if pid not in referred)
        name = _names(chosen, papers)
        if match.group(0).casefold() in ("which one", "which of the two"):
            return f"{match.group(0)[0]}hich of {name}"  # "Which one is simpler?": which of Raft and Paxos
        return f"{name}'s" if match.group(0).casefold() == "their" else name

    text = _PAPER_REFERENCE.sub(pick, question)
    used_it = _USED_IT.search(text) if users and len(previous.focus) == 1 else None
    tool = _proper_name(next(p for p in papers if p.paper_id == previous.focus[0])) if used_it else None
    if used_it is not None and tool is not None:
        # "How often did they use it?" after "Who were the participants in the CiteSee field study?":
        # the participants used CiteSee.
        text = text[: used_it.start("it")] + tool + text[used_it.end("it") :]
        study = _PEOPLE_OF_STUDY.search(previous.query)
        if study is not None:  # ... the participants in the CiteSee field study use CiteSee?
            text = re.sub(rf"\bthe {study['people']}\b", f"the {study[0]}", text, count=1)
        return text, [previous.focus[0]], False, group, tuple(unclear)
    if paired:
        text = _it_as(text, _names(previous.focus[:1], papers))
        referred.insert(0, previous.focus[0])
    group_of = _OF_THEM.search(text)
    people = _PEOPLE_NOUN.search(previous.query)
    if group_of is not None and people is not None and not referred:
        # "How many of them said ...?" after a question about a study's participants: of those.
        text = text[: group_of.start("pronoun")] + f"the {people[0]}" + text[group_of.end("pronoun") :]
    subject_it = False
    term = defined_term(previous.query)
    object_of = _OBJECT_IT.search(text) or _VERB_OBJECT_IT.search(text)  # "of it", "replace it"
    if term is None and (not previous.focus or _PASSIVE_IT.search(text) or object_of):
        # The thing a "what X" question asked for, unless "it" may be the paper it named acting
        # ("What chunk size does GFS use?" then "How does it handle hot spots?" is about GFS), or
        # the thing is a measure, which does not fail or crash ("What is the throughput?" then
        # "What happens when it fails?" is about the system, not the throughput).
        term = None if thing and _FAILING_IT.search(text) and _MEASURE_THING.search(thing) else thing
    if answered and object_of is not None and not referred:
        term = answered  # "Which baseline used embeddings?" then "Did the strategy beat it?": that baseline
    if term is None:
        # "How well does it compress?" after "How large is the raw click table ...?": the table.
        term = measured_subject(previous.query, papers)
    tool = named_subject(previous.query, papers) if term is None and not referred else None
    # "What F1 does it achieve?" after "What is GROBID used for in S2ORC?": the tool, not S2ORC.
    term = term or tool
    # "How much code did they add to it?": "they" are the paper's authors, "it" still the asked thing.
    object_it = referred == list(previous.focus) and object_of is not None
    named_here = named_papers(question, papers)
    # "How long is it in Chubby?" after "What is the initial timeout of a chunk lease in GFS?": the
    # thing asked before, now of another paper.
    elsewhere = bool(named_here) and not set(named_here) & set(previous.focus) and _PASSIVE_IT.search(text)
    if term and (not referred or object_it) and (not named_here or elsewhere) and _IT.search(text):
        named_term = list(named_papers(term, papers))
        if named_term:  # "What is PaperMage?" then "Who uses it?": the paper
            return _IT.sub(_names(named_term, papers), text), named_term, True, group, tuple(unclear)
        # "What is an SSTable?" then "How is it stored?": "it" is the thing just defined, not a
        # paper; "What similarity score is used for linking?" then "How is it computed?": the score.
        # A name takes no article: "What happens to Wayfinder after a restart?".
        article = "" if term in (tool, answered) or (term[:1].isupper() and term[1:].islower()) else "the "
        return _IT.sub(f"{article}{term}", text), referred, False, group, tuple(unclear)
    if (
        not referred
        and not named_papers(question, papers)
        and previous.focus
        and _SUBJECT_IT.search(text)
        and not _DUMMY_IT.search(text)
    ):
        text = _it_as(text, _names(previous.focus, papers))
        referred.extend(previous.focus)
        subject_it = True
    clause_it = _CLAUSE_IT.search(text)
    if clause_it is not None and _CLAUSE_OWNER.search(text[: clause_it.start()]):
        clause_it = None  # "What should an application do if it needs ...?": the application
    if not referred and not named_papers(question, papers) and previous.focus and clause_it is not None:
        # "What happens when it becomes unavailable?" after "What does Bigtable use Chubby for?": the
        # paper the previous question named last (Chubby), in the papers it was about (Bigtable).
        named_before = [m.paper_id for m in mentions(previous.query, papers) if m.paper_id in previous.focus]
        last = named_before[-1] if named_before else previous.focus[-1]
        text = text[: clause_it.start()] + _names([last], papers) + text[clause_it.end() :]
        others = [pid for pid in previous.focus if pid != last]
        if others:
            text = _in_papers(text, others, papers)
        referred.extend([last, *others])
        subject_it = True
    closing_it = _CLOSING_IT.search(text)
    if not referred and not named_here and closing_it and _paper_is_subject(previous.query, papers):
        # "How do the processes communicate in it?" after "Does Paxos Made Moderately Complex come
        # with code?": the paper the previous question was about, as its subject.
        text = text[: closing_it.start()] + _names(previous.focus, papers) + text[closing_it.end() :]
        referred.extend(previous.focus)
        subject_it = True
    its = _paper_its(text)
    if not referred and not named_papers(question, papers) and previous.focus and its is not None:
        text = text[: its.start()] + f"{_names(previous.focus, papers)}'s" + text[its.end() :]
        referred.extend(previous.focus)
        subject_it = True
    return text, referred, subject_it, group, tuple(unclear)


def content_terms(text: str, papers: Sequence[PaperRef]) -> tuple[str, ...]:
    """`key_terms` of *text* once the places it names one of *papers* are cut out: "What chunk
    size does GFS use?" -> ("chunk", "size")."""
    return key_terms(cut_mentions(text, papers))


# The connective that goes with a name cut out of a list of papers: "Raft[ and Chubby]", "[GFS, ]Bigtable".
_BEFORE_NAME = re.compile(r"(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|vs\.?|versus)\s+)$", re.IGNORECASE)
_AFTER_NAME = re.compile(r"^(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|vs\.?|versus)\s+)", re.IGNORECASE)


def cut_mentions(text: str, papers: Sequence[PaperRef], *, keep: Collection[int] = ()) -> str:
    """*text* without the places it names one of *papers* (`mentions`), each with the connective
    that lists it ("Raft[ and Chubby]"), except where it names a paper of *keep* (ids); spaces folded. A name
    several papers share is cut once ("rely on Paxos through Chubby" -> "rely on through")."""
    found = mentions(text, papers)
    kept = {(m.start, m.end) for m in found if m.paper_id in keep}
    # A name two papers share ("Paxos") is one place, cut once.
    for start, end in reversed(list(dict.fromkeys((m.start, m.end) for m in found))):
        if (start, end) in kept:
            continue
        before = _BEFORE_NAME.search(text[:start])
        after = None if before else _AFTER_NAME.match(text[end:])
        start = before.start() if before else start
        end = end + after.end() if after else end
        text = text[:start] + " " + text[end:]
    return " ".join(text.split())


def _looks_like_follow_up(question: str, papers: Sequence[PaperRef]) -> bool:
    """Whether *question* refers back to the conversation: it opens with "And"/"What about", refers
    to a paper by position or pronoun, ends on "that"/"it"/"do it", or has no content words and
    names no paper ("Why?"). "What is Raft?" names a paper and stands alone. A question of several
    parts whose first part has a subject of its own is judged by that part: in "What is an SSTable
    and what does it provide?" the "it" is the SSTable, not the previous turn's topic."""
    pieces = [piece for piece in _PART_BREAK.split(question) if piece.strip(" ,;?")]
    if len(pieces) >= 2 and (content_terms(pieces[0], papers) or named_papers(pieces[0], papers)):
        return _looks_like_follow_up(pieces[0], papers)
    named = bool(named_papers(question, papers))
    group = _PAPER_REFERENCE.search(question)
    return bool(
        _CONTINUATION.search(question)
        or _BARE_WH.match(question)  # "Why so low?"
        or _PREPOSITION_WH.match(question)  # "On what hardware?"
        or _HOW_COMPARE.match(question)
        or (_EQUIVALENT.search(question) and not content_terms(_said_again(question), papers))
        or (group and (not group.group("group") or not (named or _OWN_PAPERS.search(question))))
        or _DO_IT.search(question)
        or _TOPIC_PRONOUN.search(question)
        or ((_SUBJECT_IT.search(question) or _CLAUSE_IT.search(question) or _OBJECT_IT.search(question)) and not named)
        # "How long is it in Chubby?": the thing asked before, of the paper named now.
        or (_PASSIVE_IT.search(question) and named and not _DUMMY_IT.search(question))
        or ((_ADJECTIVE_ONE.search(question) or _paper_its(question) or _POINTER.search(question)) and not named)
        or (not named and not content_terms(question, papers) and not _ABOUT_PAPERS.search(question))
    )


# "What about its precision?": the previous question, asking for another thing.
_WHAT_ABOUT_THING = re.compile(
    r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(?:(?:its|their|the)\s+)?(?P<thing>[\w-]+(?:\s+[\w-]+){0,2}?)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
# "How does Chubby compare?", "And how does Raft compare with that?": the previous question, of
# another paper beside the previous one.
_HOW_COMPARE = re.compile(
    r"^\W*(?:and\s+|so\s+)?how\s+(?:does|do|would)\s+.+?\s+compare(?:\s+(?:with|to)\s+(?:that|this|it|them))?"
    r"\s*[?.!]*\s*$",
    re.IGNORECASE,
)
# "And SCIENCEPARSE?", "What about CoreRecipe?": a name alone, after a question about another name.
_AND_NAME = re.compile(
    r"^\s*(?:and|what about|how about)\s+(?:the\s+)?(?P<name>(?-i:[A-Z][\w-]*)(?:\s+(?-i:[A-Z][\w-]*))?)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
# "And the Specter baseline?": a noun phrase alone, with its article, asked of in place of another.
_AND_THE_PHRASE = re.compile(
    r"^\s*(?:and|what about|how about)\s+(?P<phrase>(?:the|a|an)\s+[\w-]+(?:\s+[\w-]+){0,3}?)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
# The subject of a do-question's verb: "What coefficient did [the reencountered-citation strategy] get
# for ...?". The verb is the word that a preposition, an article or the question mark follows.
_AUX_SUBJECT = re.compile(
    r"\b(?:what|which|how\s+many|how\s+much)\b[^?]*?\b(?:did|does|do)\s+"
    r"(?P<subject>(?:the|a|an)\s+[\w-]+(?:\s+[\w-]+){0,5}?)\s+(?P<verb>[a-z]+)"
    r"(?=\s+(?:for|in|on|at|to|with|from|by|of|over|under|the|a|an|its|their|when|if|during|after|before)\b|\s*\?)",
    re.IGNORECASE,
)


# "How many participants did the study recruit?": the verb a do-question closes on.
_CLOSING_VERB = re.compile(r"\b(?:did|does|do)\s+\S.*?\s(?P<verb>[a-z]+)\s*\?\s*$", re.IGNORECASE)


# "... differ in leader election?": the phrase a question closes on, after its preposition.
_CLOSING_PHRASE = re.compile(
    r"\b(?:in|of|for|on|about|during|with|to)\s+(?:the\s+)?(?P<phrase>(?-i:[a-z])[\w-]*(?:\s+(?-i:[a-z])[\w-]*){0,3})"
    r"\s*[?.!]*\s*$",
    re.IGNORECASE,
)
# "How many did they use?": a count that does not say of what.
_BARE_HOW_MANY = re.compile(
    r"^\s*(?:(?:and|so)\s+)?how\s+many(?=\s+(?:did|do|does|were|are|was|is|have|has|had|will|would|can)\b)",
    re.IGNORECASE,
)
# "And when 200 of the workers were killed?", "And for phase 2?": a phrase that asks the previous
# question again under another condition (no question word of its own, no paper named).
_FRAGMENT = re.compile(
    r"^\s*(?:and|but|or|what about|how about)\s+(?P<phrase>(?:when|if|for|with|in|during|after|before|under|on|at|"
    r"without|using|given)\b(?!\s+(?:which|what|whom|whose|how)\b)[^?]*?)[?.!]*\s*$",
    re.IGNORECASE,
)
# "On what hardware?", "In which year?": the previous question again, asking for that.
_PREPOSITION_WH = re.compile(
    r"^\W*(?:and\s+|so\s+)?(?P<prep>on|in|at|with|for|from|by|under|during|through)\s+(?P<wh>what|which)\s+"
    r"(?P<thing>[\w-]+(?:\s+[\w-]+){0,2}?)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
# "What happened without any randomness?" after a question about adding randomness: the previous
# question again, under the condition it varied (a term of the previous question must be in it).
_WHAT_HAPPENED = re.compile(
    r"^\s*(?:and|but|so)?\s*what\s+(?:happens|happened|happen|changes|changed)\s+"
    r"(?P<phrase>(?:without|with|if|under|for)\b(?!\s+(?:which|what|whom|whose|how)\b)[^?]*?)[?.!]*\s*$",
    re.IGNORECASE,
)


# "the ones that lasted longer", "the ones with ...": things of the kind the previous question counted.
_THE_ONES = re.compile(r"\b(?:the|those)\s+(?P<ones>ones)\b", re.IGNORECASE)
_HOW_MANY_PLURAL = re.compile(r"\bhow\s+many\s+(?P<things>(?-i:[a-z])[\w-]*s)\b", re.IGNORECASE)


def _shares_terms(phrase: str, previous: str, papers: Sequence[PaperRef]) -> bool:
    """Whether *phrase* repeats a content term of the question *previous* (either number)."""
    said = {plural_stem(term.casefold()) for term in content_terms(previous, papers)}
    return any(plural_stem(term.casefold()) in said for term in content_terms(phrase, papers))


# A numbered thing ("phase 2", "Table 3", "step 4b") that a fragment may put in place of its twin.
_NUMBERED = re.compile(r"\b(?P<noun>[A-Za-z][\w-]*)\s+(?P<label>\d+[a-z]?)\b")


# A fragment's phrase of a preposition, an article, a word or two and a noun: "on the Paxos quiz".
_TWIN_FORM = re.compile(
    r"\s*(?P<lead>(?:on|in|at|for|from|with|during|under)\s+(?:the|a|an)\s+)(?:[\w-]+\s+){1,2}(?P<noun>[a-z][\w-]*)\s*",
    re.IGNORECASE,
)


def _twin_phrase(previous: str, phrase: str) -> re.Match[str] | None:
    """Where *previous* has a phrase of the same form as the fragment's *phrase* ("on the Raft
    quiz" for "on the Paxos quiz"): its preposition and article, other words, the same last noun;
    None when it has none."""
    form = _TWIN_FORM.fullmatch(phrase)
    if form is None:
        return None
    lead = r"\s+".join(re.escape(word) for word in form["lead"].split())
    twin = re.search(rf"\b{lead}\s+(?:[\w-]+\s+){{1,2}}?{re.escape(form['noun'])}\b", previous, re.IGNORECASE)
    return twin if twin is not None and twin.group(0).casefold() != phrase.strip().casefold() else None


def _with_condition(previous: str, phrase: str) -> str:
    """*previous* (a standalone question) asked under the condition *phrase* of a fragment
    follow-up: a numbered thing the phrase names replaces its twin ("... to run phase 1 (the view
    change) for a ballot?" + "for phase 2" -> "... to run phase 2 for a ballot?"), else the phrase
    is added ("How long did the sort take?" + "when 200 workers were killed" -> "How long did the
    sort take when 200 workers were killed?")."""
    for numbered in _NUMBERED.finditer(phrase):
        twin = re.search(
            rf"\b{re.escape(numbered['noun'])}\s+(?!{re.escape(numbered['label'])}\b)\d+[a-z]?\b(?:\s*\([^)]*\))?",
            previous,
            re.IGNORECASE,
        )
        if twin is not None:
            return previous[: twin.start()] + numbered.group(0) + previous[twin.end() :]
    twin = _twin_phrase(previous, phrase)
    if twin is not None:
        # "... the mean score on the Raft quiz in the user study?" + "on the Paxos quiz": in its place.
        return previous[: twin.start()] + phrase.strip() + previous[twin.end() :]
    body = previous.rstrip(" ?.!")
    # (A closing condition, "under"/"during"/"when" ..., is replaced below, whatever its word.)
    preposition = re.match(r"(?:on|in|at|for|using)\b", phrase.strip(), re.IGNORECASE)
    closing = re.search(rf"\s+{preposition.group()}\s+[^?,;]*$", body, re.IGNORECASE) if preposition else None
    if closing is not None:
        # "What is the F1 on ChemProt?" + "on ACL-ARC": the new phrase in place of the old one.
        return f"{body[: closing.start()]} {phrase.strip()}?"
    if re.match(rf"{_CONDITION_WORD}\b", phrase.strip(), re.IGNORECASE):
        # "What happens when a Raft leader fails?" + "when a follower fails": the new condition in
        # place of the old one, not beside it.
        body = _CLOSING_CONDITION.sub("", body)
    return f"{body} {phrase.strip()}?"


_CONDITION_WORD = r"(?:when|whenever|if|with|without|under|during|after|before)"
# A condition that closes a question ("... when a Raft leader fails", "... in its normal execution").
_CLOSING_CONDITION = re.compile(
    rf"\s+(?:{_CONDITION_WORD}\b[^?,;]*|in (?:its|the|their|a) (?:normal|usual|default|typical|regular) [\w-]+)$",
    re.IGNORECASE,
)


# "How many of those participants ...?", "these snapshots": a thing the conversation already named.
_DEMONSTRATIVE = re.compile(rf"\b(?:those|these)\s+(?!{_PAPERS_NOUN}\b|authors\b)(?=[a-z])", re.IGNORECASE)
# "that score", "this language filter", "that same evaluation": a thing pointed at, when "that"
# opens the question or follows a preposition or an auxiliary (after a noun, "the data that clients
# read", it opens a relative clause).
_POINTED = re.compile(
    r"(?:^\s*|\b(?:on|in|of|for|with|from|by|at|about|to|into|under|during|after|before|did|does|do|is|was|"
    r"are|were|can|could|would|will|has|have|had|and|why|if|when|whether|unless|until|once)\s+)"
    r"(?P<pointer>that|this)\s+(?P<same>same\s+)?"
    r"(?!(?:is|was|are|were|does|do|did|has|have|had|can|could|would|will|should|means|seems|happens)\b)"
    r"(?:(?-i:[a-z])[\w-]*\s+){0,2}?(?P<head>(?-i:[a-z])[\w-]{2,})\b(?=\s*(?:[?.!,]|$|(?:end|be|get|work|"
    r"remove|removed|compare|differ|take|took|fare|cost|use|used|mean|do|did|does|fail|fails|failed|succeed|"
    r"succeeds|happens|starts|ends|at|in|on|for|of|with|to|from)\b))",
    re.IGNORECASE,
)
# "How many kept using it?": "it" as the object of a verb, the thing the conversation is about.
# Not after an auxiliary, a preposition or a conjunction (there "it" is a subject or "of it" an
# object `_OBJECT_IT` reads), nor a verb of a dummy "it" ("make it possible", "find it hard").
_NOT_BEFORE_OBJECT = (
    "is|are|was|were|be|been|does|do|did|can|could|would|will|should|shall|may|might|must|has|have|had|"
    "of|about|to|with|for|from|on|into|by|at|in|and|or|but|that|if|when|as|than|because|since|while|before|"
    "after|once|where|whether|unless|until|then|what|which|who|why|how|make|makes|made|making|find|finds|found|"
    "take|takes|took|keep|keeps|kept"
)
_VERB_OBJECT_IT = re.compile(rf"\b(?!(?:{_NOT_BEFORE_OBJECT})\b)[a-z]{{3,}}\s+(?P<it>it)\b", re.IGNORECASE)
# "the leader", "the lease": a definite noun whose head the previous turn said.
_DEFINITE = re.compile(r"\bthe\s+(?:[a-z][\w-]*\s+){0,2}?(?P<head>[a-z][\w-]{2,})\b(?!\s+(?:of|in)\s+(?-i:[A-Z]))")


def _continues(question: str, before: str, papers: Sequence[PaperRef]) -> bool:
    """Whether *question*, which names no paper and has no pronoun of a follow-up, still goes on
    with the conversation *before* it (the previous question and answer): it points back with
    "those"/"these" ("How many of those participants ...?") or "that"/"this" ("... on that
    score?"), has "it" as a verb's object ("...
    kept using it?"), or asks about a definite thing ("the leader") that *before* spoke of. A
    question about the papers themselves, or across them, starts afresh."""
    if named_papers(question, papers) or is_broad(question):
        return False
    if any(match["head"].casefold() not in _NON_TERMS for match in _POINTED.finditer(question)):
        return True  # "How many paper clusters did that language filter remove?"
    if _ABOUT_PAPERS.search(question):
        return False
    if _DEMONSTRATIVE.search(question) or _VERB_OBJECT_IT.search(question):
        return True
    said = {plural_stem(word) for word in _WORD.findall(before.casefold())}
    return any(
        match["head"].casefold() not in _NON_TERMS and plural_stem(match["head"].casefold()) in said
        for match in _DEFINITE.finditer(question)
    )


def _with_word_swapped(query: str, old: str, new: str) -> str:
    """*query* with its first whole-word *old* read as *new* ("What recall ...?" -> "What precision ...?")."""
    return re.sub(rf"\b{re.escape(old)}\b", new, query, count=1)


def _the_pointed(question: str, thing: str | None = None) -> str:
    """*question* with its pointing "those"/"these"/"that"/"this" read as "the" ("How many did that
    language filter remove?" -> "How many did the language filter remove?"); a pointed word that
    only stands for what the previous question asked for ("Why that value?") becomes that *thing*
    ("Why the lease duration?")."""
    question = _DEMONSTRATIVE.sub("the ", question)
    for match in reversed(list(_POINTED.finditer(question))):
        between = question[match.end("pointer") : match.start("head")].split()
        if thing and match["head"].casefold() in _STAND_INS and between in ([], ["same"]):
            question = question[: match.start("pointer")] + f"the {thing}" + question[match.end("head") :]
        else:
            question = question[: match.start("pointer")] + "the" + question[match.end("pointer") :]
    return question


# Words that point at what was asked without naming it: "that value", "this number".
_STAND_INS = frozenset("value values number numbers figure figures choice setting amount one thing".split())


# "What's the equivalent rule on the ZooKeeper side?", "What is its counterpart in Raft?": the
# previous question, asked of another paper.
_EQUIVALENT = re.compile(
    r"\b(?:(?:the|its|their)\s+)?(?:equivalent|counterpart|analog(?:ue)?|corresponding|matching)"
    r"(?:\s+(?:rule|mechanism|thing|step|setting|feature|idea|one|part|number|value|figure|approach|design|"
    r"policy|parameter|default))?\b|\bside\b",
    re.IGNORECASE,
)


def _said_again(text: str) -> str:
    """*text* without its words that point back at the previous question ("that", "do it", "the
    equivalent rule"): what is left is what the follow-up asks of its own."""
    return _EQUIVALENT.sub(" ", _TOPIC_PRONOUN.sub(" ", _DO_IT.sub(" ", text)))


# A follow-up that says this many things of its own ("... what trouble can servers cause after they
# have been removed from the configuration without knowing it?") keeps its closing "it": it is no
# bare "How long did that take?" that needs the previous topic to mean anything.
MAX_TERMS_FOR_TOPIC = 5
# A topic of more words than this is a clause ("cluster management system starts a master very
# first thing master"), which no pronoun stands in for.
MAX_TOPIC_WORDS = 7


# "What about S2ORC — which PDFs did its pipeline filter out?": a paper named, then the question about it.
_ABOUT_THEN_ASKED = re.compile(
    r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(?P<name>[^\u2014\u2013:?]{2,80}?)\s*(?:\u2014|\u2013|--|:|\?)\s*"
    r"(?P<asked>[A-Za-z].*)$",
    re.IGNORECASE,
)


def about_then_asked(question: str, papers: Sequence[PaperRef]) -> str:
    """*question* as one question when it names a paper with "What about X —" and then asks about
    it: "What about S2ORC — which PDFs did its pipeline filter out?" -> "Which PDFs did S2ORC's
    pipeline filter out?"; "What about Paxos Made Simple — what is the first message there
    called?" -> "What is the first message called in Paxos Made Simple?". The first "its"/"their"
    becomes the name's possessive, else "there" goes and the name closes the question; anything
    else is returned as it is."""
    match = _ABOUT_THEN_ASKED.match(question)
    if match is None or not named_papers(match["name"], papers):
        return question
    name, asked = match["name"].strip(), match["asked"].strip()
    asked = asked[0].upper() + asked[1:]
    if re.search(r"\b(?:its|their)\b", asked, re.IGNORECASE):
        return re.sub(r"\b(?:its|their)\b", f"{name}'s", asked, count=1, flags=re.IGNORECASE)
    asked = re.sub(r"\s+there\b", "", asked, count=1, flags=re.IGNORECASE)
    body = asked.rstrip("?.! ")
    return f"{body} in {name}{asked[len(body) :].strip() or '?'}"


# "that service", "this tool": a thing of the kind the previous question asked for.
_POINTED_NOUN = re.compile(r"\b(?:that|this|the same)\s+(?P<head>[a-z][\w-]*)\b", re.IGNORECASE)


def _answer_pointed_at(
    question: str, previous: str, answer: Turn | None, earlier: _Resolved, papers: Sequence[PaperRef]
) -> _Resolved | None:
    """*question* about the thing the previous answer named, when it points at it by the noun the
    previous question asked for: "How many replicas does that service run?" after "Which
    coordination service does Bigtable depend on?", answered from Chubby ("... a lock service
    called Chubby"), asks it of Chubby. None otherwise."""
    pointed = _POINTED_NOUN.search(question)
    if answer is None or not answer.quotes or pointed is None:
        return None
    if classify_answer_type(previous) != AnswerType.ENTITY:
        return None
    if pointed["head"].casefold() not in {word.casefold() for word in _WORD.findall(previous)}:
        return None
    before, after = question[: pointed.start()], question[pointed.end() :]
    other = [m.paper_id for m in mentions(answer.quotes[0], papers) if m.paper_id not in earlier.focus]
    if other:
        query = " ".join(f"{before}{_names(other[:1], papers)}{after}".split())
        return _Resolved(query=query, focus=tuple(other[:1]), pool=earlier.pool, comparison=False)
    name = answer_name(answer.quotes[0], previous, papers)
    if name is None:
        return None
    query = _in_papers(" ".join(f"{before}{name}{after}".split()), earlier.focus, papers)
    return _Resolved(query=query, focus=earlier.focus, pool=earlier.pool, comparison=False)


# A follow-up said after the previous question, whole: "So how do they get around it? (after: ...)".
_AFTER = " (after: "


def _resolve(question: str, history: Sequence[Turn], papers: Sequence[PaperRef], depth: int = 0) -> _Resolved:
    """*question* resolved against *history* (answered turns, oldest first)."""
    question = about_then_asked(question, papers)
    named = named_papers(question, papers)
    standalone = _Resolved(
        query=question.strip(),
        focus=named,
        pool=named,
        comparison=is_comparison(question, named=_times_named(question, papers)),
    )
    previous_question = next((t for t in reversed(history) if t.role == "user"), None)
    if previous_question is None or depth >= 3:
        return standalone
    index = max(i for i, t in enumerate(history) if t is previous_question)
    answer = history[index + 1] if index + 1 < len(history) else None
    ones = _THE_ONES.search(question)
    counted = _HOW_MANY_PLURAL.search(previous_question.text)
    if ones is not None and counted is not None:
        # "What caused the ones that lasted longer than 30 seconds?" after "How many outages were
        # recorded?": the outages.
        question = f"{question[: ones.start('ones')]}{counted['things']}{question[ones.end('ones') :]}"
    contrast = _WHAT_HAPPENED.match(question)
    if contrast is not None and not _shares_terms(contrast["phrase"], previous_question.text, papers):
        contrast = None  # "What happens when a leader fails?" is a question of its own
    if contrast is None and not _looks_like_follow_up(question, papers):
        before = f"{previous_question.text} {answer.text if answer is not None else ''}"
        if not _continues(question, before, papers):
            return standalone
        # "How many of those participants kept using it?" after a question about CiteSee's field
        # study: the same paper, the thing pointed at by its article.
        earlier = _resolve(previous_question.text, history[:index], papers, depth + 1)
        if not earlier.focus:
            return standalone
        pointed_at = _answer_pointed_at(question, previous_question.text, answer, earlier, papers)
        if pointed_at is not None:
            return pointed_at
        query = _the_pointed(question.strip(), asked_thing(previous_question.text, papers))
        used = _VERB_OBJECT_IT.search(query)
        if used is not None and len(earlier.focus) == 1:  # "... kept using it?": the paper's system
            query = query[: used.start("it")] + _names(earlier.focus, papers) + query[used.end("it") :]
        else:
            query = _in_papers(query, earlier.focus, papers)
        return _Resolved(query=" ".join(query.split()), focus=earlier.focus, pool=earlier.pool, comparison=False)
    earlier = _resolve(previous_question.text, history[:index], papers, depth + 1)
    cited = answer.paper_ids if answer is not None else ()
    pool = tuple(dict.fromkeys((*earlier.focus, *earlier.pool, *cited)))
    if len(papers) == 2:
        # In a two-paper project "the other one" and "the second paper" mean the paper the last turn
        # did not cite, even when its answer cited only one.
        pool = tuple(dict.fromkeys((*pool, *(paper.paper_id for paper in papers))))
    previous = replace(earlier, pool=pool)

    compared = _HOW_COMPARE.match(question)
    compared_papers = [pid for pid in named_papers(question, papers) if pid not in previous.focus]
    if compared is not None and compared_papers and previous.focus:
        # "How does Chubby compare?" after "How does ZooKeeper order updates?": the same question
        # of Chubby, beside ZooKeeper.
        focus = tuple(dict.fromkeys((*compared_papers, *previous.focus)))
        return _Resolved(
            query=_swap_papers(previous.query, focus, papers), focus=focus, pool=previous.pool, comparison=True
        )
    asked_how = _PREPOSITION_WH.match(question)
    previous_clause = _WH_CLAUSE.match(previous.query) if asked_how is not None else None
    # Not where the previous question ends on a preposition of its own ("How many runs are the
    # results averaged over?"): "On what hardware?" then asks something else.
    last = previous_clause["rest"].split()[-1:] if previous_clause is not None else []
    ends_open = bool(last) and last[0].casefold() in _PREPOSITIONS
    if asked_how is not None and previous_clause is not None and not ends_open and not named_papers(question, papers):
        # "On what hardware?" after "How long was S2ORC-SciBERT pretrained?": "On what hardware was
        # S2ORC-SciBERT pretrained?"
        head = f"{asked_how['prep'][:1].upper()}{asked_how['prep'][1:].lower()} {asked_how['wh'].lower()}"
        rest = f"{previous_clause['aux'].lower()}{previous_clause['rest'].rstrip()}"
        query = f"{head} {asked_how['thing']} {rest}?"
        return _Resolved(query=query, focus=previous.focus, pool=previous.pool, comparison=previous.comparison)
    fragment = _FRAGMENT.match(question) or contrast
    # A fragment may name a paper the previous question named ("And for people who had already taken
    # the Paxos quiz?" after a question about the Raft and Paxos exams); another paper is a question of its own.
    named_anew = set(named_papers(question, papers)) - set(named_papers(previous.query, papers))
    if fragment is not None and named_anew and _twin_phrase(previous.query, fragment["phrase"]) is not None:
        # "And on the Paxos quiz?" after "What was the mean score on the Raft quiz?": the name says
        # which quiz, in place of its twin, not which paper.
        named_anew = set()
    if fragment is not None and not named_anew and not _PAPER_REFERENCE.search(question):
        query = _with_condition(previous.query, fragment["phrase"])
        if previous.focus and not named_papers(query, papers):  # the condition replaced named the paper
            query = _in_papers(query, previous.focus, papers)
        return _Resolved(query=query, focus=previous.focus, pool=previous.pool, comparison=previous.comparison)
    thing = _referent(previous.query, papers)
    named_here = bool(named_papers(question, papers)) or _PAPER_REFERENCE.search(question) is not None
    other_name = _AND_NAME.match(question)
    name_before = named_subject(previous.query, papers)
    if other_name is not None and name_before and not named_here:
        # "And SCIENCEPARSE?" after "What is GROBID used for in S2ORC?": the same question of the other tool.
        query = _with_word_swapped(previous.query, name_before, other_name["name"])
        return _Resolved(query=query, focus=previous.focus, pool=previous.pool, comparison=previous.comparison)
    other_subject = _AND_THE_PHRASE.match(question)
    subject_before = _AUX_SUBJECT.search(previous.query) if other_subject is not None and not named_here else None
    if subject_before is not None and other_subject is not None and not _MEASURE_THING.search(other_subject["phrase"]):
        # "And the Specter baseline?" after "What coefficient did the reencountered-citation strategy
        # get ...?": the same question, of the baseline in the subject's place. A verb that is the
        # phrase's own noun ("the first pass of ..." for "And the second pass?") belongs to the subject.
        old = subject_before["subject"]
        if subject_before["verb"].casefold() == other_subject["phrase"].split()[-1].casefold():
            old = f"{old} {subject_before['verb']}"
        query = _with_word_swapped(previous.query, old, other_subject["phrase"])
        return _Resolved(query=query, focus=previous.focus, pool=previous.pool, comparison=previous.comparison)
    other_thing = _WHAT_ABOUT_THING.match(question)
    closing = _CLOSING_PHRASE.search(previous.query) if other_thing is not None and not thing else None
    if other_thing is not None and (thing or closing) and not named_here:
        # "What about its precision?" after "What recall does S2ORC's citation linking reach?";
        # "What about log replication?" after "How do Raft and Paxos differ in leader election?"
        if thing:
            query = _with_word_swapped(previous.query, thing, other_thing["thing"])
        else:
            assert closing is not None
            before, after = previous.query[: closing.start("phrase")], previous.query[closing.end("phrase") :]
            query = before + other_thing["thing"] + after
        return _Resolved(query=query, focus=previous.focus, pool=previous.pool, comparison=previous.comparison)
    which_of = _WHICH_OF_THEM.match(question)
    if which_of is not None and thing and not re.search(r"[^s]s$", thing) and not named_papers(question, papers):
        # "Which of them removes the least?" after "Which filter removes the most papers?": which
        # filter (a plural thing, "What filters does S2ORC apply?", is "them" as it reads).
        question = f"{which_of['which']} {thing}{question[which_of.end() :]}"
    bare_count = _BARE_HOW_MANY.match(question)
    if bare_count is not None and thing and re.search(r"[^s]s$", thing):
        # "How many did they use?" after "What GPUs did the authors train on?": how many GPUs.
        question = f"{question[: bare_count.end()]} {thing}{question[bare_count.end() :]}"
    closing = _CLOSING_SUBJECT.search(question)
    subject = _fronted_subject(previous.query) if closing is not None else ""
    if closing is not None and re.match(r"(?i)(?:is|was|are|were)\b", closing.group(0)) and thing:
        subject = ""  # "Why is that useful?" after "What ordering guarantee does MapReduce give?": the guarantee
    if not cut_mentions(subject, papers).strip():
        subject = ""  # "What does that cost?" after "What chunk size does GFS use?" is about the chunk size
    if closing is not None and subject:  # "How long did it take?" after "How many machines did the sort use?"
        question = question[: closing.start("pronoun")] + subject + question[closing.end("pronoun") :]
    measured_it = _MEASURED_IT.search(question)
    event = _EVENT.search(previous.query)
    if measured_it is not None and event is not None and len(previous.focus) <= 1 and not named_here:
        # "How long does it take?" after "What happens when the GFS master fails?": the recovery from
        # that event, which no noun of the previous question names; asked after it, said whole.
        query = f"{question.strip()}{_AFTER}{previous.query})"
        return _Resolved(query=query, focus=previous.focus, pool=previous.pool, comparison=previous.comparison)
    if len(previous.focus) >= 2 and not named_here and measured_it is not None:
        # "How long does it take?" after "How do Raft and ZooKeeper handle leader failover?": "it"
        # is one thing, the topic, not the two papers ("How does it detect ...?" is each paper).
        measured_topic, _ = _topic(_PART_BREAK.split(previous.query)[0], papers)
        if measured_topic:
            question = question[: measured_it.start("it")] + measured_topic + question[measured_it.end("it") :]
    answered = None
    if answer is not None and answer.quotes and classify_answer_type(previous.query) == AnswerType.ENTITY:
        answered = answer_name(answer.quotes[0], previous.query, papers)
    text, referred, subject_it, group, unclear = _resolve_references(
        question.strip(), previous, papers, cited, thing, answered
    )
    new_papers = tuple(dict.fromkeys((*named_papers(text, papers), *referred)))
    own_terms = content_terms(_said_again(text), papers)
    # The topic of a question of several parts is its first part's ("How does Paper Plain find the
    # terms it defines, and where do the definitions come from?": finding the terms).
    noun_phrase, verb_phrase = _topic(_PART_BREAK.split(previous.query)[0], papers)
    if noun_phrase and not new_papers:
        head = noun_phrase.split()[-1]
        text = _ADJECTIVE_ONE.sub(lambda m: f"{m['det']} {m['adj']} {head}{m['plural']}", text)

    # "Who uses it?" asks something of its own with a light verb alone; "How does the second paper do
    # it?" and "What about the other one?" do not.
    own_words = [
        word
        for word in _WORD.findall(cut_mentions(_said_again(text), papers))
        if re.sub(r"['\u2019]s$", "", word.casefold()) not in _FUNCTION_WORDS | _PAPER_WORDS
    ]
    own_words += _WHAT_DOES_DO.findall(text)  # "What does it do?": "do" is its verb, not a stand-in
    bare = _BARE_WH.match(question)
    # "And Bigtable?", "What about the other one?", "Why?", "Why so low?": the previous question.
    if bare or not (own_terms or own_words):
        query = _swap_papers(previous.query, new_papers, papers) if new_papers else previous.query
        if bare is not None:
            query = _asked_again(query, bare["wh"])
        focus = new_papers or previous.focus
        comparison = (len(focus) >= 2) or (not new_papers and previous.comparison)
        return _Resolved(query=query, focus=focus, pool=previous.pool, comparison=comparison, unclear=unclear)

    handled = _HANDLE_THAT.search(text)
    if handled is not None and new_papers:
        if event is not None:
            # "How does Chubby handle that?" after "What happens when the GFS master fails?": the
            # same event in Chubby ("What happens when the Chubby master fails?").
            query = _swap_papers(previous.query, new_papers, papers)
            return _Resolved(query=query, focus=new_papers, pool=previous.pool, comparison=len(new_papers) >= 2)
        if _HOW_DOES.match(previous.query) and noun_phrase and verb_phrase == noun_phrase:
            # After "How does Raft elect a leader?" (no light verb of its own), "How does Chubby handle
            # that?" asks how Chubby elects a leader, not how it "handle elect a leader".
            text = f"{text[: handled.start()]}{noun_phrase}{text[handled.end() :]}"
    clause = len(noun_phrase.split()) > MAX_TOPIC_WORDS and not (thing and not new_papers)
    pronoun = bool(_DO_IT.search(text) or _TOPIC_PRONOUN.search(text))
    said_whole = clause and pronoun and len(own_terms) < MAX_TERMS_FOR_TOPIC
    if said_whole:
        # "So how do they get around it?" after "Bigtable co-mingles mutations ... in one commit log.
        # What goes wrong with that when the server dies ...?": "it" stands for a whole clause, which
        # no noun phrase replaces; the follow-up is asked after the previous question, said whole.
        query = f"{text.rstrip()}{_AFTER}{previous.query})"
    else:
        query = _DO_IT.sub(verb_phrase, text) if verb_phrase else text
        if thing and not new_papers and _TOPIC_PRONOUN.search(query):
            # "Why is that useful?" after "What ordering guarantee does MapReduce give ...?": the guarantee.
            query = _TOPIC_PRONOUN.sub(f"the {thing}", query, count=1)
        elif noun_phrase and len(own_terms) < MAX_TERMS_FOR_TOPIC:
            # The topic without the words the follow-up says itself: "How long did that take?" after
            # "How long did the evaluation take?" is "How long did the evaluation take?", not "...
            # long the evaluation take take?".
            said = {word.casefold() for word in _WORD.findall(text)}
            # Nor the previous question's closing verb: "How often did the participants wear it?"
            # after "How many participants did the study recruit?" wears no "recruit"; with nothing
            # else left, "it" stays as it is (the paper the query is put in says where).
            closing_verb = _CLOSING_VERB.search(previous.query) if _VERB_OBJECT_IT.search(query) else None
            verb_dropped = closing_verb is not None and closing_verb["verb"].casefold() not in said
            if closing_verb is not None and verb_dropped:
                said.add(closing_verb["verb"].casefold())
            topic = [word for word in noun_phrase.split() if word.casefold() not in said]
            if not topic and not verb_dropped:
                topic = noun_phrase.split()
            while len(topic) > 1 and topic[-1].casefold() in _FUNCTION_WORDS:
                topic.pop()
            if topic:
                query = _TOPIC_PRONOUN.sub(" ".join(topic), query)
    query = _strip_lead(query)
    focus = new_papers
    if not focus and previous.focus and not subject_it:
        focus = previous.focus
        if not said_whole:  # the previous question, said whole, names its papers
            query = _in_papers(query, focus, papers)
    comparison = group or is_comparison(query, named=max(_times_named(query, papers), len(referred)))
    return _Resolved(query=query, focus=focus, pool=previous.pool, comparison=comparison, unclear=unclear)


# "How many papers are in S2ORC?": papers counted, not papers named.
_COUNTED_PAPER_WORD = re.compile(r"\bhow\s+many\s+(papers|articles|publications|documents|authors)\b", re.IGNORECASE)


def _with_counted_noun(terms: tuple[str, ...], query: str) -> tuple[str, ...]:
    """*terms* with the paper word a "how many" question counts (`_PAPER_WORDS` are no key terms
    elsewhere: "the Raft paper" names a paper)."""
    counted = _COUNTED_PAPER_WORD.search(query)
    if counted is None or counted[1].casefold() in terms:
        return terms
    return (*terms, counted[1].casefold())


def _asks_another_paper(question: str) -> bool:
    """Whether *question* calls a paper "the other (paper, one, ...)"."""
    reference = _PAPER_REFERENCE.search(question)
    return reference is not None and reference.group(0).casefold().startswith("the other")


# An HTML or XML tag ("<img src=x onerror=alert(1)>", "</b>"): a tag opens with a letter, "/" or "!"
# after "<", so "latency < 10 ms" is no tag. A script or style element goes whole.
_MARKUP = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>|<[A-Za-z/!][^<>]*>", re.IGNORECASE | re.DOTALL)


def without_markup(question: str) -> str:
    """*question* without HTML tags pasted into it ("<b>What is S2ORC?</b>" -> "What is S2ORC?"),
    spaces collapsed where a tag stood; the words between tags stay. A question is shown as typed
    (escaped), but its markup is no part of what it asks."""
    if "<" not in question:
        return question
    return " ".join(_MARKUP.sub(" ", question).split())


def analyse_question(question: str, *, history: Sequence[Turn], papers: Sequence[PaperRef]) -> QuestionAnalysis:
    """Analyse *question* asked after *history* (the conversation's answered turns, oldest first;
    an assistant turn's `paper_ids` are the papers its citations point at) in a project of *papers*.

    A follow-up (it refers back: "the second paper", "that", "it", "And ...", or has no content of
    its own) is rewritten deterministically into the standalone `query` (see the module
    docstring); `rewritten` says so. Pure: no model, no database.
    """
    question = without_markup(question)
    asked = [i for i, turn in enumerate(history) if turn.role == "user"]
    if asked and " ".join(question.split()).casefold() == " ".join(history[asked[-1]].text.split()).casefold():
        # The previous question asked again ("Which of them removes the most?" twice): it means what
        # it meant then, and is answered as it was, not as a follow-up to its own answer.
        return analyse_question(question, history=history[: asked[-1]], papers=papers)
    resolved = _resolve(question, history, papers)
    resolved = replace(resolved, query=by_name(resolved.query, papers))
    rewritten = resolved.query != question.strip()
    focus = resolved.focus
    if not focus and len(papers) == 2 and is_broad(resolved.query):
        # "Compare the sample sizes of the two papers" in a two-paper project needs both papers: an
        # answer citing one of them is only partly an answer.
        focus = tuple(paper.paper_id for paper in papers)
    absent = None if focus else absent_paper(resolved.query, papers)
    analysis = QuestionAnalysis(
        question=question,
        query=resolved.query,
        # "Does Bigtable compress it? (after: How much data does the imagery table hold?)" asks yes or no.
        answer_type=classify_answer_type(resolved.query.split(_AFTER)[0]),
        named_paper_ids=focus,
        comparison=resolved.comparison or is_broad(resolved.query, names_a_paper=bool(resolved.focus)),
        broad=is_broad(resolved.query, names_a_paper=bool(resolved.focus)),
        rewritten=rewritten,
        key_terms=_with_counted_noun(content_terms(resolved.query, papers), resolved.query),
        unclear_papers=resolved.unclear,
        absent_name=absent,
        absent_like=close_paper_name(absent, papers) if absent else None,
        no_other_paper=len(papers) == 1 and _asks_another_paper(question),
        acting_name=acting_name(question, papers),
    )
    if len(focus) >= 2 and relates_papers(resolved.query, focus, papers):
        # How papers bear on one another is stated where one names another: "It produces a result
        # equivalent to (multi-)Paxos" relates Raft to Paxos. Their names are key terms here.
        names = tuple(
            dict.fromkeys((m.paper_id, resolved.query[m.start : m.end]) for m in mentions(resolved.query, papers))
        )
        analysis = replace(analysis, key_terms=key_terms(resolved.query), related_names=names)
    parts = question_parts(analysis, papers)
    analysis = replace(analysis, parts=parts, paper_queries=paper_queries(analysis.query, focus, parts, papers))
    answer = history[-1] if rewritten and history and history[-1].role == "assistant" else None
    if answer is not None:
        analysis = replace(analysis, previous_pages=answer.pages, said_before=answer.quotes)
    if analysis.no_other_paper:
        # Asked as it was: the answer says there is no other paper, not the previous question's answer.
        analysis = replace(analysis, query=question.strip(), rewritten=False)
    return analysis


# A question about how the named papers' systems bear on one another: "How do Bigtable, GFS and
# Chubby depend on each other?", "Compare how GFS and Bigtable use Chubby."
_RELATION = re.compile(r"\b(?:each other|one another|interact(?:s|ion)?)\b", re.IGNORECASE)
_RELATION_VERB = (
    r"(?:use|uses|using|used by|(?:use|usage|reliance|dependence|dependency) (?:of|on)"
    r"|rel(?:y|ies|ying) on|depends? on|built on|builds? on|on top of|stored? in"
    r"|relates? to|related to|based on|derived from|derives? from|extends?)"
)


def relates_papers(query: str, named: Sequence[int], papers: Sequence[PaperRef]) -> bool:
    """Whether *query* asks how the *named* papers' systems bear on one another ("depend on each
    other") or on one of them ("use Chubby", "built on GFS"), rather than comparing each on its own."""
    if _RELATION.search(query):
        return True
    names = [name for paper in papers if paper.paper_id in named for name in paper_names(paper)]
    return any(
        re.search(rf"\b{_RELATION_VERB}\s+(?:the\s+)?{re.escape(name)}\b", query, re.IGNORECASE) for name in names
    )


def paper_queries(
    query: str, named: Sequence[int], parts: Sequence[QuestionAnalysis], papers: Sequence[PaperRef]
) -> tuple[tuple[int, str], ...]:
    """For a question that names two papers or more, (paper id, query) for each: the parts of a
    compound question that concern that paper (those naming it or naming none), with the names of
    the other papers cut out. "How do Raft and Chubby each elect a leader?" -> (Raft, "How do Raft
    each elect a leader?"), (Chubby, "How do Chubby each elect a leader?"): each paper is searched
    for its own side of the comparison, so one paper's name does not pull the other's passages
    towards the passages that name both. () for a question naming fewer than two papers. A question
    asking how they bear on one another (`relates_papers`) would lose what it asks cut to one name
    ("Compare how GFS and Bigtable use Chubby." is no question about GFS alone): it gives each paper
    one query per other paper, cut to the two names (several entries per paper id)."""
    if len(named) < 2:
        return ()
    if relates_papers(query, named, papers):
        # Each paper with each other one: "How do Bigtable, GFS and Chubby depend on each other?" ->
        # (Bigtable, "How do Bigtable and GFS depend on each other?"), (Bigtable, "How do Bigtable
        # and Chubby ...?"), ...: one paper's passages about another are found for every pair.
        pairs = [(a, b) for a in named for b in named if a != b]
        return tuple(dict.fromkeys((a, _tidy(cut_mentions(query, papers, keep={a, b}))) for a, b in pairs))
    sides = {} if parts else conjunct_sides(query, papers)
    out = []
    for paper_id in named:
        pieces = [p.query for p in parts if paper_id in p.named_paper_ids or not named_papers(p.query, papers)]
        text = sides.get(paper_id) or cut_mentions(" ".join(pieces) if parts else query, papers, keep={paper_id})
        out.append((paper_id, _tidy(text)))
    return tuple(out)


# The end of a conjunct: a stop, a comma, a semicolon, or the next "and".
_CONJUNCT_END = re.compile(r"\s*(?:[?.!,;:]|\band\b|$)")
_JOINT = re.compile(
    r"\s+(?:and|or|versus|vs\.?|compared\s+(?:with|to))\s+(?P<opener>in|for|on|at|with|from|of|during|by)\s+"
)
# Between two definite noun phrases that name papers: "[the CiteSee] lab study and [the Paper Plain]".
_DEFINITE_PAIR = re.compile(r"(?P<rest>(?:\s+(?-i:[a-z])[\w-]*){1,3})(?P<joint>\s+(?:and|or|versus|vs\.?)\s+)", re.I)


# Between two names each in a phrase of the same form: "typical [Bigtable] row keys and typical
# [Dynamo]" (the same modifier before each name).
_PARALLEL_PAIR = re.compile(
    r"(?P<rest>(?:\s+(?-i:[a-z])[\w-]*){1,4})(?P<joint>\s+(?:and|or|versus|vs\.?)\s+)(?P<mod>(?:[\w-]+\s+){0,2})", re.I
)


# Between two possessive names: "[Raft's] leader election compare with [ZooKeeper's]": the thing
# of the first, compared with the second's.
_COMPARED_WITH_THEIRS = re.compile(
    r"\s+(?P<thing>(?:[\w-]+\s+){0,3}?[\w-]+)\s+(?P<verb>compares?|differs?|stacks?\s+up)\s+"
    r"(?:with|to|from|against)\s+",
    re.IGNORECASE,
)


def conjunct_sides(query: str, papers: Sequence[PaperRef]) -> dict[int, str]:
    """For a question whose two papers each stand in a phrase of their own joined by "and", "or"
    or "versus" (both phrases opening with one preposition: "How many participants took part in
    the Paper Plain usability study and in the CiteSee lab study?"; or both a definite noun phrase
    with as many words after the name: "Which models did the CiteSee lab study and the Paper Plain
    usability study fit?"): paper id -> the question with the other phrase left out ("How many
    participants took part in the CiteSee lab study?"), so each side is searched for its own study,
    not for the other's ("usability study"). {} for any other question ("How do GFS and Dynamo
    replicate data?": the names alone, which `cut_mentions` cuts)."""
    found = sorted(mentions(query, papers), key=lambda m: m.start)
    if len(found) != 2 or found[0].paper_id == found[1].paper_id:
        return {}
    first, second = found
    compared = _COMPARED_WITH_THEIRS.fullmatch(query, first.end, second.start)
    possessives = all(re.search(r"['\u2019]s$", query[m.start : m.end]) for m in found)
    if compared is not None and possessives:
        # "How does Raft's leader election compare with ZooKeeper's?": each side is its paper's
        # leader election ("How does ZooKeeper's leader election compare?").
        head, tail = query[: first.start], query[second.end :]
        return {
            m.paper_id: _tidy(
                " ".join(f"{head}{query[m.start : m.end]} {compared['thing']} {compared['verb']}{tail}".split())
            )
            for m in found
        }
    joint = _JOINT.search(query, first.end, second.start)
    definite = _DEFINITE_PAIR.fullmatch(query, first.end, second.start)
    if joint is not None:
        first_start = query.rfind(f" {joint['opener']} ", 0, first.start) + 1
        if first_start <= 0:
            return {}
        first_end, second_start = joint.start(), joint.start("opener")
        end = _CONJUNCT_END.search(query, second.end)
        second_end = end.start() if end is not None else len(query)
    elif definite is not None and query[first.start : first.end].casefold().startswith("the "):
        # The second phrase has as many words after its name as the first ("lab study").
        # (Fewer, when the question's closing word comes first: "the Chubby outage last?")
        after_first = len(definite["rest"].split())
        words = list(re.finditer(r"[^\s?.!,;:]+(?=\s)", query[second.end :]))[:after_first]
        if not words:
            return {}
        first_start, first_end, second_start = first.start, definite.start("joint"), second.start
        second_end = second.end + words[-1].end()
    elif (pair := _PARALLEL_PAIR.fullmatch(query, first.end, second.start)) is not None:
        # "typical Bigtable row keys and typical Dynamo objects": the same modifier before each name,
        # a phrase around each, the second to the end of its conjunct.
        modifier = pair["mod"].split()
        lead = re.search(rf"(?:[\w-]+\s+){{{len(modifier)}}}$", query[: first.start]) if modifier else None
        if lead is None or lead.group(0).casefold().split() != [word.casefold() for word in modifier]:
            return {}
        first_start, first_end, second_start = lead.start(), pair.start("joint"), pair.end("joint")
        end = _CONJUNCT_END.search(query, second.end)
        second_end = end.start() if end is not None else len(query)
        if not query[second.end : second_end].strip():
            return {}
    else:
        return {}
    head, tail = query[:first_start], query[second_end:]
    phrases = (query[first_start:first_end], query[second_start:second_end])
    return {
        mention.paper_id: " ".join(f"{head}{phrase}{tail}".split())
        for mention, phrase in zip(found, phrases, strict=True)
    }


def _tidy(text: str) -> str:
    return text.replace(" ?", "?").replace(" ,", ",")


# "What is an SSTable and what does it provide to Bigtable?", "How big are GFS chunks, and how does
# MapReduce schedule work near its input?": a new question word after "and" starts a sub-question.
_PART_BREAK = re.compile(
    r"(?:\s*,\s*|\s+)(?:and|but)\s+(?=(?:what|how|why|which|who|whom|when|where|whether|is|are|was|were|does|do|"
    r"did|can|could)\b)",
    re.IGNORECASE,
)
# A sub-question that says "it", "they" or "that" is about the first part's subject.
_BACK_REFERENCE = re.compile(r"\b(?:it|they|them|this|these|those|that)\b", re.IGNORECASE)


# "... and how many with full text?": a count of no noun of its own, which counts the first part's.
_BARE_HOW_MANY = re.compile(
    r"^(?:and\s+)?how\s+many(?=\s+(?:with|without|have|has|had|are|were|is|was|in|come|came|use|used|do|does|did)\b)",
    re.IGNORECASE,
)


def question_parts(analysis: QuestionAnalysis, papers: Sequence[PaperRef]) -> tuple[QuestionAnalysis, ...]:
    """The sub-questions of *analysis*'s query when it asks two things or more ("What is an SSTable
    and what does it provide to Bigtable?" -> "What is an SSTable?", "what does it provide to
    Bigtable?"), each with its own answer type, key terms and named papers, so each gets evidence of
    its own; () when it asks one thing. A later part that refers back ("it", "that") keeps the
    first part's key terms after its own; a part that names no paper keeps the question's; a bare
    "how many" counts what the first part counts ("..., and how many with full text?")."""
    pieces = [piece.strip(" ,;") for piece in _PART_BREAK.split(analysis.query)]
    pieces = [piece for piece in pieces if piece]
    if len(pieces) < 2:
        return ()
    parts: list[QuestionAnalysis] = []
    counted = _HOW_MANY_PLURAL.search(pieces[0])
    for number, piece in enumerate(pieces):
        text = piece if piece.endswith("?") else f"{piece}?"
        bare = _BARE_HOW_MANY.match(text) if number and counted else None
        if bare is not None and counted is not None:
            # "How many papers does S2ORC contain, and how many with full text?": papers with full text.
            text = f"{text[: bare.end()]} {counted['things']}{text[bare.end() :]}"
        own = content_terms(text, papers)
        refers_back = number > 0 and bool(_BACK_REFERENCE.search(piece))
        if not own and not refers_back:
            return ()  # "How and why ...?": one question
        terms = own
        if refers_back:
            terms = tuple(dict.fromkeys((*own, *parts[0].key_terms)))
        named = named_papers(text, papers) or analysis.named_paper_ids
        parts.append(
            QuestionAnalysis(
                question=text,
                query=text,
                answer_type=classify_answer_type(text),
                named_paper_ids=named,
                comparison=len(named) > 1 and analysis.comparison,
                broad=analysis.broad,
                rewritten=analysis.rewritten,
                key_terms=terms,
            )
        )
    return tuple(parts)


# --- with a chat model ----------------------------------------------------------------------------

REWRITE_PROMPT = """A researcher is asking questions about the papers in a project. Rewrite their \
last question as one standalone question that can be understood without the conversation: replace \
words such as "it", "that", "the second paper" or "the other one" by the papers and the topic they \
refer to. Keep the question's meaning and wording otherwise; do not answer it.

Papers in the project: {papers}

Conversation so far (oldest first):
{conversation}

Last question: {question}

Reply with the standalone question only, on one line."""
# The rewrite sees at most this many past messages, each cut to this many characters.
REWRITE_HISTORY_MESSAGES = 6
REWRITE_MESSAGE_CHARS = 600
MAX_REWRITE_CHARS = 500


def rewrite_prompt(question: str, *, history: Sequence[Turn], papers: Sequence[PaperRef]) -> str:
    """The one-message prompt asking a chat model for *question* as a standalone question."""
    conversation = "\n".join(
        f"{'Researcher' if turn.role == 'user' else 'Assistant'}: {' '.join(turn.text.split())[:REWRITE_MESSAGE_CHARS]}"
        for turn in history[-REWRITE_HISTORY_MESSAGES:]
    )
    listed = "; ".join(f'"{" ".join(p.title.split())}" ({display_name(p)})' for p in papers[:50])
    return REWRITE_PROMPT.format(papers=listed or "none", conversation=conversation, question=question.strip())


def standalone_from_reply(reply: str) -> str:
    """The question in a chat model's *reply*: its first non-empty line without a label or quotes;
    "" when that is no usable question (empty or longer than MAX_REWRITE_CHARS)."""
    line = next((line.strip() for line in reply.splitlines() if line.strip()), "")
    line = re.sub(r"^(?:standalone question|question|rewritten question)\s*:\s*", "", line, flags=re.IGNORECASE)
    line = line.strip().strip("\"'\u201c\u201d`").strip()
    return line if 0 < len(line) <= MAX_REWRITE_CHARS else ""


def rewrite_with_model(
    analysis: QuestionAnalysis, *, history: Sequence[Turn], papers: Sequence[PaperRef], model: str
) -> QuestionAnalysis:
    """*analysis* of a follow-up with its `query` rewritten by the chat model *model* (one short
    completion, `annotagent.llm.complete`), then analysed as a standalone question. The papers the
    deterministic rewrite found are kept when the model's wording names none we recognise; an
    unusable reply keeps *analysis* as it is. Raises ChatModelError when the model fails."""
    from annotagent import llm

    reply = llm.complete(rewrite_prompt(analysis.question, history=history, papers=papers), model=model, max_tokens=120)
    query = standalone_from_reply(reply)
    if not query:
        logger.warning("The chat model gave no usable standalone question for %r; using %r", analysis.question, reply)
        return analysis
    standalone = analyse_question(query, history=(), papers=papers)
    return replace(
        standalone,
        question=analysis.question,
        rewritten=True,
        named_paper_ids=standalone.named_paper_ids or analysis.named_paper_ids,
        comparison=standalone.comparison or analysis.comparison,
        broad=standalone.broad,
    )
