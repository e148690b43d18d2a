"""Exporting a project's references as BibTeX and CSL-JSON (issue 14, library basics)."""

import json
from http import HTTPStatus

import pytest
from django.urls import reverse

from papers.services import add_paper_to_library, choose_primary_version, correct_paper_metadata
from projects.services import add_papers_to_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def lab_with_papers(team_project, alice, add_paper):
    chubby = add_paper(
        alice,
        title="The Chubby lock service for loosely-coupled distributed systems",
        author_list=["Mike Burrows"],
        year=2006,
        venue="OSDI 2006",
        pages="335\u2013350",
        doi="10.5555/1298455.1298487",
    )
    bigtable = add_paper(
        alice,
        title="Bigtable: A Distributed Storage System",
        author_list=["Fay Chang", "Jeffrey Dean"],
        year=2008,
        venue="ACM Transactions on Computer Systems",
    )
    add_papers_to_project(project=team_project, papers=[chubby, bigtable], user=alice)
    return team_project, chubby, bigtable


def test_the_project_page_links_to_both_exports(lab_with_papers, carol, client_for):
    project, _, _ = lab_with_papers
    page = client_for(carol).get(reverse("projects:detail", args=[project.pk])).content.decode()
    assert reverse("projects:references_bib", args=[project.pk]) in page
    assert reverse("projects:references_json", args=[project.pk]) in page


def test_a_member_downloads_bibtex_with_every_paper(lab_with_papers, carol, client_for):
    project, _, _ = lab_with_papers
    response = client_for(carol).get(reverse("projects:references_bib", args=[project.pk]))

    assert response.status_code == HTTPStatus.OK
    assert response["Content-Type"].startswith("application/x-bibtex")
    assert "attachment" in response["Content-Disposition"]
    bib = response.content.decode()
    assert "@inproceedings{burrows2006chubby," in bib
    assert "author = {Fay Chang and Jeffrey Dean}" in bib
    assert "pages = {335--350}" in bib
    assert "booktitle = {OSDI 2006}" in bib
    assert "journal = {ACM Transactions on Computer Systems}" in bib  # Bigtable's journal version: an @article
    assert bib.count("@inproceedings{") == bib.count("@article{") == 1


def test_csl_json_follows_the_schema_fields(lab_with_papers, bob, api_client_for):
    project, chubby, bigtable = lab_with_papers
    response = api_client_for(bob).get(f"/api/projects/{project.pk}/references.json")

    assert response.status_code == HTTPStatus.OK
    items = {item["id"]: item for item in json.loads(response.content)}
    assert items[f"paper-{chubby.pk}"] == {
        "id": f"paper-{chubby.pk}",
        "type": "paper-conference",
        "title": "The Chubby lock service for loosely-coupled distributed systems",
        "author": [{"family": "Burrows", "given": "Mike"}],
        "issued": {"date-parts": [[2006]]},
        "container-title": "OSDI 2006",
        "DOI": "10.5555/1298455.1298487",
        "page": "335-350",
    }
    journal = items[f"paper-{bigtable.pk}"]
    assert journal["type"] == "article-journal"
    assert journal["author"] == [{"family": "Chang", "given": "Fay"}, {"family": "Dean", "given": "Jeffrey"}]


def test_every_member_exports_the_papers_as_the_member_who_added_them_corrected_them(
    lab_with_papers, alice, bob, carol, api_client_for
):
    project, chubby, _ = lab_with_papers  # alice added both papers
    correct_paper_metadata(user=alice, paper=chubby, changes={"year": 2007, "authors": ["Burrows, M."]}, reset=[])

    exports = {
        persona.username: api_client_for(persona).get(f"/api/projects/{project.pk}/references.bib").content.decode()
        for persona in (alice, bob, carol)
    }

    assert "@inproceedings{burrows2007chubby," in exports["alice"] and "author = {Burrows, M.}" in exports["alice"]
    assert exports["bob"] == exports["carol"] == exports["alice"]
    # The corrections stay alice's: the paper's own metadata is untouched.
    chubby.refresh_from_db()
    assert chubby.year == 2006


def test_duplicate_bibtex_keys_are_made_unique(team_project, alice, add_paper, api_client_for):
    first = add_paper(alice, title="Paxos Made Simple", author_list=["Leslie Lamport"], year=2001)
    second = add_paper(alice, title="Paxos Made Simple (slides)", author_list=["Leslie Lamport"], year=2001)
    add_papers_to_project(project=team_project, papers=[first, second], user=alice)

    bib = api_client_for(alice).get(f"/api/projects/{team_project.pk}/references.bib").content.decode()

    assert "@misc{lamport2001paxos," in bib and "@misc{lamport2001paxosb," in bib


def test_an_outsider_gets_404_for_both_exports(lab_with_papers, mallory, client_for, api_client_for):
    project, _, _ = lab_with_papers
    for name in ("projects:references_bib", "projects:references_json"):
        assert client_for(mallory).get(reverse(name, args=[project.pk])).status_code == HTTPStatus.NOT_FOUND
    for suffix in ("bib", "json"):
        url = f"/api/projects/{project.pk}/references.{suffix}"
        assert api_client_for(mallory).get(url).status_code == HTTPStatus.NOT_FOUND


@pytest.fixture
def widgets_versions(team_project, alice, make_pdf):
    """alice's project holding two versions of one arXiv work, the published one added first, and
    the work's supplement: (published, preprint, supplement)."""

    def version(text: str, **fields):
        paper = add_paper_to_library(user=alice, data=make_pdf([text]), filename=f"{text}.pdf").paper
        fields = {"title": "Widgets", "authors": "Ada Lovelace", "year": 2021, "doc_key": "arxiv:2101.00001"} | fields
        for name, value in fields.items():
            setattr(paper, name, value)
        paper.save()
        return paper

    published = version("published", venue="NeurIPS 2021")
    preprint = version("preprint", venue="arXiv", arxiv_id="2101.00001")
    supplement = version("supplement", is_supplement=True)
    add_papers_to_project(project=team_project, papers=[published, preprint, supplement], user=alice)
    return published, preprint, supplement


def test_a_work_in_several_versions_is_one_entry_its_supplement_another(
    team_project, alice, bob, widgets_versions, api_client_for
):
    published, preprint, supplement = widgets_versions
    bib_url = f"/api/projects/{team_project.pk}/references.bib"
    json_url = f"/api/projects/{team_project.pk}/references.json"

    bib = api_client_for(bob).get(bib_url).content.decode()
    items = json.loads(api_client_for(bob).get(json_url).content)

    assert bib.count("title = {{Widgets}}") == 1 and "booktitle = {NeurIPS 2021}" in bib  # the published version
    assert "title = {{Supplement to Widgets}}" in bib and bib.count("@") == 2
    assert [item["id"] for item in items] == [f"paper-{published.pk}", f"paper-{supplement.pk}"]

    choose_primary_version(user=alice, paper=preprint)  # the adder's choice is the version questions read
    bib = api_client_for(bob).get(bib_url).content.decode()
    assert bib.count("title = {{Widgets}}") == 1 and "NeurIPS" not in bib and bib.count("@") == 2
    items = json.loads(api_client_for(bob).get(json_url).content)
    assert [item["id"] for item in items] == [f"paper-{preprint.pk}", f"paper-{supplement.pk}"]
