"""Metadata questions with a chat model (issue 14, item 4): the model is offered the
`lookup_metadata` tool, our server answers its calls from the project's papers, and the model's
answer cites page 1 of each paper it names and says it is from paper metadata. The model is the
OpenAI-compatible stub, reached over HTTP through the real SDK; it plays a model that calls the
tool and then writes from what the tool returned."""

import json
from http import HTTPStatus

import pytest

from chat.metadata_answers import (
    LOOKUP_TOOL_NAME,
    MAX_LOOKUPS,
    LookupArgumentsError,
    is_metadata_question,
    lookup_criteria,
)
from chat.prompts import METADATA_SYSTEM_PROMPT
from chat.services import NOT_READY, answer_question
from papers.metadata import MetadataFilter
from papers.services import set_author_names
from projects.services import add_papers_to_project, create_project
from tests.support.sockets import of_type

pytestmark = pytest.mark.django_db


@pytest.fixture
def library(alice, add_paper):
    """alice's papers: GFS (2003, SOSP), Bigtable (2006, OSDI), Chubby (2006, OSDI), Paxos (2001),
    and a 2006 draft that is in no project."""
    return {
        "gfs": add_paper(alice, title="The Google File System", author_list=["Sanjay Ghemawat", "Howard Gobioff"],
                         year=2003, venue="SOSP 2003"),
        "bigtable": add_paper(alice, title="Bigtable: A Distributed Storage System",
                              author_list=["Fay Chang", "Sanjay Ghemawat"], year=2006, venue="OSDI 2006"),
        "chubby": add_paper(alice, title="The Chubby lock service", author_list=["Mike Burrows"], year=2006,
                            venue="OSDI 2006"),
        "paxos": add_paper(alice, title="Paxos Made Simple", author_list=["Leslie Lamport"], year=2001),
        "draft": add_paper(alice, title="Secret Draft", author_list=["Alice Example"], year=2006),
    }  # fmt: skip


@pytest.fixture
def project(alice, library):
    project = create_project(owner=alice, name="Systems")
    papers = [library[name] for name in ("gfs", "bigtable", "chubby", "paxos")]
    add_papers_to_project(project=project, papers=papers, user=alice)
    return project


@pytest.fixture(autouse=True)
def _store(chunk_store):
    """The embedded MongoDB-wire server: the support check of a model's answer reads and writes
    the sentence embeddings it keeps there."""


@pytest.fixture
def no_chunk_index(monkeypatch):
    """Any read of the chunk index (`paperchunks`) or any retrieval fails the test."""

    def forbidden(*args, **kwargs):
        raise AssertionError("the chunk index was used for a metadata question")

    monkeypatch.setattr("indexing.store.get_collection", forbidden)
    monkeypatch.setattr("chat.services.retrieve_passages", forbidden)


def lookup(**arguments) -> dict:
    """A stub reply that calls lookup_metadata with *arguments*."""
    return {"content": None, "tool_calls": [{"name": LOOKUP_TOOL_NAME, "arguments": arguments}]}


def tool_results(messages: list[dict]) -> list[dict]:
    return [json.loads(m["content"]) for m in messages if m["role"] == "tool"]


def writes_from_the_lookup(sentence):
    """A stub reply: the model reads the last tool result and writes `sentence(papers)`."""

    def reply(messages: list[dict]) -> str:
        return sentence(tool_results(messages)[-1]["papers"])

    return reply


def test_a_year_question_is_answered_from_the_lookup_with_page_one_citations(
    alice, project, library, openai_stub, no_chunk_index
):
    openai_stub.script = [
        lookup(year=2006),
        writes_from_the_lookup(
            lambda papers: (
                f"{len(papers)} papers are from 2006: " + " and ".join(f"{p['title']} [{p['n']}]" for p in papers) + "."
            )
        ),
    ]

    answer = answer_question(project=project, user=alice, question="Which papers are from 2006?", chat=True)

    assert answer.text == (
        "From paper metadata:\n2 papers are from 2006: Bigtable: A Distributed Storage System [1] and "
        "The Chubby lock service [2]."
    )
    assert [(ref.paper_id, ref.page) for ref in answer.references] == [
        (library["bigtable"].pk, 1),
        (library["chubby"].pk, 1),
    ]
    assert answer.status == "answered" and answer.extractive is False
    first, second = openai_stub.requests
    assert first["messages"][0] == {"role": "system", "content": METADATA_SYSTEM_PROMPT}
    assert [tool["function"]["name"] for tool in first["tools"]] == [LOOKUP_TOOL_NAME]
    [result] = tool_results(second["messages"])
    assert result["count"] == 2 and [p["title"] for p in result["papers"]] == [
        "Bigtable: A Distributed Storage System",
        "The Chubby lock service",
    ]
    # The draft from 2006 is in alice's library but not in the project: the lookup never lists it.
    assert "Secret Draft" not in json.dumps(second["messages"])


