"""Full-text search of papers: the extension point through which the layer that holds the papers'
text answers "which of these papers contain these words, and where".

A paper's text lives in the chunk index, which `indexing` owns and papers must not import. So
papers states the question here (`FullTextSearch`) and indexing registers its answer in
`IndexingConfig.ready()` (`indexing.fulltext.find_in_papers`), the way it subscribes to papers'
signals. With no search registered (papers without indexing), no paper matches by its text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from bm25s.stopwords import STOPWORDS_EN

if TYPE_CHECKING:
    from papers.models import Paper

# Common English words, which no search looks for: neither the full text's
# (`indexing.lexical.tokenize`) nor the metadata's (`papers.metadata.search_words`). bm25s's English
# list and more words of its kind.
STOPWORDS = frozenset(STOPWORDS_EN) | frozenset(
    "about above after again also any been before being below between both can could did does doing down "
    "during each few from further had has have having here how its itself more most must nor only other our "
    "out over own same should some such than that their them then these those through too under until very "
    "was were what when where which while who whom why would you your".split()
)


@dataclass(frozen=True)
class TextMatch:
    """Where a paper's text contains a search: physical `page` (1-based), `page_label` as a
    citation prints it ("p. 6", "p. 6 (printed 379)"), and a snippet of that page's text in three
    plain-text parts: `before`, the matched words as printed (`match`; "" when no single place
    holds them all), `after`. The parts are text, never HTML."""

    page: int
    page_label: str
    before: str
    match: str
    after: str

    @property
    def snippet(self) -> str:
        return f"{self.before}{self.match}{self.after}"


class FullTextSearch(Protocol):
    def __call__(self, papers: Sequence[Paper], query: str) -> dict[int, TextMatch]:
        """Paper id -> where its text contains *query*, for those of *papers* whose text does.

        Reads the text of *papers* only: the caller's choice of papers is the search's scope.
        Raises AnnotagentError subclasses when the text cannot be read (the chunk index is down).
        """
        ...


_search: FullTextSearch | None = None


def register_full_text_search(search: FullTextSearch) -> None:
    """Make *search* the full-text search (a later registration replaces an earlier one, so
    registering again on a second `ready()` is harmless)."""
    global _search
    _search = search


def find_text(papers: Sequence[Paper], query: str) -> dict[int, TextMatch]:
    """The registered search's matches of *query* among *papers* ({} when none is registered, or
    for a blank query). Raises what the search raises."""
    if _search is None or not query.strip() or not papers:
        return {}
    return _search(papers, query)
