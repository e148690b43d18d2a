"""Library search (issue 14, item 7): the search box also finds papers by their full text, with a
snippet and the page it is on; a project filter; both only ever over the viewer's own library."""

from http import HTTPStatus

import pytest
from django.urls import reverse

from indexing import fulltext, store
from indexing.fulltext import cut_snippet, find_in_papers, first_passage
from indexing.lexical import fold_for_scan, may_hold, search_terms, tokenize
from indexing.services import index_paper
from papers.metadata import MetadataFilter, search_words
from papers.models import Paper
from papers.services import library_papers
from projects.services import add_papers_to_project, create_project
from tests.conftest import PAXOS_PAGES, RAFT_PAGES
from tests.support.indexing import closed_port_uri, replace_pdf

pytestmark = pytest.mark.django_db

ZOO_PAGES = [
    "Zookeeper coordination. Clients read znodes and set watches on them.",
    "Sessions and quokka leases. A session keeps its ephemeral znodes alive while each heartbeat arrives in time.",
]


@pytest.fixture
def consensus(alice, indexed_paper):
    """alice's library: "Raft" and "Paxos" (see tests.conftest), indexed for real."""
    return {
        "raft": indexed_paper(alice, RAFT_PAGES, title="Raft"),
        "paxos": indexed_paper(alice, PAXOS_PAGES, title="Paxos"),
    }


def titles(response) -> list[str]:
    """The titles of the library page's cards (one per work: its primary's)."""
    return [work.primary.display_title for work, _ in response.context["entries"]]


def matches(response) -> dict[str, object]:
    """Card title -> its TextMatch (None when its text did not match)."""
    return {work.primary.display_title: found[1] if found else None for work, found in response.context["entries"]}


# --- the pure parts -------------------------------------------------------------------------------


def test_a_search_asks_for_its_words_and_a_hyphenated_word_for_its_parts():
    assert search_terms("The fault-tolerant log") == ["fault", "tolerant", "log"]
    assert search_terms("the of a") == []


def test_the_scan_prefilter_never_drops_a_passage_that_holds_the_words():
    texts = [
        *RAFT_PAGES,
        *PAXOS_PAGES,
        "Effi-\ncient, fault-\ntolerant log-structured\nLeader election over 1,000 nodes in 300 ms "
        "(150-300ms), 2 milliseconds; ﬁnal 共识算法.",
    ]
    for text in texts:
        assert may_hold(text, fold_for_scan(text), tokenize(text)), text
    text = texts[-1]
    for query in ("efficient leader", "1000 nodes", "fault tolerant", "faulttolerant", "log", "ms", "共识"):
        assert may_hold(text, fold_for_scan(text), search_terms(query)), query
    for query in ("leader quorum", "logical", "elect"):
        assert not may_hold(text, fold_for_scan(text), search_terms(query)), query


def test_a_papers_first_passage_holding_the_phrase_is_preferred_to_an_earlier_one_holding_the_words():
    chunks = [
        {"text": "An election picks a leader."},
        {"text": "Nothing here."},
        {"text": "Leader election, once more."},
    ]
    passages = [(chunk, fold_for_scan(chunk["text"])) for chunk in chunks]
    assert first_passage(passages, "leader election", ["leader", "election"]) is chunks[2]
    assert first_passage(passages, "election leader", ["election", "leader"]) is chunks[0]
    assert first_passage(passages[1:2], "leader", ["leader"]) is None


def test_a_snippet_is_cut_between_words_around_the_match():
    text = "word " * 40 + "the quorum intersects " + "tail " * 60
    start = text.index("quorum")
    before, match, after = cut_snippet(text, start, start + len("quorum"))
    assert match == "quorum"
    assert before.startswith("…") and before.endswith("the ")
    assert after.startswith(" intersects") and after.endswith("…")
    assert not before[1:].startswith(" ") and " wor" not in after
    assert cut_snippet("short text", 0, 5) == ("", "short", " text")


# --- full text on the library page -----------------------------------------------------------------


def test_words_only_in_a_papers_text_find_it_with_the_page_and_a_snippet(alice, consensus, client_for):
    response = client_for(alice).get(reverse("papers:library"), {"q": "heartbeat"})

    assert titles(response) == ["Raft"]
    match = matches(response)["Raft"]
    assert (match.page, match.page_label, match.match) == (1, "p. 1", "heartbeat")
    assert "hears no" in match.before and match.after.startswith(" before its election timeout")
    page = response.content.decode()
    raft = consensus["raft"]
    assert f'href="{reverse("papers:reader", args=[raft.pk])}?page=1&amp;quote=heartbeat"' in page
    assert "<mark>heartbeat</mark>" in page


def test_a_phrase_is_found_on_the_page_that_prints_it(alice, consensus, client_for):
    response = client_for(alice).get(reverse("papers:library"), {"q": "Log Replication"})

    match = matches(response)["Raft"]
    assert match.page == 2 and match.match == "log replication"
    assert titles(response) == ["Raft"]


