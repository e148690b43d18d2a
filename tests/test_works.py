"""Works (issue 14): files with one DOI, arXiv id or PMID are versions of one work, listed together
in the library, of which questions read only the primary (each user's choice, else the published
version, else the newest); a supplement sharing the DOI is attached to the work, always searched and
cited under its own label."""

from __future__ import annotations

from http import HTTPStatus

import pytest
from django.urls import reverse

from chat.models import ChatMessage
from chat.services import answer_question, search_project
from indexing.retrieval import retrieve_passages
from indexing.services import index_paper
from papers.citation import author_year_citation
from papers.metadata import MetadataFilter
from papers.models import Paper
from papers.services import (
    NotAVersionError,
    add_paper_to_library,
    choose_primary_version,
    correct_paper_metadata,
    get_work_for_user,
    library_works,
)
from papers.works import read_supplement, supplement_label
from projects.models import papers_as_added
from projects.services import add_member, add_papers_to_project, create_project
from tests.conftest import shared_case
from tests.support.indexing import stored_paper
from tests.support.pdfs import make_pdf_bytes

pytestmark = pytest.mark.django_db

DOI = "10.5555/sprockets.2021.0042"
HEAD = "Sprocket Alignment with Deep Widgets\nAda Lovelace, Charles Babbage\n"
ABSTRACT = (
    "Abstract. We align sprockets with a lattice of deep widgets. Each widget in the lattice nudges the "
    "sprocket teeth toward the reference gear until the alignment error falls under one micrometre."
)
PREPRINT_PAGES = [
    f"{HEAD}Preprint, not peer reviewed. Copyright 2021 the authors. doi:{DOI}\n{ABSTRACT} "
    "In this draft the widget lattice holds twelve widgets.",
    "Results. The widget lattice aligned ninety sprockets in our draft experiments, each within one "
    "micrometre of the reference gear after four passes of the lattice.",
]
PUBLISHED_PAGES = [
    f"{HEAD}Journal of Sprocket Engineering, Vol. 12, No. 3. Copyright 2021 the authors. doi:{DOI}\n"
    f"{ABSTRACT} In the final design the widget lattice holds sixteen widgets.",
    "Results. The widget lattice aligned one hundred sprockets in the final experiments, each within one "
    "micrometre of the reference gear after three passes of the lattice.",
]
SUPPLEMENT_PAGES = [
    "Supporting Information for\nSprocket Alignment with Deep Widgets\nAda Lovelace, Charles Babbage\n"
    f"Copyright 2021 the authors. doi:{DOI}\n"
    "Section S2. The calibration rig measured the torque on every sprocket with a strain gauge; the mean "
    "calibration torque was 42 newton metres, and no sprocket needed more than 47 newton metres.",
]
ALIGN = "How does the widget lattice align the sprockets with the reference gear?"
TORQUE = "What was the mean calibration torque measured on the sprockets?"


# --- detection (pure) ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "first_page", "work"),
    [
        ("Supporting Information: Oxides of", "Supporting Information: Oxides of Iron\nR. Kovac\n", "Oxides of Iron"),
        ("Supporting Information", "Supporting Information\nfor\nDeep Widgets\nAda Lovelace\n", "Deep Widgets"),
        ("Supplementary Materials for", "Supplementary Materials for\nThe Widget Lattice\nAda\n", "The Widget Lattice"),
        ("Deep Widgets", "SUPPLEMENTARY INFORMATION\ndoi:10.1038/nature123\nDeep Widgets\n", "Deep Widgets"),
        ("", "Supplementary Data\ndoi:10.1038/nature123\n", ""),
        ("Deep Widgets: Supplementary Material", "Deep Widgets: Supplementary Material\nAda\n", "Deep Widgets"),
        ("Online Appendix", "Online Appendix\nDeep Widgets\n", "Deep Widgets"),
        ("Appendix", "Appendix\nA. Proof of Lemma 3.\n", ""),
        ("Electronic Supplementary Material", "Electronic Supplementary Material\nDeep Widgets\n", "Deep Widgets"),
    ],
)
def test_a_supplement_is_recognised_by_its_title_or_first_lines(title, first_page, work):
    assert read_supplement(title=title, first_page=first_page) == work


