"""The extractive answerer (no chat model): sentences quoted from passages, each cited."""

import numpy as np
import pytest

from chat.citations import parse_citations
from chat.extractive import SENTENCES_PER_PAPER, candidate_sentences, compose_extractive_answer
from chat.prompts import REFUSAL
from chat.services import answer_question
from indexing.retrieval import Reference


def reference(n: int, paper_id: int, text: str, title: str = "Raft") -> Reference:
    return Reference(n=n, paper_id=paper_id, title=title, page=n, text=text, score=0.9)


def test_candidate_sentences_are_whole_sentences_with_hyphenation_joined():
    ref = reference(
        1, 1, "ends mid-way. A follower that hears no heart-\nbeat becomes a fault-\ntolerant candidate. Ok."
    )
    assert [s.text for s in candidate_sentences([ref])] == [
        "A follower that hears no heartbeat becomes a fault-tolerant candidate."
    ]


def test_a_quoted_sentence_keeps_the_papers_own_reference_numbers_as_text_not_citations():
    ref = reference(1, 1, "Leaders are elected with randomized timeouts as in earlier work [6, 31].")
    (sentence,) = candidate_sentences([ref])
    # Shown verbatim ("[6, 31]"), with an invisible word joiner that keeps it from being a citation.
    assert sentence.text.replace("\u2060", "") == ref.text
    text, cited = parse_citations(f"\u201c{sentence.text}\u201d [1]", valid={1, 6, 31})
    assert cited == [1]
    assert "[\u20606, 31]" in text


def test_the_answer_quotes_the_best_sentences_per_paper_with_their_markers():
    refs = [
        reference(1, 1, "Raft elects one leader for every term of the cluster. Logs are replicated by the leader."),
        reference(2, 2, "Paxos chooses a value once a majority of acceptors accept it.", title="Paxos"),
    ]
    sentences = candidate_sentences(refs)
    answer = compose_extractive_answer(sentences, np.array([0.9, 0.5, 0.8]), min_score=0.2)
    assert "- Raft: “Raft elects one leader for every term of the cluster.” [1]" in answer
    assert "- Paxos: “Paxos chooses a value once a majority of acceptors accept it.” [2]" in answer
    _, cited = parse_citations(answer, valid={1, 2})
    assert cited == [1, 2]


def test_no_sentence_over_the_threshold_gives_no_answer():
    sentences = candidate_sentences([reference(1, 1, "Raft elects one leader for every term of the cluster.")])
    assert compose_extractive_answer(sentences, np.array([0.1]), min_score=0.2) == ""


def test_each_paper_contributes_at_most_a_few_sentences():
    text = " ".join(f"Sentence number {i} talks about leader election in Raft." for i in range(6))
    sentences = candidate_sentences([reference(1, 1, text)])
    answer = compose_extractive_answer(sentences, np.linspace(0.9, 0.5, len(sentences)), min_score=0.2)
    assert answer.count("[1]") == SENTENCES_PER_PAPER


@pytest.mark.django_db(transaction=True)
def test_without_a_chat_model_the_project_answers_extractively_from_several_papers(indexed_project, alice):
    answer = answer_question(
        project=indexed_project, user=alice, question="How does Raft elect a leader, and how does Paxos choose a value?"
    )
    assert answer.extractive
    assert {ref.title for ref in answer.references} == {"Raft", "Paxos"}
    for ref in answer.references:
        assert f"[{ref.n}]" in answer.text


@pytest.mark.django_db(transaction=True)
def test_without_a_chat_model_an_unrelated_question_is_refused_without_citations(indexed_project, alice):
    answer = answer_question(project=indexed_project, user=alice, question="Best sourdough hydration for rye bread?")
    assert answer.text == REFUSAL
    assert answer.references == []


def test_headings_are_not_glued_into_quotes_and_table_rows_and_footnotes_are_not_quoted():
    text = (
        "Proposers retry with a higher number after the failure of the election.\n"
        "2.5 The Implementation\n"
        "The Paxos algorithm assumes a network of processes that communicate.\n"
        "Model 81.1 92.3 77.4 65.0 12.3 44.5 31.2 11.1 0.5 12.2 13.3 50.1.\n"
        "2We stress here that the protocol is safe in every execution of it."
    )
    assert [s.text for s in candidate_sentences([reference(1, 1, text)])] == [
        "Proposers retry with a higher number after the failure of the election.",
        "The Paxos algorithm assumes a network of processes that communicate.",
    ]


def test_figure_text_glued_to_a_caption_is_not_quoted():
    text = (
        "GFS client File namespace /foo/bar chunk 2ef0 Legend: Data messages Figure 1: GFS Architecture "
        "and replication decisions using global knowledge. The master makes placement decisions with global knowledge."
    )
    assert [s.text for s in candidate_sentences([reference(1, 1, text)])] == [
        "The master makes placement decisions with global knowledge."
    ]


def test_a_reference_list_is_never_quoted_as_evidence():
    bibliography = (
        "[12] Lo, K., Wang, L. L., and Neumann, M. 2020.\n"
        "S2ORC: The semantic scholar open research corpus. In Proceedings of ACL, pages 4969-4983.\n"
        "[13] Ammar, W. et al. 2018. Construction of the literature graph in semantic scholar.\n"
        "In Proceedings of NAACL."
    )
    assert candidate_sentences([reference(1, 1, bibliography)]) == []
