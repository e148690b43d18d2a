"""The citation contract: `[N]` markers parsed out of a streamed answer (chat.citations)."""

import pytest

from chat.citations import (
    CitationStream,
    citations_unreadable,
    marker_numbers,
    neutralise_paper_markers,
    parse_citations,
    renumber_by_first_citation,
)


def stream(pieces: list[str], valid: set[int]) -> tuple[str, list[int], list[list[int]]]:
    """Feed *pieces* one by one: (text shown, cited numbers, new numbers per feed)."""
    parser = CitationStream(valid=valid)
    shown, news = [], []
    for piece in pieces:
        text, new = parser.feed(piece)
        shown.append(text)
        news.append(new)
    text, new = parser.close()
    shown.append(text)
    news.append(new)
    return "".join(shown), parser.cited, news


def test_a_marker_split_across_two_chunks_still_parses():
    text, cited, _ = stream(["Leaders time out [", "1", "2] and step down."], valid={12})
    assert text == "Leaders time out [12] and step down."
    assert cited == [12]


def test_text_after_an_open_bracket_is_held_back_until_the_marker_closes():
    parser = CitationStream(valid={3})
    assert parser.feed("Quorums intersect [") == ("Quorums intersect", [])
    assert parser.feed("3") == ("", [])
    assert parser.feed("].") == (" [3].", [3])


def test_trailing_spaces_wait_for_the_next_visible_text():
    parser = CitationStream(valid={1})
    assert parser.feed("Terms never repeat ") == ("Terms never repeat", [])
    assert parser.feed("[42].") == (".", [])
    assert parser.close() == ("", [])


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Claim [2, 3].", "Claim [2][3]."),
        ("Claim [2-4].", "Claim [2][3][4]."),
        ("Claim [2\u20134].", "Claim [2][3][4]."),
        ("Claim [2][3].", "Claim [2][3]."),
        ("Claim [2; 4].", "Claim [2][4]."),
        ("Claim [ 3 ].", "Claim [3]."),
    ],
)
def test_lists_and_ranges_resolve_to_their_references(answer, expected):
    assert parse_citations(answer, valid={1, 2, 3, 4})[0] == expected


def test_a_number_not_in_the_reference_list_is_removed_never_linked():
    text, cited = parse_citations("Raft uses terms [7]. Paxos uses ballots [1].", valid={1, 2})
    assert text == "Raft uses terms. Paxos uses ballots [1]."
    assert cited == [1]


def test_out_of_range_numbers_inside_a_list_are_dropped_and_the_rest_kept():
    assert parse_citations("Both agree [1, 9, 2].", valid={1, 2})[0] == "Both agree [1][2]."
    assert parse_citations("Both agree [2-9].", valid={1, 2, 3})[0] == "Both agree [2][3]."


def test_a_removed_marker_leaves_no_double_space():
    assert parse_citations("Raft [9] elects leaders.", valid={1})[0] == "Raft elects leaders."


def test_a_reference_repeated_within_one_sentence_is_kept_once():
    text, cited = parse_citations("Terms [1] order leaders [1][1]. Logs replicate [1].", valid={1})
    assert text == "Terms [1] order leaders. Logs replicate [1]."
    assert cited == [1]


def test_de_duplication_resets_at_a_sentence_end_split_across_chunks():
    text, _, _ = stream(["Terms order leaders [1].", " Logs replicate [1]."], valid={1})
    assert text == "Terms order leaders [1]. Logs replicate [1]."


def test_each_reference_is_new_only_the_first_time_it_is_cited():
    _, cited, news = stream(["A [2]. ", "B [1]. ", "C [2][1]."], valid={1, 2})
    assert cited == [2, 1]
    assert [n for new in news for n in new] == [2, 1]


def test_brackets_that_are_not_markers_are_text():
    text, cited = parse_citations("Arrays a[i] and [see above] stay; so does [x].", valid={1})
    assert text == "Arrays a[i] and [see above] stay; so does [x]."
    assert cited == []


def test_an_unclosed_bracket_at_the_end_of_the_stream_is_shown_as_text():
    text, cited, _ = stream(["The last word [", "1"], valid={1})
    assert text == "The last word [1"
    assert cited == []


def test_a_long_run_after_a_bracket_is_not_held_back_forever():
    parser = CitationStream(valid={1})
    shown, _ = parser.feed("[" + "1, " * 30)
    assert shown.startswith("[1, 1, ")


def test_marker_numbers_expand_ranges_and_keep_first_seen_order():
    assert marker_numbers("3, 1-2, 3") == [3, 1, 2]


def test_a_range_typo_yields_its_ends_only():
    assert marker_numbers("1-1000") == [1, 1000]