@pytest.mark.parametrize(
    ("title", "first_page"),
    [
        ("Deep Widgets", "Deep Widgets\nAda Lovelace\nProofs are in the Supplementary Material and Appendix A.\n"),
        ("Supplementing Diets with Iron", "Supplementing Diets with Iron\nAda Lovelace\n"),
        ("Appendicitis in Children", "Appendicitis in Children\nAda Lovelace\n"),
        ("Widgets", "Widgets\nOne\nTwo\nThree\nFour\nSupporting Information\n"),  # below the head of page 1
    ],
)
def test_a_paper_that_mentions_a_supplement_is_not_one(title, first_page):
    assert read_supplement(title=title, first_page=first_page) is None


def test_the_real_corpus_holds_no_supplement_but_the_case_that_is_one():
    from indexing.pdf import extract_metadata, extract_text

    for name in ("main.pdf", "same-title-a.pdf", "running-headers.pdf"):
        text = extract_text(shared_case(name))
        assert read_supplement(title=extract_metadata(text).title, first_page=text.pages[0]) is None
    text = extract_text(shared_case("main_SI.pdf"))
    found = read_supplement(title=extract_metadata(text).title, first_page=text.pages[0])
    assert found == "Low-Temperature Synthesis of Layered Oxides"


def test_supplement_labels_and_citations():
    assert supplement_label("Supporting Information for Deep Widgets") == "Supplement to Deep Widgets"
    assert supplement_label("Deep Widgets") == "Supplement to Deep Widgets"
    assert supplement_label("Supporting Information") == ""
    cite = author_year_citation(first_author="Lovelace", year=2021, page=3, supplement=True)
    assert cite == "(Lovelace 2021, supplement, p. 3)"


# --- the library: works and their primary version (no chunk index needed) --------------------------


def library_file(user, text: str, **fields) -> Paper:
    """A file of *text* in *user*'s library with *fields* set as indexing would have found them."""
    paper = add_paper_to_library(user=user, data=make_pdf_bytes([text]), filename=f"{text}.pdf").paper
    for name, value in fields.items():
        setattr(paper, name, value)
    paper.save()
    return paper


@pytest.fixture
def versions(alice):
    """alice's two files of one arXiv work, the published one added first: (preprint, published)."""
    published = library_file(alice, "published", title="Widgets", doc_key="arxiv:2101.00001", venue="NeurIPS 2021")
    preprint = library_file(alice, "preprint", title="Widgets", doc_key="arxiv:2101.00001", venue="arXiv")
    return preprint, published


def test_the_published_version_is_primary_by_default_then_the_newest(alice, versions):
    preprint, published = versions
    [work] = library_works(user=alice, criteria=MetadataFilter()).works
    assert (work.key, work.primary, work.versions, work.chosen) == ("arxiv:2101.00001", published, (preprint,), False)

    first = library_file(alice, "gears 1", title="Gears", doc_key="pmid:123456")
    second = library_file(alice, "gears 2", title="Gears", doc_key="pmid:123456")
    gears = get_work_for_user(alice, first.pk)
    assert (gears.primary, gears.versions) == (second, (first,))
    lone = library_file(alice, "lone", title="Lone", doc_key=f"sha256:{'a' * 64}")
    assert len(library_works(user=alice, criteria=MetadataFilter()).works) == 3
    assert get_work_for_user(alice, lone.pk).key == ""


def test_a_preprint_sharing_the_published_doi_with_no_venue_read_is_not_the_primary(alice):
    doi = dict(title="Glacier", doc_key="doi:10.5555/glacier", doi="10.5555/glacier")
    published = library_file(alice, "published glacier", **doi)
    preprint = library_file(alice, "preprint glacier", arxiv_id="2301.01234", **doi)  # added last
    work = get_work_for_user(alice, preprint.pk)
    assert (work.primary, work.versions) == (published, (preprint,))


def test_a_filter_lists_the_whole_work_whose_file_it_admits(alice, versions):
    preprint, published = versions
    Paper.objects.filter(pk=preprint.pk).update(year=2020)
    [work] = library_works(user=alice, criteria=MetadataFilter(year=2020)).works
    assert (work.primary, work.versions) == (published, (preprint,))
    assert library_works(user=alice, criteria=MetadataFilter(year=1999)).works == []


