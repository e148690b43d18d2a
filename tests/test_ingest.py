"""Ingest of a real paper from ../shared/papers into the embedded MongoDB-wire server, read back
with pymongo; then `ask` answers from it with the right page."""

import io
import json
import re

import numpy as np
import pytest
from bson.binary import Binary, BinaryVectorDtype
from django.core.management import call_command

from indexing.pdf import extract_text
from papers.models import Paper
from projects.models import Project
from tests.conftest import shared_paper

pytestmark = pytest.mark.django_db(transaction=True)

PAXOS = "consensus/paxos-made-simple.pdf"


@pytest.fixture
def ingested(alice, chunk_store):
    """Paxos Made Simple, ingested by the operator command into alice's project "Consensus"."""
    call_command(
        "ingest_papers", str(shared_paper(PAXOS)), "--user", "alice", "--project", "Consensus", stdout=io.StringIO()
    )
    return Paper.objects.get()


def chunks_of(collection, paper: Paper) -> list[dict]:
    return list(collection.find({"paperId": paper.pk}).sort("chunkIndex", 1))


def test_an_ingested_paper_is_ready_with_its_page_count_and_metadata(ingested, alice):
    assert ingested.index_status == Paper.IndexStatus.READY
    assert ingested.page_count == 14
    assert "Paxos Made Simple" in ingested.display_title
    assert Project.objects.get(owner=alice, name="Consensus").papers.get() == ingested


def test_chunks_record_the_physical_page_they_start_on(ingested, chunk_store):
    chunks = chunks_of(chunk_store, ingested)
    assert len(chunks) == ingested.chunk_count > 10

    def page_of(phrase: str) -> int:
        return next(c["pageNumber"] for c in chunks if phrase in " ".join(c["text"].split()))

    # Physical pages, not printed ones: the introduction is printed as page 1 but is the 4th sheet.
    assert page_of("The Paxos algorithm, when presented in plain English, is very simple.") == 2
    assert page_of("has been regarded as difficult to understand") == 4
    assert [c["pageNumber"] for c in chunks] == sorted(c["pageNumber"] for c in chunks)
    assert {c["pageNumber"] for c in chunks} <= set(range(1, 15))


def test_ligatures_are_normalised_so_fi_searches_as_fi(alice, chunk_store):
    call_command("ingest_papers", str(shared_paper("storage/gfs.pdf")), "--user", "alice", stdout=io.StringIO())
    text = " ".join(c["text"] for c in chunk_store.find({"paperId": Paper.objects.get().pk}))
    assert "\ufb01" not in text
    assert "file" in text


def test_pymongo_reads_the_chunk_records_back_from_the_embedded_server(ingested, chunk_store):
    document = chunk_store.find_one({"paperId": ingested.pk, "chunkIndex": 0})
    assert set(document) >= {
        "paperId",
        "chunkIndex",
        "pageNumber",
        "text",
        "contextualBlurb",
        "embedding",
        "embeddingModel",
    }
    assert document["embeddingModel"] == ingested.embedding_model
    assert isinstance(document["embedding"], Binary)
    assert document["embedding"].subtype == 9
    vector = np.array(document["embedding"].as_vector(BinaryVectorDtype.FLOAT32).data, dtype=np.float32)
    assert vector.shape == (384,)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-3
    assert "paperId" in chunk_store.index_information()


def test_ingesting_the_same_file_again_skips_it_and_keeps_one_set_of_chunks(ingested, chunk_store):
    before = chunk_store.count_documents({"paperId": ingested.pk})
    out = io.StringIO()
    call_command("ingest_papers", str(shared_paper(PAXOS)), "--user", "alice", "--project", "Consensus", stdout=out)
    assert Paper.objects.count() == 1
    assert chunk_store.count_documents({"paperId": ingested.pk}) == before


def test_ingesting_again_with_force_rebuilds_the_chunks_under_a_new_version(ingested, chunk_store):
    before = chunk_store.count_documents({"paperId": ingested.pk})
    out = io.StringIO()
    call_command(
        "ingest_papers", str(shared_paper(PAXOS)), "--user", "alice", "--project", "Consensus", "--force", stdout=out
    )
    rebuilt = Paper.objects.get()
    assert "Indexed 1, already ready 0" in out.getvalue()
    # Not a terminal: each line ends in a newline, none is rewritten in place.
    assert "\r" not in out.getvalue() and "    ready: " in out.getvalue()
    assert rebuilt.index_version != ingested.index_version
    # One set of chunks, all of the new version: the old ones went once the new ones were live.
    assert chunk_store.count_documents({"paperId": ingested.pk}) == before
    assert set(chunk_store.distinct("indexVersion", {"paperId": ingested.pk})) == {rebuilt.index_version}


