"""The lexical leg's pure parts: search normalisation (as at ingest), BM25 ranking, coverage."""

import numpy as np
import pytest

from indexing.lexical import LexicalIndex, american_spelling, number_forms, plural_stem, spelling_forms, tokenize


def docs(*texts: str) -> list[dict[str, str]]:
    return [{"text": text, "contextualBlurb": ""} for text in texts]


def test_ligatures_are_searched_as_plain_letters():
    assert tokenize("An eﬃcient ﬁle system") == tokenize("An efficient file system")


def test_a_word_hyphenated_across_a_line_break_matches_the_whole_word():
    assert "efficient" in tokenize("an effi-\ncient design")
    assert set(tokenize("fault-tolerant")) <= set(tokenize("a fault-\ntolerant service"))


def test_a_hyphenated_compound_also_matches_its_parts():
    assert {"fault", "tolerant"} <= set(tokenize("fault-tolerant"))


def test_a_footnote_mark_run_into_its_word_also_yields_the_word():
    assert tokenize("S2ORC is 7pronounced \u201cstork\u201d") == ["s2orc", "7pronounced", "pronounced", "stork"]
    assert tokenize("a 64kb block") == ["64", "kb", "64kb", "block"]  # a unit, not a glued word


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


@pytest.mark.parametrize(
    ("word", "stem"),
    [("leases", "lease"), ("policies", "policy"), ("changes", "change"), ("corpus", "corpus"), ("gfs", "gfs")],
)
def test_the_s_stemmer_takes_off_plural_endings_only(word, stem):
    assert plural_stem(word) == stem


def test_a_word_stands_for_its_singular_and_plural():
    assert {"lease", "leases"} <= number_forms("leases") and {"lease", "leases"} <= number_forms("lease")
    assert "process" in number_forms("processes") and "processes" in number_forms("process")
    assert number_forms("ms") == {"ms"}


@pytest.mark.parametrize(
    ("british", "american"),
    [
        ("licence", "license"),
        ("behaviours", "behaviors"),
        ("organised", "organized"),
        ("analysing", "analyzing"),
        ("centre", "center"),
        ("catalogue", "catalog"),
        ("modelling", "modeling"),
        ("judgement", "judgment"),
    ],
)
def test_a_british_spelling_stands_for_the_american_one_and_back(british, american):
    assert american_spelling(british) == american
    assert spelling_forms(british) == spelling_forms(american) == {british, american}


@pytest.mark.parametrize("word", ["hour", "four", "raised", "size", "analysis", "keys", "license"])
def test_words_no_british_rule_fits_keep_their_spelling(word):
    assert american_spelling(word) == word


def test_a_query_in_one_spelling_finds_chunks_printing_the_other():
    index = LexicalIndex(docs("released under the CC BY-NC license", "licence fees", "paxos chooses values"))
    assert {m.row for m in index.search("Which licence is it released under?", limit=5)} == {0, 1}
    assert {m.row for m in index.search("What license?", limit=5)} == {0, 1}


def test_a_query_word_finds_the_chunks_holding_its_other_number_and_covers_them():
    index = LexicalIndex(docs("the master lease is a few seconds", "clients renew leases", "paxos chooses values"))
    found = index.search("How does chubby use leases?", limit=5)
    assert {m.row for m in found} == {0, 1}
    assert [m.coverage for m in found if m.row == 0] == [m.coverage for m in found if m.row == 1]


def test_the_blurb_is_searched_with_the_text():
    index = LexicalIndex([{"text": "the master grants leases", "contextualBlurb": 'From "Chubby"'}])
    assert [m.row for m in index.search("chubby", limit=5)] == [0]


def test_rows_outside_the_allowed_mask_are_never_ranked():
    index = LexicalIndex(docs("chubby lock service", "chubby chubby chubby", "zookeeper"))
    found = index.search("chubby", limit=5, allowed=np.array([True, False, True]))
    assert [m.row for m in found] == [0]


def test_chunks_tied_at_the_limit_are_cut_by_row():
    index = LexicalIndex(docs("raft", *["paxos"] * 20, "paxos paxos"))
    assert [m.row for m in index.search("paxos", limit=3)] == [21, 1, 2]


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


# --- numbers, units, ranges -----------------------------------------------------------------------


def test_a_number_and_its_unit_match_with_or_without_a_space():
    assert tokenize("300 ms") == tokenize("300ms") == ["300", "ms", "300ms"]
    assert tokenize("300 milliseconds") == tokenize("300ms")
    assert tokenize("64 MB chunks")[:3] == ["64", "mb", "64mb"]


def test_a_range_gives_both_ends_the_unit_and_the_range():
    terms = tokenize("150-300ms")
    assert {"150", "300", "ms", "150ms", "300ms", "150-300ms"} == set(terms)
    assert set(tokenize("150\u2013300 ms")) == set(terms)
    assert set(tokenize("between 150 and 300 ms")) >= {"150", "300ms"}


def test_thousands_separators_are_dropped_but_tuples_stay():
    assert tokenize("1,000 servers") == ["1000", "servers"]
    assert "3,2,2" in tokenize("the (3,2,2) configuration")


def test_a_unit_word_only_counts_right_after_a_number():
    assert tokenize("300 msgs") == ["300", "msgs"]
    assert "s" not in tokenize("the 1990s")


def test_a_question_in_one_spelling_finds_the_passage_in_the_other():
    index = LexicalIndex(docs("the election timeout is 150-300ms in our setup", "leaders send heartbeats"))
    (match,) = index.search("an election timeout of 300 ms", limit=5)
    assert match.row == 0 and match.coverage == 1.0


# --- CJK ------------------------------------------------------------------------------------------


def test_cjk_text_is_cut_into_character_bigrams():
    assert tokenize("分布式锁服务。") == ["分布", "布式", "式锁", "锁服", "服务"]
    assert tokenize("Raft算法") == ["raft", "算法"]


def test_a_cjk_question_finds_the_cjk_passage():
    index = LexicalIndex(docs("本文介绍一种分布式锁服务。", "我们评估了系统的吞吐量。", "Raft elects a leader."))
    found = index.search("分布式锁服务是什么\uff1f", limit=5)
    assert found[0].row == 0


# --- coverage -------------------------------------------------------------------------------------


def test_words_that_only_frame_a_question_do_not_count_against_coverage():
    index = LexicalIndex(docs("we use a fanout of three in every tree", "the tree is balanced", "leaders vote"))
    (match,) = index.search("What fanout do the authors use?", limit=5)[:1]
    assert match.row == 0
    assert match.coverage == 1.0
    (restart,) = index.search("What happens to the tree after a restart?", limit=5)[:1]
    assert restart.coverage < 1.0  # "restart" is asked for; "happens" only frames the question
    index = LexicalIndex(docs("wayfinder rebuilds its map after a restart", "the tree is balanced", "leaders vote"))
    (match,) = index.search("What happens to Wayfinder after a restart?", limit=5)[:1]
    assert match.row == 0 and match.coverage == 1.0
