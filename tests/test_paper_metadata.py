"""Paper metadata you can trust: extraction from page 1 (generated PDFs and real papers),
corrections that belong to one library entry, "my papers" by author-name variants, listing and
filtering (library, API, `manage.py papers`), and metadata questions answered from the database."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from fpdf import FPDF

from chat import metadata_answers
from chat.services import answer_question
from indexing.metadata import PaperMetadata
from indexing.metadata import extract_metadata as metadata_of
from indexing.pdf import extract_metadata, extract_text
from indexing.services import take_metadata
from papers.metadata import MetadataFilter, doc_key, same_person
from papers.models import Paper, UserPaper
from papers.services import (
    MetadataCorrectionError,
    add_paper_to_library,
    correct_paper_metadata,
    library_papers,
    set_author_names,
)
from projects.models import Project
from projects.services import add_papers_to_project, create_project
from tests.conftest import shared_case, shared_paper
from tests.support.pdfs import CREATED

pytestmark = pytest.mark.django_db


# --- extraction -----------------------------------------------------------------------------------


def paper_pdf(tmp_path, *, creation_year: int = 1999):
    """A one-page paper laid out as a proceedings paper: an 18 pt title over two lines, authors
    with affiliation markers, affiliations, an abstract, a venue and copyright block and an arXiv
    stamp in the left margin; its file was created in *creation_year*."""
    pdf = FPDF()
    pdf.set_creation_date(datetime(creation_year, 5, 1, tzinfo=UTC))
    pdf.set_title("Microsoft Word - draft7.doc")
    pdf.add_page()
    pdf.set_font("Helvetica", size=18)
    pdf.set_xy(20, 20)
    pdf.multi_cell(170, 8, "Impossibility of Distributed Consensus with\nOne Faulty Process", align="C")
    pdf.set_font("Helvetica", size=12)
    pdf.set_x(20)
    pdf.cell(170, 7, "Michael J. Fischer\u00b9, Nancy A. Lynch\u00b2 and Michael S. Paterson\u00b9", align="C")
    pdf.ln(7)
    pdf.set_font("Helvetica", size=10)
    pdf.set_x(20)
    pdf.cell(170, 6, "\u00b9Yale University     \u00b2Massachusetts Institute of Technology", align="C")
    pdf.ln(14)
    pdf.set_font("Helvetica", size=12)
    pdf.set_x(20)
    pdf.cell(170, 6, "Abstract")
    pdf.ln(8)
    pdf.set_font("Helvetica", size=10)
    pdf.set_x(20)
    pdf.multi_cell(
        170,
        5,
        "The consensus problem involves an asynchronous system of processes, some of which may be "
        "unreliable. We show that every protocol for this problem has the possibility of nontermination, "
        "even with only one faulty process. By way of contrast, solutions are known for the synchronous case. "
        + "More text follows here about the model and the proof. "
        * 6,
    )
    pdf.ln(4)
    pdf.set_x(20)
    pdf.multi_cell(
        170,
        5,
        "Journal of the Association for Computing Machinery, Vol. 32, No. 2, April 1985, pp. 374-382.\n"
        "Copyright 1985 ACM. doi:10.1145/3149.214121",
    )
    with pdf.rotation(90, x=10, y=200):
        pdf.set_font("Helvetica", size=14)
        pdf.text(10, 200, "arXiv:1234.56789v2 [cs.DC] 3 Apr 2012")
    path = tmp_path / "flp.pdf"
    path.write_bytes(bytes(pdf.output()))
    return path


def test_page_one_layout_gives_title_authors_without_markers_and_the_printed_year(tmp_path):
    metadata = extract_metadata(extract_text(paper_pdf(tmp_path)))
    assert metadata.title == "Impossibility of Distributed Consensus with One Faulty Process"
    assert metadata.authors == ("Michael J. Fischer", "Nancy A. Lynch", "Michael S. Paterson")
    # Printed on the paper (copyright line), not the file's 1999 creation date.
    assert metadata.year == 1985
    assert metadata.venue == "Journal of the Association for Computing Machinery"
    assert metadata.volume == "32"
    assert metadata.doi == "10.1145/3149.214121"
    assert metadata.arxiv_id == "1234.56789"
    assert metadata.abstract.startswith("The consensus problem involves")
    assert metadata.sources["year"] == "pdf"


@pytest.mark.parametrize(
    ("line", "venue", "volume", "year"),
    [
        ("Journal of Hydroinformatics Systems, vol. 9, 2023", "Journal of Hydroinformatics Systems", "9", 2023),
        ("Journal of Occupational Health Studies, 2019", "Journal of Occupational Health Studies", "", 2019),
    ],
)
def test_a_journal_line_gives_venue_and_year_over_the_files_date(line, venue, volume, year):
    page = f"Sleep Loss in Night-Shift Nurses\nAisha Rahman, Lars Berg\n{line}\nAbstract\nWe followed 64 nurses."
    metadata = metadata_of(pages=[page], info={"CreationDate": "D:20261204084028Z"})
    assert (metadata.venue, metadata.volume, metadata.year) == (venue, volume, year)


def test_without_a_printed_year_the_file_date_is_used(tmp_path, make_pdf):
    path = tmp_path / "plain.pdf"
    path.write_bytes(make_pdf(["Some notes about consensus protocols written without any date at all."]))
    metadata = extract_metadata(extract_text(path))
    assert metadata.year == CREATED.year  # the creation date the test PDFs carry


@pytest.mark.parametrize(
    ("file", "title", "authors", "year", "venue"),
    [
        (
            "storage/dynamo.pdf",
            "Dynamo: Amazon\u2019s Highly Available Key-value Store",
            ("Giuseppe DeCandia", "Deniz Hastorun", "Madan Jampani", "Gunavardhan Kakulapati", "Avinash Lakshman"),
            2007,
            "SOSP 2007",
        ),
        (
            "consensus/zookeeper.pdf",
            "ZooKeeper: Wait-free coordination for Internet-scale systems",
            ("Patrick Hunt", "Mahadev Konar", "Flavio P. Junqueira", "Benjamin Reed"),
            2010,
            "",
        ),
        (
            "consensus/chubby.pdf",
            "The Chubby lock service for loosely-coupled distributed systems",
            ("Mike Burrows",),
            2006,
            "",
        ),
    ],
)
def test_real_papers_read_right(file, title, authors, year, venue):
    metadata = extract_metadata(extract_text(shared_paper(file)))
    assert metadata.title == title
    assert metadata.authors[: len(authors)] == authors
    assert metadata.year == year
    assert metadata.venue == venue


def test_citesee_reads_the_acm_reference_line_doi_and_arxiv_stamp():
    metadata = extract_metadata(extract_text(shared_paper("scholarly-reading/citesee.pdf")))
    assert metadata.authors[-2:] == ("Doug Downey", "Daniel S. Weld")  # the printed order, not the grid's
    assert (metadata.year, metadata.venue) == (2023, "CHI 2023")
    assert metadata.doi == "10.1145/3544548.3580847"
    assert metadata.arxiv_id == "2302.07302"


def test_reextraction_replaces_what_the_pdf_gave_and_keeps_what_was_set_by_hand(alice, add_paper):
    paper = add_paper(alice, title="Set by hand")
    take_metadata(paper, PaperMetadata(title="Extracted", authors=("Ada Lovelace",), year=1999))
    assert paper.title == "Set by hand"
    assert (paper.author_list, paper.authors, paper.year) == (["Ada Lovelace"], "Ada Lovelace", 1999)
    take_metadata(paper, PaperMetadata(year=1985, arxiv_id="2302.07302"))
    assert paper.year == 1985
    assert paper.doc_key == "arxiv:2302.07302"
    assert paper.metadata_sources == {"authors": "pdf", "year": "pdf", "arxiv_id": "pdf"}


def test_a_work_is_keyed_by_doi_then_arxiv_id_then_pmid_then_file_hash():
    assert doc_key(doi="https://doi.org/10.1145/3149.214121", arxiv_id="1234.5678", sha256="ab") == (
        "doi:10.1145/3149.214121"
    )
    assert doc_key(doi="DOI: 10.1145/ABC", sha256="ab") == "doi:10.1145/abc"
    assert doc_key(arxiv_id="2302.07302v1", pmid="123456", sha256="ab") == "arxiv:2302.07302"
    assert doc_key(pmid="123456", sha256="ab") == "pmid:123456"
    assert doc_key(sha256="ab") == "sha256:ab"


# --- corrections belong to one library entry ------------------------------------------------------


@pytest.fixture
def shared_paper_row(alice, bob, make_pdf):
    """One PDF in both alice's and bob's libraries, read as "FLP" (1999, by Fischer)."""
    data = make_pdf(["Impossibility of consensus with one faulty process."])
    paper = add_paper_to_library(user=alice, data=data, filename="flp.pdf").paper
    add_paper_to_library(user=bob, data=data, filename="mine.pdf")
    Paper.objects.filter(pk=paper.pk).update(
        title="FLP", authors="Michael J. Fischer", author_list=["Michael J. Fischer"], year=1999
    )
    return paper


def test_a_correction_changes_only_the_correcting_users_view(alice, bob, shared_paper_row, api_client_for):
    response = api_client_for(alice).patch(
        reverse("api:library-paper", args=[shared_paper_row.pk]),
        {"year": 1985, "authors": ["Michael J. Fischer", "Nancy A. Lynch", "Michael S. Paterson"]},
        format="json",
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["year"], body["first_author"], len(body["authors"])) == (1985, "Michael J. Fischer", 3)
    assert body["metadata_sources"]["year"] == "user"
    theirs = api_client_for(bob).get(reverse("api:paper", args=[shared_paper_row.pk])).json()
    assert (theirs["year"], theirs["authors"], theirs["metadata_sources"]["year"]) == (
        1999,
        ["Michael J. Fischer"],
        "pdf",
    )
    assert Paper.objects.get(pk=shared_paper_row.pk).year == 1999


def test_an_outsider_cannot_correct_a_paper(mallory, shared_paper_row, api_client_for):
    response = api_client_for(mallory).patch(
        reverse("api:library-paper", args=[shared_paper_row.pk]), {"year": 2000}, format="json"
    )
    assert response.status_code == 404
    assert not UserPaper.objects.filter(corrections__has_key="year").exists()


def test_bad_corrections_are_refused_with_a_code(alice, shared_paper_row, api_client_for):
    client = api_client_for(alice)
    url = reverse("api:library-paper", args=[shared_paper_row.pk])
    assert client.patch(url, {"doi": "not a doi"}, format="json").json()["error"]["code"] == "invalid_metadata"
    with pytest.raises(MetadataCorrectionError):
        correct_paper_metadata(user=alice, paper=shared_paper_row, changes={"abstract": "x"})


def test_a_reset_correction_follows_the_pdf_again(alice, shared_paper_row):
    correct_paper_metadata(user=alice, paper=shared_paper_row, changes={"year": 1985})
    paper = correct_paper_metadata(user=alice, paper=shared_paper_row, changes={}, reset=["year"])
    assert (paper.cited.year, paper.cited.sources["year"]) == (1999, "pdf")


@pytest.mark.parametrize("blank", ["", "   ", None])
def test_a_blank_correction_goes_back_to_the_pdf_and_never_blanks_the_paper(
    alice, shared_paper_row, api_client_for, blank
):
    client = api_client_for(alice)
    url = reverse("api:library-paper", args=[shared_paper_row.pk])
    client.patch(url, {"title": "Impossibility of Distributed Consensus", "year": 1985}, format="json")

    response = client.patch(
        url, {"title": blank, "authors": [] if blank is None else blank, "year": None}, format="json"
    )

    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["title"], body["authors"], body["year"]) == ("FLP", ["Michael J. Fischer"], 1999)
    assert body["metadata_sources"]["title"] == "pdf"
    assert UserPaper.objects.get(user=alice, paper=shared_paper_row).corrections == {}


def test_correcting_in_the_library_page(alice, bob, mallory, shared_paper_row, client_for):
    client = client_for(alice)
    url = reverse("papers:edit_metadata", args=[shared_paper_row.pk])
    assert "FLP" in client.get(url).content.decode()
    form = {"title": "FLP", "authors": "Michael J. Fischer", "year": "1985", "venue": "JACM", "doi": ""}
    assert client.post(url, form).status_code == 302
    assert "JACM" in client.get(reverse("papers:library")).content.decode()
    assert "JACM" not in client_for(bob).get(reverse("papers:library")).content.decode()
    assert client_for(mallory).post(url, form).status_code == 404
    # Only the fields alice changed are corrections; the title keeps following the PDF.
    assert set(UserPaper.objects.get(user=alice, paper=shared_paper_row).corrections) == {"year", "venue"}


def test_the_admin_shows_the_pdfs_metadata_and_each_entrys_corrections(alice, staff, shared_paper_row, client_for):
    correct_paper_metadata(user=alice, paper=shared_paper_row, changes={"year": 1985})
    page = client_for(staff).get(reverse("admin:papers_paper_change", args=[shared_paper_row.pk])).content.decode()
    assert "1999" in page
    assert "1985" in page


# --- "mine" and filters ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mine", "printed", "same"),
    [
        ("S. Ghemawat", "Sanjay Ghemawat", True),
        ("Ghemawat, Sanjay", "Sanjay Ghemawat", True),
        ("Flávio Junqueira", "Flavio P. Junqueira", True),
        ("Robbert van Renesse", "R. van Renesse", True),
        ("GHEMAWAT", "Sanjay Ghemawat", True),
        ("Jeffrey Dean", "Sanjay Ghemawat", False),
        ("Sanjay Ghemawat", "Sunil Ghemawat", False),
    ],
)
def test_author_names_match_their_variants(mine, printed, same):
    assert same_person(mine, printed) is same


@pytest.fixture
def library(alice, add_paper):
    """alice's library: GFS (2003, SOSP), Bigtable (2006, OSDI), Chubby (2006, OSDI), Paxos (2001)."""
    return {
        "gfs": add_paper(alice, title="The Google File System", authors="Sanjay Ghemawat, Howard Gobioff",
                         author_list=["Sanjay Ghemawat", "Howard Gobioff"], year=2003, venue="SOSP 2003"),
        "bigtable": add_paper(alice, title="Bigtable: A Distributed Storage System",
                              authors="Fay Chang, Sanjay Ghemawat",
                              author_list=["Fay Chang", "Sanjay Ghemawat"], year=2006, venue="OSDI 2006"),
        "chubby": add_paper(alice, title="The Chubby lock service", authors="Mike Burrows",
                            author_list=["Mike Burrows"], year=2006, venue="OSDI 2006"),
        "paxos": add_paper(alice, title="Paxos Made Simple", authors="Leslie Lamport",
                           author_list=["Leslie Lamport"], year=2001),
    }  # fmt: skip