def test_the_first_author_of_a_named_paper(alice, project, library, openai_stub, no_chunk_index):
    openai_stub.script = [
        lookup(text="Bigtable"),
        writes_from_the_lookup(lambda papers: f"The first author of Bigtable is {papers[0]['authors'][0]} [1]."),
    ]

    answer = answer_question(project=project, user=alice, question="Who is the first author of the Bigtable paper?")

    assert answer.text == "From paper metadata:\nThe first author of Bigtable is Fay Chang [1]."
    assert [ref.paper_id for ref in answer.references] == [library["bigtable"].pk]
    assert answer.references[0].text.startswith("Bigtable: A Distributed Storage System. Authors: Fay Chang")
    assert answer.status == "answered"


def test_a_bad_lookup_is_told_why_and_the_model_may_look_again(alice, project, library, openai_stub):
    openai_stub.script = [
        lookup(year="two thousand six"),
        lookup(year=2006, venue="OSDI", author="Ghemawat"),
        writes_from_the_lookup(lambda papers: f"{papers[0]['title']} is the one [{papers[0]['n']}]."),
    ]

    answer = answer_question(project=project, user=alice, question="Which OSDI 2006 papers are by Ghemawat?")

    error, found = tool_results(openai_stub.requests[-1]["messages"])
    assert error == {"error": "year must be a year such as 2006, not 'two thousand six'."}
    assert [p["title"] for p in found["papers"]] == ["Bigtable: A Distributed Storage System"]
    assert [ref.paper_id for ref in answer.references] == [library["bigtable"].pk]


def test_no_match_is_said_and_cites_nothing(alice, project, openai_stub):
    openai_stub.script = [lookup(year=1970), "No paper in this project is from 1970."]

    answer = answer_question(project=project, user=alice, question="Which papers are from 1970?")

    assert answer.text == "From paper metadata:\nNo paper in this project is from 1970."
    assert answer.references == [] and answer.status == "not_stated"


def test_a_misstated_year_is_marked_as_weakly_supported(alice, project, openai_stub):
    openai_stub.script = [lookup(text="Bigtable"), "Bigtable was published in 2004 [1]."]

    answer = answer_question(project=project, user=alice, question="When was Bigtable published?")

    assert answer.text.endswith("[1]. (weakly supported by the cited passage)")
    assert answer.status == "partly_answered"


def test_a_model_that_keeps_looking_up_must_answer_after_the_last_lookup(alice, project, openai_stub):
    openai_stub.script = [lookup(year=2006)] * MAX_LOOKUPS + ["Bigtable and Chubby are from 2006 [1][2]."]

    answer = answer_question(project=project, user=alice, question="Which papers are from 2006?")

    assert len(openai_stub.requests) == MAX_LOOKUPS + 1
    assert all("tools" in request for request in openai_stub.requests[:-1])
    assert "tools" not in openai_stub.requests[-1]
    assert len(answer.references) == 2


def test_a_model_that_looks_nothing_up_leaves_the_question_to_retrieval(alice, project, openai_stub):
    openai_stub.script = ["Probably a few of them."]

    answer = answer_question(project=project, user=alice, question="Which papers are from 2006?")

    # None of these papers is indexed, so retrieval has nothing to search: its answer, not the guess.
    assert answer.text == NOT_READY and answer.references == []