@pytest.mark.parametrize(
    "pieces",
    [["Raft [9]", " elects leaders."], ["Raft ", "[9] ", "elects leaders."], ["Raft", " [9]", " elects leaders."]],
)
def test_a_removed_marker_split_from_its_neighbours_leaves_no_double_space(pieces):
    assert stream(pieces, valid={1})[0] == "Raft elects leaders."


@pytest.mark.parametrize(
    "pieces", [["Terms repeat ", "[42]."], ["Terms repeat", " [42]", "."], ["Terms repeat [4", "2]."]]
)
def test_a_removed_marker_before_punctuation_takes_its_space_along(pieces):
    assert stream(pieces, valid={1})[0] == "Terms repeat."


def test_a_space_at_the_very_end_of_the_answer_is_kept():
    assert stream(["Done. "], valid=set())[0] == "Done. "


def test_a_sentence_ending_inside_closing_quotes_starts_a_new_sentence():
    text, cited = parse_citations("\u201cRaft elects leaders.\u201d [1] \u201cIt uses terms.\u201d [1]", valid={1})
    assert text.count("[1]") == 2
    assert cited == [1]


def test_a_papers_own_bibliography_markers_are_not_read_as_citations():
    quoted = neutralise_paper_markers("as shown by Lamport [6] and others [2-4].")
    assert quoted == "as shown by Lamport [ref 6] and others [ref 2-4]."
    assert parse_citations(quoted, valid={2, 3, 4, 6}) == (quoted, [])


def test_references_are_renumbered_in_order_of_first_citation():
    text, mapping = renumber_by_first_citation("A [7]. B [2][7]. C [5].", [1, 2, 5, 7])
    assert text == "A [1]. B [2][1]. C [3]."
    assert mapping == {7: 1, 2: 2, 5: 3, 1: 4}


# --- marker variants written by chat models ------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Leaders are elected \u30101\u3011.", "Leaders are elected [1]."),
        ("Leaders are elected \u30103:0\u2020source\u3011.", "Leaders are elected [3]."),
        ("Leaders are elected [2\u2020source].", "Leaders are elected [2]."),
        ("Leaders are elected [^1].", "Leaders are elected [1]."),
        ("Leaders are elected [Source 1].", "Leaders are elected [1]."),
        ("Leaders are elected [Sources 1, 3].", "Leaders are elected [1][3]."),
        ("Leaders are elected [passage 2].", "Leaders are elected [2]."),
        ("Leaders are elected (1).", "Leaders are elected [1]."),
        ("Leaders are elected (1, 2).\nLogs follow.", "Leaders are elected [1][2].\nLogs follow."),
    ],
)
def test_marker_variants_from_chat_models_are_read_as_citations(answer, expected):
    text, cited = parse_citations(answer, valid={1, 2, 3})
    assert text == expected
    assert cited


@pytest.mark.parametrize(
    "pieces",
    [
        ["Leaders are elected \u3010", "1", "\u2020sou", "rce\u3011 and logs [", "^2] follow."],
        ["Leaders are elected [Sou", "rce 1] and logs [2\u2020", "source] follow."],
        ["Leaders are elected (", "1", ")", ", and logs (2)", "."],
    ],
)
def test_marker_variants_split_across_chunks_still_parse(pieces):
    text, cited, _ = stream(pieces, valid={1, 2})
    assert text.startswith("Leaders are elected [1]")
    assert "[2]" in text
    assert cited == [1, 2]


def test_an_enumeration_in_parentheses_is_not_a_citation():
    text, cited = parse_citations("Two phases: (1) prepare, (2) accept.", valid={1, 2})
    assert text == "Two phases: (1) prepare, (2) accept."
    assert cited == []


def test_parentheses_are_not_citations_once_the_answer_uses_brackets():
    text, cited = parse_citations("Raft elects leaders [1]. It has two rules (2).", valid={1, 2})
    assert text == "Raft elects leaders [1]. It has two rules (2)."
    assert cited == [1]


def test_a_parenthesised_number_that_is_no_reference_stays_text():
    assert parse_citations("The cluster has five servers (5).", valid={1, 2}) == (
        "The cluster has five servers (5).",
        [],
    )


@pytest.mark.parametrize(
    ("answer", "cited", "unreadable"),
    [
        ("Leaders are elected {1}. Logs are replicated {2}.", [], True),
        ("Leaders are elected [doc-a]. Logs are replicated.", [], True),
        ("Leaders are elected by timeouts [1]. Logs follow.", [1], False),
        ("The papers do not state how much energy a chunkserver uses.", [], False),
        ("Leaders are elected \u3010x\u3011.", [], True),
    ],
)
def test_an_answer_whose_markers_cannot_be_read_is_detected(answer, cited, unreadable):
    assert citations_unreadable(answer, cited) is unreadable