def test_choosing_the_primary_is_one_users_alone(alice, bob, versions):
    preprint, published = versions
    add_paper_to_library(user=bob, data=preprint.file.read(), filename="bob-preprint.pdf")
    add_paper_to_library(user=bob, data=published.file.read(), filename="bob-published.pdf")

    work = choose_primary_version(user=bob, paper=preprint)
    assert (work.primary, work.versions, work.chosen) == (preprint, (published,), True)
    assert get_work_for_user(alice, preprint.pk).primary == published
    choose_primary_version(user=alice, paper=preprint)
    choose_primary_version(user=alice, paper=published)
    assert get_work_for_user(alice, preprint.pk).primary == published
    assert get_work_for_user(bob, published.pk).primary == preprint


def test_a_supplement_is_attached_to_its_work_and_never_a_version(alice, versions):
    preprint, published = versions
    supplement = library_file(alice, "si", title="Widgets", doc_key="arxiv:2101.00001", is_supplement=True)
    work = get_work_for_user(alice, supplement.pk)
    assert (work.primary, work.versions, work.supplements) == (published, (preprint,), (supplement,))
    assert supplement.display_title == "Supplement to Widgets"
    with pytest.raises(NotAVersionError):
        choose_primary_version(user=alice, paper=supplement)
    alone = library_file(alice, "si 2", title="Supporting Information", doc_key="doi:10.1/x", is_supplement=True)
    assert get_work_for_user(alice, alone.pk).primary == alone
    assert Paper.objects.in_library_of(alice).get(pk=alone.pk).display_title == "Supplement: Supporting Information"


def test_the_library_page_lists_a_work_with_its_versions_and_supplements(alice, versions, client_for):
    preprint, published = versions
    library_file(alice, "si", title="Widgets", doc_key="arxiv:2101.00001", is_supplement=True)
    client = client_for(alice)

    page = client.get(reverse("papers:library")).content.decode()
    assert page.count('class="card paper-card"') == 1
    assert "Other version (1): not read by questions" in page
    assert reverse("papers:make_primary", args=[preprint.pk]) in page
    assert reverse("papers:make_primary", args=[published.pk]) not in page
    assert "Supplement to Widgets" in page

    response = client.post(reverse("papers:make_primary", args=[preprint.pk]), follow=True)
    assert "now read this version" in response.content.decode()
    assert get_work_for_user(alice, preprint.pk).primary == preprint
    assert reverse("papers:make_primary", args=[published.pk]) in response.content.decode()
    assert "(your choice)" in response.content.decode()


def test_the_works_api_lists_and_chooses(alice, versions, api_client_for):
    preprint, published = versions
    supplement = library_file(alice, "si", title="Widgets", doc_key="arxiv:2101.00001", is_supplement=True)
    api = api_client_for(alice)

    [work] = api.get(reverse("api:library-works")).json()
    assert work["key"] == "arxiv:2101.00001"
    assert (work["primary"]["id"], work["chosen"]) == (published.pk, False)
    assert [p["id"] for p in work["versions"]] == [preprint.pk]
    assert [(p["id"], p["title"], p["is_supplement"]) for p in work["supplements"]] == [
        (supplement.pk, "Supplement to Widgets", True)
    ]
    assert api.get(reverse("api:library-works"), {"year": 1999}).json() == []
    listed = {p["id"]: p["doc_key"] for p in api.get(reverse("api:library")).json()}
    assert listed == dict.fromkeys((preprint.pk, published.pk, supplement.pk), "arxiv:2101.00001")

    response = api.post(reverse("api:library-paper-primary", args=[preprint.pk]))
    assert response.status_code == HTTPStatus.OK
    assert (response.json()["primary"]["id"], response.json()["chosen"]) == (preprint.pk, True)
    assert api.get(reverse("api:library-paper-work", args=[supplement.pk])).json()["primary"]["id"] == preprint.pk

    refused = api.post(reverse("api:library-paper-primary", args=[supplement.pk]))
    assert refused.status_code == HTTPStatus.BAD_REQUEST
    assert refused.json()["error"]["code"] == "supplement_not_a_version"