def test_my_papers_are_those_listing_one_of_my_names(alice, library):
    set_author_names(user=alice, names=["S. Ghemawat", "Ghemawat, S."])
    mine = library_papers(user=alice, criteria=MetadataFilter(), mine=True).papers
    assert {p.pk for p in mine} == {library["gfs"].pk, library["bigtable"].pk}


def test_filters_read_the_corrected_metadata(alice, library):
    correct_paper_metadata(user=alice, paper=library["paxos"], changes={"year": 2006})
    found = library_papers(user=alice, criteria=MetadataFilter(year=2006)).papers
    assert {p.pk for p in found} == {library["bigtable"].pk, library["chubby"].pk, library["paxos"].pk}
    assert [p.pk for p in library_papers(user=alice, criteria=MetadataFilter(first_author="Ghemawat")).papers] == [
        library["gfs"].pk
    ]


def test_papers_command_lists_and_filters(alice, library):
    set_author_names(user=alice, names=["Sanjay Ghemawat"])
    out = StringIO()
    call_command("papers", "--user", "alice", "--venue", "osdi", "--json", stdout=out)
    assert {p["title"] for p in json.loads(out.getvalue())} == {library["bigtable"].title, library["chubby"].title}
    out = StringIO()
    call_command("papers", "--user", "alice", "--mine", "--before", "2005", stdout=out)
    assert "The Google File System" in out.getvalue()
    assert "Bigtable" not in out.getvalue()
    assert out.getvalue().strip().endswith("1 paper")


