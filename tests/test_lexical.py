"""The lexical leg's pure parts: search normalisation (as at ingest), BM25 ranking, coverage."""

import numpy as np

from indexing.lexical import LexicalIndex, tokenize


def docs(*texts: str) -> list[dict[str, str]]:
    return [{"text": text, "contextualBlurb": ""} for text in texts]


def test_ligatures_are_searched_as_plain_letters():
    assert tokenize("An eﬃcient ﬁle system") == tokenize("An efficient file system")


def test_a_word_hyphenated_across_a_line_break_matches_the_whole_word():
    assert "efficient" in tokenize("an effi-\ncient design")
    assert set(tokenize("fault-tolerant")) <= set(tokenize("a fault-\ntolerant service"))


def test_a_hyphenated_compound_also_matches_its_parts():
    assert {"fault", "tolerant"} <= set(tokenize("fault-tolerant"))


def test_case_is_folded_and_stopwords_are_not_terms():
    assert tokenize("The LEADER and the Followers") == ["leader", "followers"]


def test_a_decimal_number_stays_one_term():
    assert "81.1" in tokenize("a corpus of 81.1M papers")
    assert "3,2,2" in tokenize("the (3,2,2) configuration")


def test_the_chunk_holding_the_rare_term_ranks_first():
    index = LexicalIndex(docs("paxos leader election", "raft leader election", "leader leases in chubby"))
    found = index.search("chubby leader", limit=3)
    assert found[0].row == 2
    assert [m.bm25 for m in found] == sorted((m.bm25 for m in found), reverse=True)


def test_the_blurb_is_searched_with_the_text():
    index = LexicalIndex([{"text": "the master grants leases", "contextualBlurb": 'From "Chubby"'}])
    assert [m.row for m in index.search("chubby", limit=5)] == [0]


def test_rows_outside_the_allowed_mask_are_never_ranked():
    index = LexicalIndex(docs("chubby lock service", "chubby chubby chubby", "zookeeper"))
    found = index.search("chubby", limit=5, allowed=np.array([True, False, True]))
    assert [m.row for m in found] == [0]


def test_only_chunks_sharing_a_term_are_returned():
    index = LexicalIndex(docs("paxos", "raft"))
    assert [m.row for m in index.search("paxos consensus", limit=5)] == [0]
    assert index.search("pizza", limit=5) == []


def test_words_the_project_never_uses_keep_coverage_low():
    index = LexicalIndex(docs("the best leader wins the election", "paxos made simple"))
    (match,) = index.search("best pizza recipe", limit=5)
    assert match.coverage < 0.4
    (exact,) = index.search("paxos", limit=5)
    assert exact.coverage == 1.0


def test_an_index_of_no_words_matches_nothing():
    assert LexicalIndex(docs("", "the a an")).search("anything", limit=5) == []