def test_every_word_must_be_in_one_passage_and_each_paper_shows_its_first(alice, consensus, client_for):
    client = client_for(alice)

    both = matches(client.get(reverse("papers:library"), {"q": "majority"}))
    assert {title: m.page for title, m in both.items()} == {"Raft": 1, "Paxos": 2}
    # "entries" and "majority" share only Raft's page 2; no page of Paxos holds both.
    together = matches(client.get(reverse("papers:library"), {"q": "majority entries"}))
    assert {title: m.page for title, m in together.items()} == {"Raft": 2}
    assert together["Raft"].match in {"majority", "entries"}
    assert titles(client.get(reverse("papers:library"), {"q": "majority sourdough"})) == []


def test_a_metadata_match_is_listed_with_its_text_match_when_it_has_one(alice, consensus, add_paper, client_for):
    add_paper(alice, title="Paxos Made Simple")  # not indexed: found by its title alone

    response = client_for(alice).get(reverse("papers:library"), {"q": "paxos"})

    found = matches(response)
    assert set(found) == {"Paxos", "Paxos Made Simple"}
    assert found["Paxos"].page == 1 and found["Paxos Made Simple"] is None


def test_full_text_is_searched_within_the_other_filters(alice, consensus, client_for):
    Paper.objects.filter(pk=consensus["paxos"].pk).update(year=2001)

    response = client_for(alice).get(reverse("papers:library"), {"q": "majority", "year": 2001})

    assert titles(response) == ["Paxos"]


def test_the_api_gives_each_papers_text_match(alice, consensus, api_client_for):
    body = api_client_for(alice).get(reverse("api:library"), {"q": "quorums"}).json()

    assert [paper["title"] for paper in body] == ["Paxos"]
    match = body[0]["text_match"]
    assert match["page"] == 2 and match["match"] == "quorums" and "majority" in match["snippet"]
    assert match["reader_url"] == f"{reverse('papers:reader', args=[consensus['paxos'].pk])}?page=2"
    unmatched = api_client_for(alice).get(reverse("api:library")).json()
    assert unmatched and all(paper["text_match"] is None for paper in unmatched)


# --- titles, authors and venues ------------------------------------------------------------------


@pytest.fixture
def classics(alice, add_paper):
    """alice's library, not indexed (found by metadata only): three titles with common words."""
    add_paper(alice, title="The Google File System", authors=["Sanjay Ghemawat"], venue="SOSP 2003")
    add_paper(alice, title="Time, Clocks, and the Ordering of Events", authors=["Leslie Lamport"])
    add_paper(alice, title="Logical Physical Clocks", authors=["Sandeep Kulkarni"])


def test_a_metadata_search_skips_common_words_as_the_full_text_search_does(alice, classics, client_for):
    client = client_for(alice)

    assert titles(client.get(reverse("papers:library"), {"q": "the google file system"})) == ["The Google File System"]
    assert titles(client.get(reverse("papers:library"), {"q": "ordering of the events"})) == [
        "Time, Clocks, and the Ordering of Events"
    ]
    assert search_terms("the of a") == [] and search_words("the of a") == []


def test_a_metadata_search_matches_whole_words_not_parts_of_words(alice, classics, client_for):
    client = client_for(alice)

    assert titles(client.get(reverse("papers:library"), {"q": "log"})) == []
    assert titles(client.get(reverse("papers:library"), {"q": "time"})) == ["Time, Clocks, and the Ordering of Events"]
    assert titles(client.get(reverse("papers:library"), {"q": "clocks lamport"})) == [
        "Time, Clocks, and the Ordering of Events"
    ]
    assert titles(client.get(reverse("papers:library"), {"q": "sosp"})) == ["The Google File System"]


def test_a_search_of_common_words_only_finds_nothing_and_says_why(alice, classics, client_for, api_client_for):
    response = client_for(alice).get(reverse("papers:library"), {"q": "the"})

    assert titles(response) == []
    [message] = [str(m) for m in response.context["messages"]]
    assert message == "“the” has only common words, which are not searched for."
    assert api_client_for(alice).get(reverse("api:library"), {"q": "of the"}).json() == []


# --- only ever the viewer's own library -------------------------------------------------------------


def test_mallorys_full_text_never_shows_alices_papers(
    alice, mallory, consensus, indexed_paper, client_for, api_client_for
):
    indexed_paper(mallory, ZOO_PAGES, title="ZooKeeper")
    # alice searches first, so her papers' chunks are in this process's index cache.
    assert titles(client_for(alice).get(reverse("papers:library"), {"q": "heartbeat"})) == ["Raft"]

    page = client_for(mallory).get(reverse("papers:library"), {"q": "heartbeat"})

    assert titles(page) == ["ZooKeeper"]
    assert "Raft" not in page.content.decode() and "election timeout" not in page.content.decode()
    assert titles(client_for(mallory).get(reverse("papers:library"), {"q": "election timeout"})) == []
    api = api_client_for(mallory).get(reverse("api:library"), {"q": "quorums"})
    assert api.status_code == HTTPStatus.OK and api.json() == []
    assert find_in_papers(list(Paper.objects.in_library_of(mallory)), "majority") == {}