def test_papers_command_says_how_to_set_author_names_and_sets_them(alice, library):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--set-author-names"):
        call_command("papers", "--user", "alice", "--mine", stdout=StringIO())
    out = StringIO()
    call_command(
        "papers", "--user", "alice", "--set-author-names", "S. Ghemawat", "--mine", "--before", "2005", stdout=out
    )
    assert out.getvalue().startswith("Author names of alice: S. Ghemawat")
    assert "The Google File System" in out.getvalue()


def test_papers_command_marks_a_paper_that_is_not_searched(alice, library):
    from papers.models import Paper

    failed = library["chubby"]
    Paper.objects.filter(pk__in=[paper.pk for paper in library.values()]).update(index_status=Paper.IndexStatus.READY)
    Paper.objects.filter(pk=failed.pk).update(
        index_status=Paper.IndexStatus.FAILED, index_error="No text could be read from this PDF."
    )
    out = StringIO()
    call_command("papers", "--user", "alice", stdout=out)
    lines = {line.split()[0]: line for line in out.getvalue().splitlines() if line.startswith(" ")}
    assert lines[str(failed.pk)].endswith("[failed: No text could be read from this PDF.]")
    ready = [line for key, line in lines.items() if key != str(failed.pk)]
    assert ready and not any("[" in line for line in ready)
    out = StringIO()
    call_command("papers", "--user", "alice", "--json", stdout=out)
    record = next(r for r in json.loads(out.getvalue()) if r["id"] == failed.pk)
    assert (record["index_status"], record["index_error"]) == ("failed", "No text could be read from this PDF.")