def test_ask_right_after_ingest_cites_a_page_that_contains_the_cited_passage(ingested, chunk_store):
    out = io.StringIO()
    question = "What must happen before a value is chosen by the acceptors?"
    call_command("ask", "--user", "alice", "--project", "Consensus", "--json", question, stdout=out)
    result = json.loads(out.getvalue())
    assert result["references"]
    pages = extract_text(shared_paper(PAXOS)).pages
    for reference in result["references"]:
        assert f"[{reference['n']}]" in result["answer"]
        assert reference["title"] == ingested.display_title
        assert reference["text"] in pages[reference["page"] - 1]


def test_a_missing_file_is_reported_and_no_empty_project_is_left_behind(alice, tmp_path):
    from django.core.management.base import CommandError

    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command(
            "ingest_papers", str(tmp_path / "missing.pdf"), "--user", "alice", "--project", "Empty", stderr=err
        )
    assert "missing.pdf: No such file." in err.getvalue()
    assert not Project.objects.filter(name="Empty").exists()


def test_a_cross_paper_question_is_answered_from_several_papers_with_exact_page_citations(alice, chunk_store):
    sources = {name: shared_paper(f"consensus/{name}") for name in ("raft.pdf", "paxos-made-simple.pdf")}
    call_command("ingest_papers", *map(str, sources.values()), "--user", "alice", "--project", "Consensus")
    out = io.StringIO()
    question = "How does Raft elect a leader, and how does Paxos choose a value?"
    call_command("ask", "--user", "alice", "--project", "Consensus", "--json", question, stdout=out)
    result = json.loads(out.getvalue())

    assert len({reference["paper_id"] for reference in result["references"]}) >= 2
    pages = {
        Paper.objects.get(library_links__filename=name).pk: extract_text(path).pages for name, path in sources.items()
    }
    for reference in result["references"]:
        assert f"[{reference['n']}]" in result["answer"]
        assert reference["text"] in pages[reference["paper_id"]][reference["page"] - 1]
    # References are numbered in the order the answer first cites them.
    first_seen = [int(n) for n in dict.fromkeys(re.findall(r"\[(\d+)\]", result["answer"]))]
    assert first_seen == sorted(first_seen)


def _one_pdf(tmp_path, make_pdf):
    path = tmp_path / "lease.pdf"
    path.write_bytes(make_pdf(["Leases: a master holds a lease of twelve seconds and renews it."], title="Leases"))
    return path


def test_a_project_given_by_id_is_that_project_as_for_ask(alice, team_project, tmp_path, make_pdf, chunk_store):
    call_command("ingest_papers", str(_one_pdf(tmp_path, make_pdf)), "--user", "alice", "--project",
                 str(team_project.pk), stdout=io.StringIO())  # fmt: skip
    assert not Project.objects.filter(name=str(team_project.pk)).exists()
    assert [paper.title for paper in team_project.papers.all()] == ["Leases"]


def test_a_shared_project_by_name_takes_a_writers_papers_and_refuses_a_readers(
    bob, carol, team_project, tmp_path, make_pdf, chunk_store
):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError):  # carol reads "Lab": no private "Lab" of her own instead
        call_command("ingest_papers", str(_one_pdf(tmp_path, make_pdf)), "--user", "carol", "--project", "Lab",
                     stdout=io.StringIO())  # fmt: skip
    assert Project.objects.filter(name="Lab").count() == 1
    call_command("ingest_papers", str(_one_pdf(tmp_path, make_pdf)), "--user", "bob", "--project", "Lab",
                 stdout=io.StringIO())  # fmt: skip
    assert Project.objects.filter(name="Lab").count() == 1
    assert team_project.papers.count() == 1


def test_an_unknown_project_id_is_refused_not_created(alice, tmp_path, make_pdf):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="alice has no project '9999'"):
        call_command("ingest_papers", str(_one_pdf(tmp_path, make_pdf)), "--user", "alice", "--project", "9999",
                     stdout=io.StringIO())  # fmt: skip
    assert not Project.objects.filter(name="9999").exists()


def test_a_new_project_name_close_to_one_the_user_has_is_refused_as_a_typo(alice, tmp_path, make_pdf, chunk_store):
    from django.core.management.base import CommandError

    from projects.services import create_project

    create_project(owner=alice, name="Systems")
    pdf = str(_one_pdf(tmp_path, make_pdf))
    with pytest.raises(CommandError, match=r"no project named 'Sytems' but one named 'Systems'.*--new-project"):
        call_command("ingest_papers", pdf, "--user", "alice", "--project", "Sytems", stdout=io.StringIO())
    assert not Project.objects.filter(name="Sytems").exists()
    assert not alice.library_links.exists()  # nothing was added, not even to the library
    # Asked for, the new name is created; a name unlike any is created without asking.
    call_command("ingest_papers", pdf, "--user", "alice", "--project", "Sytems", "--new-project", stdout=io.StringIO())
    call_command("ingest_papers", pdf, "--user", "alice", "--project", "Storage", stdout=io.StringIO())
    names = set(Project.objects.filter(owner=alice).values_list("name", flat=True))
    assert {"Systems", "Sytems", "Storage"} <= names