def test_a_reindexed_paper_is_searched_in_its_new_text(alice, consensus, client_for):
    client = client_for(alice)
    assert titles(client.get(reverse("papers:library"), {"q": "heartbeat"})) == ["Raft"]
    replace_pdf(consensus["raft"], ["Raft, rewritten: a quokka ballot elects the leader."])
    index_paper(paper_id=consensus["raft"].pk)

    assert titles(client.get(reverse("papers:library"), {"q": "heartbeat"})) == []
    assert matches(client.get(reverse("papers:library"), {"q": "quokka ballot"}))["Raft"].page == 1


def test_a_small_text_cache_evicts_whole_papers_and_still_answers(alice, consensus, monkeypatch):
    monkeypatch.setattr(fulltext, "paper_texts", fulltext.PaperTexts(max_passages=1))
    papers = list(Paper.objects.in_library_of(alice))

    for _ in range(2):
        assert {pid: m.page for pid, m in find_in_papers(papers, "majority").items()} == {
            consensus["raft"].pk: 1,
            consensus["paxos"].pk: 2,
        }


def test_a_paper_that_is_not_ready_is_not_searched_by_its_text(alice, consensus):
    Paper.objects.filter(pk=consensus["raft"].pk).update(index_status=Paper.IndexStatus.INDEXING)

    listing = library_papers(user=alice, criteria=MetadataFilter(text="heartbeat"))

    assert listing.papers == [] and listing.text_matches == {}


def test_with_the_chunk_index_down_the_metadata_matches_remain_and_it_is_said(
    alice, consensus, client_for, api_client_for, settings
):
    settings.MONGODB_URI = closed_port_uri()
    settings.MONGODB_TIMEOUT_MS = 300
    store.reset_client()
    fulltext.paper_texts.clear()

    response = client_for(alice).get(reverse("papers:library"), {"q": "raft"})

    assert response.status_code == HTTPStatus.OK
    assert titles(response) == ["Raft"]
    [message] = [str(m) for m in response.context["messages"]]
    assert message.startswith("Only titles, authors and venues were searched: ")
    api = api_client_for(alice).get(reverse("api:library"), {"q": "raft"})
    assert api.status_code == HTTPStatus.SERVICE_UNAVAILABLE
    assert api.json()["error"]["code"] == "chunk_index_unavailable"


# --- the project filter ------------------------------------------------------------------------------


@pytest.fixture
def sorted_library(alice, add_paper):
    """alice's library: "Inside" (in her project "Reading"), "Outside" (in none)."""
    inside, outside = add_paper(alice, title="Inside"), add_paper(alice, title="Outside")
    project = create_project(owner=alice, name="Reading")
    add_papers_to_project(project=project, papers=[inside], user=alice)
    return {"project": project, "inside": inside, "outside": outside}


def test_the_library_filters_by_one_of_my_projects(alice, sorted_library, client_for):
    project = sorted_library["project"]
    client = client_for(alice)

    response = client.get(reverse("papers:library"), {"project": project.pk})

    assert titles(response) == ["Inside"]
    assert f'<option value="{project.pk}" selected>Reading</option>' in response.content.decode()
    assert titles(client.get(reverse("papers:library"), {"project": ""})) == ["Outside", "Inside"]


def test_a_shared_project_filters_to_the_papers_of_my_own_library_in_it(
    alice, bob, team_project, add_paper, client_for
):
    alices = add_paper(alice, title="Alice's Paper")
    bobs = add_paper(bob, title="Bob's Paper")
    add_paper(bob, title="Bob's Other Paper")
    add_papers_to_project(project=team_project, papers=[alices], user=alice)
    add_papers_to_project(project=team_project, papers=[bobs], user=bob)

    assert titles(client_for(bob).get(reverse("papers:library"), {"project": team_project.pk})) == ["Bob's Paper"]


def test_someone_elses_project_is_never_a_filter_and_leaks_nothing(
    alice, mallory, sorted_library, add_paper, client_for, api_client_for
):
    add_paper(mallory, title="Mallory's Paper")
    project = sorted_library["project"]

    response = client_for(mallory).get(reverse("papers:library"), {"project": project.pk, "q": "inside"})

    assert response.status_code == HTTPStatus.OK
    page = response.content.decode()
    assert "Inside" not in page and "Reading" not in page
    assert "These filters were not applied." in page
    assert titles(response) == ["Mallory's Paper"]  # the filters are dropped, as for any invalid choice
    assert f'value="{project.pk}"' not in page
    api = api_client_for(mallory).get(reverse("api:library"), {"project": project.pk})
    assert api.status_code == HTTPStatus.NOT_FOUND
    missing = api_client_for(mallory).get(reverse("api:library"), {"project": project.pk + 1000})
    assert missing.status_code == HTTPStatus.NOT_FOUND and missing.json() == api.json()


def test_the_api_filters_by_project(alice, sorted_library, api_client_for):
    body = api_client_for(alice).get(reverse("api:library"), {"project": sorted_library["project"].pk}).json()
    assert [paper["title"] for paper in body] == ["Inside"]