def test_papers_command_refuses_a_year_that_is_no_number_in_plain_words(alice):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="'abc' is not a year"):
        call_command("papers", "--user", "alice", "--year", "abc", stdout=StringIO())


def test_papers_api_filters_and_my_names(alice, bob, library, api_client_for):
    client = api_client_for(alice)
    assert client.get(reverse("api:library"), {"mine": "true"}).json()["error"]["code"] == "no_author_names"
    client.put(reverse("api:author-names"), {"names": ["S. Ghemawat"]}, format="json")
    assert client.get(reverse("api:author-names")).json() == {"names": ["S. Ghemawat"]}
    titles = {p["title"] for p in client.get(reverse("api:library"), {"mine": "true", "year": 2006}).json()}
    assert titles == {library["bigtable"].title}
    assert len(client.get(reverse("api:library"), {"after": 2002, "venue": "SOSP"}).json()) == 1
    assert api_client_for(bob).get(reverse("api:library"), {"year": 2006}).json() == []


# --- metadata questions ---------------------------------------------------------------------------


@pytest.fixture
def no_chunk_index(monkeypatch):
    """Any use of the chunk index or of retrieval fails the test."""

    def forbidden(*args, **kwargs):
        raise AssertionError("the chunk index was used for a metadata question")

    monkeypatch.setattr("indexing.store.get_client", forbidden)
    monkeypatch.setattr("indexing.store.get_collection", forbidden)
    monkeypatch.setattr("chat.services.retrieve_passages", forbidden)