def test_another_users_paper_is_404_on_the_new_endpoints(alice, bob, mallory, versions, api_client_for, client_for):
    preprint, published = versions
    for outsider in (bob, mallory):
        api = api_client_for(outsider)
        assert api.get(reverse("api:library-paper-work", args=[preprint.pk])).status_code == HTTPStatus.NOT_FOUND
        assert api.post(reverse("api:library-paper-primary", args=[preprint.pk])).status_code == HTTPStatus.NOT_FOUND
        page = client_for(outsider).post(reverse("papers:make_primary", args=[preprint.pk]))
        assert page.status_code == HTTPStatus.NOT_FOUND
        assert api.get(reverse("api:library-works")).json() == []
    assert get_work_for_user(alice, preprint.pk).primary == published
    assert api_client_for(alice).get(reverse("api:library-paper-work", args=[10**9])).status_code == 404


# --- retrieval against the real chunk index -------------------------------------------------------


@pytest.fixture
def work_files(chunk_store):
    """The PDFs of one work: a preprint, the published paper and its supporting information, each
    sharing the DOI (generated once, so a second library gets the same bytes)."""
    return {
        "preprint": make_pdf_bytes(PREPRINT_PAGES),
        "published": make_pdf_bytes(PUBLISHED_PAGES),
        "supplement": make_pdf_bytes(SUPPLEMENT_PAGES),
    }


def _indexed(user, data: bytes, filename: str) -> Paper:
    return index_paper(paper_id=stored_paper(user, data, filename).pk)


@pytest.fixture
def work_project(alice, work_files):
    """alice's project "Sprockets" holding the three files of the work, each indexed from its PDF."""
    papers = {name: _indexed(alice, data, f"{name}.pdf") for name, data in work_files.items()}
    project = create_project(owner=alice, name="Sprockets")
    add_papers_to_project(project=project, papers=list(papers.values()), user=alice)
    return project, papers


def versions_in(paper_ids: set[int], papers: dict[str, Paper]) -> set[str]:
    """Which versions of the work ("preprint", "published") *paper_ids* hold."""
    return {name for name in ("preprint", "published") if papers[name].pk in paper_ids}


def test_indexing_keys_the_versions_and_recognises_the_supplement(alice, work_project):
    _, papers = work_project
    assert {paper.doc_key for paper in papers.values()} == {f"doi:{DOI}"}
    assert [papers[name].is_supplement for name in ("preprint", "published", "supplement")] == [False, False, True]
    assert papers["published"].venue == "Journal of Sprocket Engineering"
    assert papers["supplement"].title == "Sprocket Alignment with Deep Widgets"
    work = get_work_for_user(alice, papers["supplement"].pk)
    assert (work.primary, work.versions, work.supplements) == (
        papers["published"],
        (papers["preprint"],),
        (papers["supplement"],),
    )


def test_a_full_text_match_in_a_supplement_shows_on_its_works_card_and_opens_the_supplement(
    alice, mallory, work_project, client_for, api_client_for
):
    _, papers = work_project
    supplement = papers["supplement"]

    response = client_for(alice).get(reverse("papers:library"), {"q": "calibration torque"})

    [(work, (file, match))] = response.context["entries"]
    assert work.primary == papers["published"] and file == supplement and match.page == 1
    assert match.match.lower() == "calibration torque"
    page = response.content.decode()
    assert f'href="{reverse("papers:reader", args=[supplement.pk])}?page=1&amp;quote=calibration%20torque"' in page
    [listed] = api_client_for(alice).get(reverse("api:library-works"), {"q": "calibration torque"}).json()
    assert (listed["primary"]["id"], listed["text_match"]["paper_id"]) == (papers["published"].pk, supplement.pk)
    assert client_for(mallory).get(reverse("papers:library"), {"q": "calibration torque"}).context["entries"] == []


def test_two_versions_of_one_work_are_retrieved_once(work_project):
    project, papers = work_project
    every_file = retrieve_passages(papers=list(papers_as_added(project)), question=ALIGN)
    # Without works both versions would be quoted: the test can fail.
    assert versions_in({ref.paper_id for ref in every_file.references}, papers) == {"preprint", "published"}

    retrieval = search_project(project=project, query=ALIGN)
    assert versions_in({ref.paper_id for ref in retrieval.references}, papers) == {"published"}


