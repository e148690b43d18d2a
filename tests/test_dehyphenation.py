"""Line-break hyphens (`indexing.chunking.dehyphenate`): dropped where the joined word is a word,
kept where the hyphen is the writer's."""

import pytest

from chat.extractive import candidate_sentences
from indexing.chunking import dehyphenate
from indexing.retrieval import Reference


@pytest.mark.parametrize(
    ("text", "joined"),
    [
        ("implemen-\ntation", "implementation"),
        ("lever-\naging", "leveraging"),
        ("recom-\nmenders", "recommenders"),
        ("cluster-\ning", "clustering"),
        ("fault-\ntolerant", "fault-tolerant"),
        ("fine-\ntuned", "fine-tuned"),
        ("text-\nbased", "text-based"),
        ("S2ORC-\nSCIBERT", "S2ORC-SCIBERT"),
        # A piece that is no word of its own ends the word the break cut.
        ("hyperpa-\nrameters", "hyperparameters"),
        ("hyperparam-\neters", "hyperparameters"),
        ("annota-\ntions", "annotations"),
        ("pre-\ntrained", "pre-trained"),
    ],
)
def test_a_line_break_hyphen_goes_where_the_joined_word_is_a_word(text, joined):
    assert dehyphenate(text) == joined


def test_a_name_written_whole_elsewhere_is_joined_where_a_line_break_splits_it():
    assert dehyphenate("We parse with GRO-\nBID.") == "We parse with GRO-BID."
    assert dehyphenate("We parse with GRO-\nBID.", {"grobid"}) == "We parse with GROBID."


def test_a_quote_joins_a_name_another_passage_of_the_paper_writes_whole():
    references = [
        Reference(
            n=1,
            paper_id=1,
            title="Corpus",
            page=4,
            text="The English language filter reduces GRO-\nBID parsing errors.",
            score=0.9,
        ),
        Reference(
            n=2, paper_id=1, title="Corpus", page=3, text="We then use GROBID to process each PDF file.", score=0.9
        ),
    ]
    texts = [sentence.text for sentence in candidate_sentences(references)]
    assert "The English language filter reduces GROBID parsing errors." in texts


def test_a_quote_joins_a_word_whose_piece_after_the_break_is_no_word():
    text = "We search over an equal-sized grid of hyperpa-\nrameters. A leader then re-\nverts to follower state."
    reference = Reference(n=1, paper_id=1, title="Corpus", page=7, text=text, score=0.9)
    texts = [sentence.text for sentence in candidate_sentences([reference])]
    assert texts == [
        "We search over an equal-sized grid of hyperparameters.",
        "A leader then reverts to follower state.",
    ]