@pytest.fixture
def project(alice, library):
    project = create_project(owner=alice, name="Systems")
    add_papers_to_project(project=project, papers=list(library.values()), user=alice)
    return project


@pytest.mark.parametrize(
    ("question", "expected", "cited"),
    [
        ("Who is the first author of the Bigtable paper?",
         "first author of Bigtable: A Distributed Storage System is Fay Chang", ["bigtable"]),
        ("Which papers in this project were published before 2005?", "2 papers are from before 2005", ["gfs", "paxos"]),
        ("Which venue published Chubby?", "The Chubby lock service was published in OSDI 2006", ["chubby"]),
        ("Who is the author of the Chubby paper?", "The Chubby lock service is by Mike Burrows", ["chubby"]),
        ("How many papers here are by Ghemawat?", "2 papers in this project are by Ghemawat", ["gfs", "bigtable"]),
        ("Which paper did Burrows write?", "1 paper is by Burrows", ["chubby"]),
        ("Which papers has Ghemawat written?", "2 papers are by Ghemawat", ["gfs", "bigtable"]),
        ("List the papers from OSDI", "2 papers are from OSDI", ["bigtable", "chubby"]),
        ("Which papers are from 2006?", "2 papers are from 2006", ["bigtable", "chubby"]),
    ],
)  # fmt: skip
def test_metadata_questions_are_answered_from_the_database(
    alice, project, library, no_chunk_index, question, expected, cited
):
    answer = answer_question(project=project, user=alice, question=question, chat=True)
    assert answer.text.startswith("From paper metadata: ")
    assert expected in answer.text
    assert {ref.paper_id for ref in answer.references} == {library[name].pk for name in cited}
    assert {ref.page for ref in answer.references} == {1}
    assert answer.status == "answered"


def test_a_metadata_question_that_names_no_paper_asks_about_the_last_answers_paper(
    alice, project, library, no_chunk_index
):
    answer_question(project=project, user=alice, question="Which venue published Chubby?", chat=True)
    for question, expected in [
        ("Who is the first author?", "The first author of The Chubby lock service is Mike Burrows."),
        ("What year was it published?", "The Chubby lock service is from 2006."),
        ("Who are the authors?", "The Chubby lock service is by Mike Burrows."),
    ]:
        answer = answer_question(project=project, user=alice, question=question, chat=True)
        assert expected in answer.text, question
        assert {ref.paper_id for ref in answer.references} == {library["chubby"].pk}