def test_choosing_the_primary_switches_the_version_whose_passages_come_back(alice, work_project, api_client_for):
    project, papers = work_project
    api = api_client_for(alice)
    assert api.post(reverse("api:library-paper-primary", args=[papers["preprint"].pk])).status_code == 200

    found = api.get(reverse("api:search"), {"q": ALIGN, "project_id": project.pk}).json()["passages"]
    assert versions_in({passage["paper_id"] for passage in found}, papers) == {"preprint"}
    page = api_client_for(alice).get(reverse("api:library-paper-work", args=[papers["published"].pk])).json()
    assert page["primary"]["id"] == papers["preprint"].pk


def test_the_supplement_is_searched_and_cited_under_its_own_label(alice, work_project):
    project, papers = work_project
    choose_primary_version(user=alice, paper=papers["preprint"])  # never drops the supplement
    supplement = papers["supplement"]
    correct_paper_metadata(user=alice, paper=supplement, changes={"authors": "Ada Lovelace, Charles Babbage"})
    answer = answer_question(project=project, user=alice, question=TORQUE, chat=True)

    cited = [ref for ref in answer.references if ref.paper_id == supplement.pk]
    assert cited
    assert cited[0].title == "Supplement to Sprocket Alignment with Deep Widgets"
    assert "42 newton metres" in answer.text
    message = ChatMessage.objects.filter(role=ChatMessage.Role.ASSISTANT).get()
    citation = next(c for c in message.citations.values() if c["paper_id"] == supplement.pk)
    assert citation["label"] == "Supplement to Sprocket Alignment with Deep Widgets"
    assert citation["cite"] == "(Lovelace 2021, supplement, p. 1)"
    assert "Supplement to Sprocket Alignment" in citation["bibtex"]


def test_each_member_s_choice_holds_for_the_versions_they_added(alice, bob, work_files, work_project, client_for):
    alices_project, papers = work_project
    for name in ("preprint", "published"):
        add_paper_to_library(user=bob, data=work_files[name], filename=f"bob-{name}.pdf")
    choose_primary_version(user=bob, paper=papers["preprint"])
    bobs_project = create_project(owner=bob, name="Bob's sprockets")
    add_papers_to_project(project=bobs_project, papers=[papers["preprint"], papers["published"]], user=bob)
    lab = create_project(owner=alice, name="Lab")
    add_member(project=lab, user=bob, role="writer")
    add_papers_to_project(project=lab, papers=[papers["preprint"], papers["published"]], user=bob)

    def retrieved(project) -> set[str]:
        return versions_in({ref.paper_id for ref in search_project(project=project, query=ALIGN).references}, papers)

    assert retrieved(alices_project) == {"published"}  # bob's choice is not alice's
    assert retrieved(bobs_project) == {"preprint"}
    assert retrieved(lab) == {"preprint"}  # the adder's choice, whoever asks
    page = client_for(alice).get(reverse("projects:detail", args=[lab.pk])).content.decode()
    assert page.count("Another version of this work is read by questions instead.") == 1


def test_the_shared_case_supplement_stays_apart_and_a_renamed_copy_is_one_file(alice, chunk_store):
    main = _indexed(alice, shared_case("main.pdf").read_bytes(), "main.pdf")
    supplement = _indexed(alice, shared_case("main_SI.pdf").read_bytes(), "main_SI.pdf")
    again = add_paper_to_library(user=alice, data=shared_case("main.pdf").read_bytes(), filename="renamed.pdf")
    assert (again.paper, again.already_in_library) == (main, True)

    assert main.doc_key == supplement.doc_key == "doi:10.5555/invented.chem.2022.0137"
    assert (main.is_supplement, supplement.is_supplement) == (False, True)
    work = get_work_for_user(alice, main.pk)
    assert (work.primary, work.versions, work.supplements) == (main, (), (supplement,))
    project = create_project(owner=alice, name="Oxides")
    add_papers_to_project(project=project, papers=[main, supplement], user=alice)
    references = search_project(project=project, query="How was the annealing furnace calibrated?").references
    labels = {ref.paper_id: ref.title for ref in references}
    assert labels.get(supplement.pk) == "Supplement to Low-Temperature Synthesis of Layered Oxides"