def test_my_papers_are_looked_up_by_the_names_i_publish_under(alice, project, library, openai_stub):
    set_author_names(user=alice, names=["S. Ghemawat"])
    openai_stub.script = [
        lookup(author="S. Ghemawat"),
        writes_from_the_lookup(lambda papers: " ".join(f"{p['title']} [{p['n']}]." for p in papers)),
    ]

    answer = answer_question(project=project, user=alice, question="Which papers did I write?")

    assert "I publish as: S. Ghemawat." in openai_stub.requests[0]["messages"][-1]["content"]
    assert {ref.paper_id for ref in answer.references} == {library["gfs"].pk, library["bigtable"].pk}


def test_a_content_question_is_not_offered_the_tool(alice, indexed_project, openai_stub):
    openai_stub.reply = "Raft elects a leader by majority vote [1]."

    answer_question(project=indexed_project, user=alice, question="How does Raft elect a leader?")

    assert len(openai_stub.requests) == 1 and "tools" not in openai_stub.requests[0]


def test_without_a_model_the_patterns_answer_as_before(alice, project, library, no_chunk_index):
    answer = answer_question(project=project, user=alice, question="Which papers are from 2006?")

    assert answer.text.startswith("From paper metadata: 2 papers are from 2006:")
    assert answer.extractive is True


def test_over_the_api_the_answer_carries_its_page_one_references(
    alice, mallory, project, library, openai_stub, api_client_for
):
    openai_stub.script = [lookup(first_author="Burrows"), "Mike Burrows wrote The Chubby lock service [1]."]
    path = f"/api/projects/{project.pk}/chat/"

    response = api_client_for(alice).post(path, {"question": "Who wrote the Chubby paper?"}, format="json")

    assert response.status_code == HTTPStatus.OK
    body = response.json()
    assert body["answer"] == "From paper metadata:\nMike Burrows wrote The Chubby lock service [1]."
    [reference] = body["references"]
    assert (reference["title"], reference["page"]) == ("The Chubby lock service", 1)
    assert reference["url"].endswith(f"/papers/{library['chubby'].pk}/read/?page=1")
    requests = len(openai_stub.requests)
    outsider = api_client_for(mallory).post(path, {"question": "Who wrote the Chubby paper?"}, format="json")
    assert outsider.status_code == HTTPStatus.NOT_FOUND and len(openai_stub.requests) == requests


def test_the_answer_streams_over_the_event_stream_with_its_citations(alice, project, openai_stub, api_client_for):
    from tests.test_chat_api import sse_events

    openai_stub.script = [lookup(venue="SOSP"), "The Google File System appeared at SOSP 2003 [1]."]

    response = api_client_for(alice).post(
        f"/api/projects/{project.pk}/chat/",
        {"question": "Which papers are from SOSP?"},
        format="json",
        HTTP_ACCEPT="text/event-stream",
    )

    received = sse_events(response)
    assert of_type(received, "answer.start")[0]["extractive"] is False
    [citation] = of_type(received, "answer.citation")
    assert citation["page"] == 1 and citation["n"] == 1
    assert "".join(e["text"] for e in of_type(received, "answer.delta")).startswith("From paper metadata:\n")


# --- the pure parts -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "metadata"),
    [
        ("Who is the first author of the Raft paper?", True),
        ("Which papers are from 2006?", True),
        ("Who wrote the paper on leader leases?", True),
        ("Which papers are by Knuth?", True),
        ("When was Dynamo published?", True),
        ("What did the 2006 papers say about locking?", False),
        ("How does Raft elect a leader?", False),
        ("Which papers were published in 2004?", True),
        ("How many citations did the S2ORC papers receive in 2023?", False),  # the year of an event, not of papers
    ],
)
def test_which_questions_go_to_the_lookup_tool(question, metadata):
    assert is_metadata_question(question) is metadata


def test_lookup_arguments_become_a_filter_or_a_reason():
    assert lookup_criteria('{"author": "Lamport", "year_before": "2005"}') == MetadataFilter(
        authors=("Lamport",), year_before=2005
    )
    assert lookup_criteria("") == MetadataFilter()
    for arguments, reason in [
        ("not json", "not JSON"),
        ("[1]", "JSON object"),
        ('{"title": "x"}', "Unknown filters: title"),
        ('{"venue": 3}', "venue must be a string"),
        ('{"year": true}', "year must be a year"),
        ('{"year": 99999}', "year must be a year"),
    ]:
        with pytest.raises(LookupArgumentsError, match=reason):
            lookup_criteria(arguments)