def test_an_authors_question_that_describes_a_paper_asks_of_the_paper_retrieval_finds(alice, indexed_paper):
    zookeeper = indexed_paper(
        alice,
        ["ZooKeeper is a service for coordinating processes, built at Yahoo! for its web services."],
        title="ZooKeeper: Wait-free coordination",
    )
    gfs = indexed_paper(alice, ["GFS stores files as 64 MB chunks on chunkservers."], title="The Google File System")
    for paper, authors in [(zookeeper, ["Patrick Hunt", "Mahadev Konar"]), (gfs, ["Sanjay Ghemawat"])]:
        paper.authors, paper.author_list = ", ".join(authors), authors
        paper.save()
    project = create_project(owner=alice, name="Systems")
    add_papers_to_project(project=project, papers=[gfs, zookeeper], user=alice)
    # The last answer was about GFS; "the paper about ..." is not that paper but the one described.
    answer_question(project=project, user=alice, question="What size are GFS chunks?", chat=True)
    question = "Who wrote the paper about the Yahoo! coordination service?"
    answer = answer_question(project=project, user=alice, question=question, chat=True)
    assert "ZooKeeper: Wait-free coordination is by Patrick Hunt and Mahadev Konar." in answer.text
    assert {ref.paper_id for ref in answer.references} == {zookeeper.pk}
    assert metadata_answers.described_paper(question, [gfs, zookeeper]) == "the Yahoo! coordination service"
    # A paper named is no paper described.
    assert metadata_answers.described_paper("Who wrote the paper about GFS chunks?", [gfs, zookeeper]) is None


def test_a_metadata_question_that_names_no_paper_is_not_guessed_without_a_last_answer(library):
    papers = list(library.values())
    assert metadata_answers.answer_from_metadata("Who is the first author?", papers) is None
    assert metadata_answers.answer_from_metadata("When was it published?", papers, previous=[10**6]) is None
    answer = metadata_answers.answer_from_metadata("When was it published?", [library["paxos"]])
    assert answer is not None and "Paxos Made Simple is from 2001." in answer.text
    # A work the paper cites, named with its author's name, is no question about the paper's year.
    cited_work = "When was Lamport's Part-time Parliament first written?"
    assert metadata_answers.answer_from_metadata(cited_work, [library["paxos"]]) is None
    assert metadata_answers.answer_from_metadata("When was the Paxos paper written?", [library["paxos"]]) is not None
    # Metadata without the value asked for is no answer: the answer says so, not stated.
    venue = metadata_answers.answer_from_metadata("Which venue published Paxos Made Simple?", [library["paxos"]])
    assert venue is not None and "names no venue" in venue.text
    assert venue.status == "not_stated"
    both = metadata_answers.answer_from_metadata("Which venue published them?", papers, previous=[p.pk for p in papers])
    assert both is not None and both.status == "partly_answered"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("List the papers from the Association for Computational Linguistics",
         "1 paper is from Association for Computational Linguistics"),
        ("List the papers from ACL", "1 paper is from ACL"),
    ],
)  # fmt: skip
def test_a_venue_of_several_words_or_its_acronym_lists_its_papers(
    alice, project, add_paper, no_chunk_index, question, expected
):
    venue = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics"
    corpus = add_paper(
        alice, title="S2ORC: An Open Corpus", authors="Kyle Lo", author_list=["Kyle Lo"], year=2020, venue=venue
    )
    add_papers_to_project(project=project, papers=[corpus], user=alice)
    answer = answer_question(project=project, user=alice, question=question, chat=True)
    assert expected in answer.text
    assert {ref.paper_id for ref in answer.references} == {corpus.pk}


@pytest.mark.parametrize("venue", ["ACL", "association for computational linguistics"])
def test_the_library_filters_a_venue_by_its_acronym_as_chat_does(alice, add_paper, api_client_for, venue):
    name = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics"
    add_paper(alice, title="S2ORC: An Open Corpus", authors="Kyle Lo", author_list=["Kyle Lo"], year=2020, venue=name)
    add_paper(alice, title="The Google File System", authors="Sanjay Ghemawat", year=2003, venue="SOSP 2003")
    add_paper(alice, title="Attention-based Lattice Learning", authors="Ada Lim", year=2019, venue="AAAI 2019")

    response = api_client_for(alice).get(reverse("api:library"), {"venue": venue})
    assert [paper["title"] for paper in response.json()] == ["S2ORC: An Open Corpus"]
    out = StringIO()
    call_command("papers", "--user", "alice", "--venue", venue, "--json", stdout=out)
    assert [paper["title"] for paper in json.loads(out.getvalue())] == ["S2ORC: An Open Corpus"]


