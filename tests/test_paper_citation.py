"""How papers are cited to a reader (papers.citation): same-title labels, author-year citations
and BibTeX entries; and their hover cards in saved chat messages (chat_tags)."""

import pytest
from django.template import Context, Template

from chat.models import ChatMessage
from papers.citation import author_year_citation, bibtex_entry, csl_type, first_author_surname, paper_labels
from tests.conftest import shared_case


@pytest.mark.parametrize(
    ("authors", "surname"),
    [
        ("Mike Burrows", "Burrows"),
        ("Fay Chang, Jeffrey Dean and Sanjay Ghemawat", "Chang"),
        ("Lamport, Leslie; Doe, Jane", "Lamport"),
        ("Patrick Hunt and Mahadev Konar", "Hunt"),
        ("Guy L. Steele Jr.", "Steele"),
        ("Zhang A., Lo K.", "Zhang"),
        ("", ""),
    ],
)
def test_the_first_authors_surname_is_read_from_the_authors_field(authors, surname):
    assert first_author_surname(authors) == surname


def test_papers_with_the_same_title_are_labelled_by_first_author_and_year():
    labels = paper_labels(
        [
            (1, "A Note on Quorum Systems", "Ada Brenner", 1998),
            (2, "A note on quorum systems.", "Kofi Mensah", 2021),
            (3, "The Chubby lock service", "Mike Burrows", 2006),
        ]
    )
    assert labels[1].label == "A Note on Quorum Systems (Brenner 1998)"
    assert labels[2].label == "A note on quorum systems. (Mensah 2021)"
    assert labels[3].label == "The Chubby lock service"


def test_same_title_same_author_and_year_falls_back_to_the_paper_id():
    labels = paper_labels([(4, "Notes", "Ann Lee", 2020), (9, "Notes", "Ann Lee", 2020), (5, "Notes", "", None)])
    assert labels[4].label == "Notes (Lee 2020, #4)"
    assert labels[9].label == "Notes (Lee 2020, #9)"
    assert labels[5].label == "Notes (#5)"


def test_the_copy_citation_is_author_year_and_page():
    assert author_year_citation(first_author="Burrows", year=2006, page=4) == "(Burrows 2006, p. 4)"
    assert author_year_citation(first_author="Burrows", year=None, page=4) == "(Burrows n.d., p. 4)"
    assert author_year_citation(first_author="", year=2006, title="Chubby") == "(Chubby 2006)"


@pytest.mark.parametrize(
    ("venue", "kind", "field"),
    [
        ("Proceedings of the 58th Annual Meeting of the ACL", "inproceedings", "booktitle"),
        ("OSDI 2006", "inproceedings", "booktitle"),
        ("Journal of the ACM", "article", "journal"),
    ],
)  # fmt: skip
def test_a_paper_in_proceedings_is_inproceedings_and_one_in_a_journal_an_article(venue, kind, field):
    entry = bibtex_entry(title="A Paper", authors="Kyle Lo", year=2020, venue=venue)
    assert entry.startswith(f"@{kind}{{lo2020paper,") and f"  {field} = {{{venue}}}" in entry
    assert csl_type(venue) == ("paper-conference" if kind == "inproceedings" else "article-journal")


def test_the_bibtex_entry_has_a_stable_key_and_all_authors():
    entry = bibtex_entry(
        title="The Chubby lock service for loosely-coupled distributed systems",
        authors="Mike Burrows",
        year=2006,
        doi="10.5555/1298455.1298487",
    )
    assert entry == (
        "@misc{burrows2006chubby,\n"
        "  title = {{The Chubby lock service for loosely-coupled distributed systems}},\n"
        "  author = {Mike Burrows},\n"
        "  year = {2006},\n"
        "  doi = {10.5555/1298455.1298487}\n"
        "}"
    )


def test_the_bibtex_entry_joins_authors_with_and_and_balances_braces():
    entry = bibtex_entry(title="On {sets} of }odd{ braces", authors="Fay Chang, Jeffrey Dean", year=None)
    assert "author = {Fay Chang and Jeffrey Dean}" in entry
    assert "title = {{On {sets} of odd{ braces}}}" in entry
    assert "year" not in entry
    assert entry.startswith("@misc{changsets,")


def render(text: str, citations: dict) -> str:
    return Template("{% load chat_tags %}{{ text|with_citations:citations }}").render(
        Context({"text": text, "citations": citations})
    )


def test_a_saved_hover_card_shows_quote_author_year_title_page_and_copy_actions():
    citation = {
        "paper_id": 7,
        "title": "A Note on Quorum Systems",
        "label": "A Note on Quorum Systems (Brenner 1998)",
        "page": 1,
        "text": "passage",
        "quote": "The optimal load of a majority system over nine servers is five ninths.",
        "author": "Brenner",
        "year": 1998,
        "cite": "(Brenner 1998, p. 1)",
        "bibtex": "@misc{brenner1998note,\n}",
    }
    html = render("Five ninths [1].", {"1": citation})
    assert '<span class="citation-quote">“The optimal load of a majority system' in html
    assert '<span class="citation-title">A Note on Quorum Systems (Brenner 1998)</span>, page 1' in html
    assert '<span class="citation-meta">Brenner 1998</span>' in html
    assert 'data-copy="(Brenner 1998, p. 1)"' in html
    assert 'data-copy="@misc{brenner1998note,\n}"' in html


@pytest.mark.django_db(transaction=True)
def test_same_titled_papers_are_told_apart_in_the_answer_and_its_citations(alice, chunk_store):
    from chat.services import answer_question
    from indexing.services import index_paper
    from projects.services import add_papers_to_project, create_project
    from tests.support.indexing import stored_paper

    papers = []
    for name, authors, year in (("same-title-a.pdf", "Ada Brenner", 1998), ("same-title-b.pdf", "Kofi Mensah", 2021)):
        data = shared_case(name).read_bytes()
        paper = stored_paper(alice, data, name)
        paper.title, paper.authors, paper.year = "A Note on Quorum Systems", authors, year
        paper.save()
        papers.append(index_paper(paper_id=paper.pk))
    project = create_project(owner=alice, name="Quorums")
    add_papers_to_project(project=project, papers=papers, user=alice)

    answer = answer_question(
        project=project, user=alice, question="What is the load of a majority system over nine servers?", chat=True
    )

    assert "- A Note on Quorum Systems (Brenner 1998): “The optimal load of a majority system" in answer.text
    message = ChatMessage.objects.filter(role="assistant").get()
    cited = message.citations["1"]
    assert cited["label"] == "A Note on Quorum Systems (Brenner 1998)"
    assert cited["cite"] == "(Brenner 1998, p. 1)"
    assert cited["quote"] == "The optimal load of a majority system over nine servers is five ninths."
    assert cited["bibtex"].startswith("@misc{brenner1998note,")


def test_two_quoted_sentences_citing_one_passage_each_show_their_own_quote():
    citation = {"paper_id": 7, "title": "Raft", "page": 3, "text": "passage", "quote": "First.", "cite": "(Ongaro)"}
    text = (
        "- Raft: \u201cRaft elects a single leader for each term of office.\u201d [1] "
        "\u201cThe leader accepts log entries from clients and replicates them.\u201d [1]"
    )
    html = render(text, {"1": citation})
    first, second = html.split('class="citation-quote"')[1:3]
    assert "elects a single leader" in first and "replicates them" in second
    assert 'data-quote="The leader accepts log entries' in html