@pytest.mark.parametrize(
    "question",
    [
        "How many papers are in this project?",
        "Which papers are here?",
        "List the papers",
        "What papers does this project have?",
        "how many papers are there",
    ],
)
def test_a_question_about_the_projects_papers_lists_them_all(alice, project, library, no_chunk_index, question):
    answer = answer_question(project=project, user=alice, question=question)
    assert answer.text.startswith(f"From paper metadata: This project has {len(library)} papers:")
    assert {ref.paper_id for ref in answer.references} == {paper.pk for paper in library.values()}
    assert answer.status == "answered"


@pytest.mark.parametrize(
    "question", ["Which papers here mention Paxos?", "How many papers in this project use leases?", "List the papers"]
)
def test_only_a_question_about_the_project_as_a_whole_lists_all_its_papers(question):
    assert metadata_answers.is_metadata_question(question) is (question == "List the papers")


def test_a_corrected_year_changes_the_answer_for_the_project_owner(alice, project, library, no_chunk_index):
    correct_paper_metadata(user=alice, paper=library["paxos"], changes={"year": 2006})
    answer = answer_question(project=project, user=alice, question="Which papers are from 2006?")
    assert "3 papers are from 2006" in answer.text
    assert library["paxos"].pk in {ref.paper_id for ref in answer.references}


def test_no_match_is_said_plainly(alice, project, no_chunk_index):
    answer = answer_question(project=project, user=alice, question="Which papers are from 1970?")
    assert answer.text == "From paper metadata: no paper in this project is from 1970."
    assert answer.references == []


def test_content_questions_are_left_to_retrieval_limited_by_metadata(alice, library):
    papers = list(Paper.objects.in_library_of(alice))
    question = "What did the 2006 papers say about locking?"
    assert metadata_answers.answer_from_metadata(question, papers) is None
    scope = metadata_answers.papers_in_scope(question, papers)
    assert scope is not None
    assert {p.pk for p in scope.papers} == {library["bigtable"].pk, library["chubby"].pk}
    assert scope.question == "What did the papers say about locking?"
    mine = metadata_answers.papers_in_scope("What did I write about consensus?", papers, author_names=["L. Lamport"])
    assert mine is not None
    assert [p.pk for p in mine.papers] == [library["paxos"].pk]
    assert metadata_answers.answer_from_metadata("How does Paxos choose a value?", papers) is None
    in_year = metadata_answers.papers_in_scope("What do papers in 2006 say about locking?", papers)
    assert in_year is not None and {p.pk for p in in_year.papers} == {library["bigtable"].pk, library["chubby"].pk}
    assert in_year.question == "What do papers say about locking?"
    # "by Ghemawat et al." cites one paper (question analysis names it); it filters nothing.
    assert metadata_answers.papers_in_scope("What is said about leases by Ghemawat et al.?", papers) is None
    assert metadata_answers.papers_in_scope("What is said about leases by Ghemawat?", papers) is not None
    event = "How many citations did the papers receive in 2006?"  # the year counts citations, not papers
    assert metadata_answers.answer_from_metadata(event, papers) is None
    assert metadata_answers.papers_in_scope(event, papers) is None


def test_a_mixed_question_retrieves_only_from_the_papers_it_names_by_year(alice, indexed_project):
    raft = indexed_project.papers.get(title="Raft")
    Paper.objects.filter(pk=raft.pk).update(year=2014)
    Paper.objects.exclude(pk=raft.pk).update(year=1998)
    answer = answer_question(
        project=indexed_project, user=alice, question="What did the 2014 papers say about a majority?"
    )
    assert answer.references
    assert {ref.paper_id for ref in answer.references} == {raft.pk}


def test_in_a_one_paper_project_the_paper_is_that_paper(alice, library, no_chunk_index):
    project = create_project(owner=alice, name="One")
    add_papers_to_project(project=project, papers=[library["chubby"]], user=alice)
    answer = answer_question(project=project, user=alice, question="Who are the authors of the paper?")
    assert answer.text.startswith("From paper metadata: ")
    assert "Burrows" in answer.text
    assert [ref.paper_id for ref in answer.references] == [library["chubby"].pk]


@pytest.mark.parametrize(
    ("name", "author", "year"), [("same-title-a.pdf", "Ada Brenner", 1998), ("same-title-b.pdf", "Kofi Mensah", 2021)]
)
def test_a_byline_ending_with_its_year_beats_the_files_date(name, author, year):
    metadata = extract_metadata(extract_text(shared_case(name)))  # the file says 2023
    assert (metadata.authors, metadata.year) == ((author,), year)


def test_an_abstract_keeps_real_hyphens_and_drops_footnote_markers():
    from indexing.metadata import clean_abstract

    printed = (
        "We introduce S2ORC,1 a large corpus of 81.1M papers. Full text is annotated with automatically-\n"
        "detected inline mentions of citations and its implemen-\ntation is open."
    )
    assert clean_abstract(printed) == (
        "We introduce S2ORC, a large corpus of 81.1M papers. Full text is annotated with automatically-detected "
        "inline mentions of citations and its implementation is open."
    )


# --- affiliations, from page 1 ----------------------------------------------------------------------

CITESEE_FRONT = """CiteSee: Augmenting Citations in Scientific Papers with
Persistent and Personalized Historical Context
Joseph Chee Chang Amy X. Zhang Jonathan Bragg
josephc@allenai.org axz@cs.uw.edu jbragg@allenai.org
Allen Institute for AI University of Washington Allen Institute for AI
Seattle, WA, USA Seattle, WA, USA Seattle, WA, USA
2023
"""


@pytest.mark.parametrize(
    ("front", "title", "lines"),
    [
        (CITESEE_FRONT, "CiteSee: Augmenting Citations in Scientific Papers with Persistent and Personalized "
         "Historical Context", ["Allen Institute for AI University of Washington Allen Institute for AI"]),
        # A company's mark, an e-mail address left out, a one-word affiliation with its mark.
        ("ZooKeeper: Wait-free coordination\nPatrick Hunt and Mahadev Konar\nYahoo! Grid\n{phunt}@yahoo-inc.com\n",
         "ZooKeeper: Wait-free coordination", ["Yahoo! Grid"]),
        ("The Google File System\nSanjay Ghemawat, Howard Gobioff\nGoogle\u2217\n", "The Google File System",
         ["Google"]),
        # Greek affiliation marks; a title word ("Google") after the title is no title.
        ("PaperMage\nKyle Lo\u03b1\u2217 Marti A. Hearst\u03b2\n"
         "\u03b1Allen Institute for AI \u03b2University of California\n",
         "PaperMage", ["Allen Institute for AI University of California"]),
        # No affiliation printed: a name and a date; prose ends the front matter.
        ("Paxos Made Simple\nLeslie Lamport\n01 Nov 2001", "Paxos Made Simple", []),
        ("Plain\nTAL AUGUST,\nUniversity of Washington, USA\nWhen seeking information not covered in the research\n"
         "literature, Stanford University readers", "Plain", ["University of Washington, USA"]),
    ],
)  # fmt: skip
def test_affiliation_lines_are_the_front_matters_places_not_its_names_dates_or_prose(front, title, lines):
    assert metadata_answers.affiliation_lines(front, title) == lines


def test_an_affiliation_question_quotes_page_one_of_the_paper_it_names(alice, chunk_store, settings):
    from indexing.ingest import ingest_paths
    from tests.conftest import SAMPLE_PAPERS

    settings.CONTEXTUAL_BLURBS = "heuristic"
    assert not ingest_paths(user=alice, paths=[SAMPLE_PAPERS / "s2orc.pdf"], project_name="Sample").failed
    project = Project.objects.get(name="Sample")
    answer = answer_question(project=project, user=alice, question="Where do the S2ORC authors work?", chat=True)
    assert answer.text.startswith("From page 1 of the paper: ")
    assert "\u201cAllen Institute for Artificial Intelligence\u201d" in answer.text
    assert "University of Washington" in answer.text
    assert [(ref.page, "Allen Institute" in ref.text) for ref in answer.references] == [(1, True)]
    assert answer.status == "answered"
    # Not read as a content question: "work" is no verb of the paper's ("S2ORC works with ...").
    assert "works" not in answer.text
