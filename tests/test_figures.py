"""Figures and tables: found by their captions, cropped to PNG (indexing.figures), stored with the
paper at indexing (papers.services.replace_figures), listed in the reader and the API, served only
to those who may read the paper, and shown in citation hover cards."""

from __future__ import annotations

import io
from datetime import timedelta
from http import HTTPStatus
from pathlib import Path

import pytest
from django.urls import reverse
from PIL import Image
from rest_framework.test import APIClient

from chat.models import ChatMessage
from chat.services import answer_question
from chat.templatetags.chat_tags import with_citations
from indexing.figures import extract_figures
from indexing.services import index_paper
from papers.figures import first_mentioned, mentioned_labels
from papers.models import Figure
from papers.storage import orphan_files
from projects.services import add_papers_to_project, create_project, remove_paper_from_library
from tests.conftest import shared_paper
from tests.support.indexing import stored_paper
from tests.support.pdfs import (
    RASTER_CAPTION_TOP,
    RASTER_IMAGE,
    TABLE_CAPTION_TOP,
    TABLE_RULES,
    VECTOR_CAPTION_TOP,
    VECTOR_DRAWING,
    figure_pdf_bytes,
)

DPI = 150


def _covers(crop, drawing, *, slack: float = 0.0) -> bool:
    return (
        crop[0] <= drawing[0] + slack
        and crop[1] <= drawing[1] + slack
        and crop[2] >= drawing[2] - slack
        and crop[3] >= drawing[3] - slack
    )


def _png_size(data: bytes) -> tuple[int, int]:
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG"
    image.load()
    return image.size


@pytest.fixture
def figure_pdf(tmp_path) -> Path:
    path = tmp_path / "figures.pdf"
    path.write_bytes(figure_pdf_bytes())
    return path


# --- cropping ---------------------------------------------------------------------------------------


def test_a_vector_figure_is_cropped_above_its_caption_without_the_body_text(figure_pdf):
    figures = {figure.label: figure for figure in extract_figures(figure_pdf, dpi=DPI)}

    figure = figures["Figure 1"]
    assert (figure.page, figure.kind) == (1, "figure")
    assert figure.caption == "Figure 1: A client and a server, drawn with vector shapes."
    assert _covers(figure.bbox, VECTOR_DRAWING)
    # Not the paragraph above (it ends near 72 + 4 lines of 12 pt) nor the caption below.
    assert figure.bbox[1] > 125 and figure.bbox[3] < VECTOR_CAPTION_TOP
    assert figure.bbox[2] - figure.bbox[0] < 320  # the drawing's width, not the text's 468 pt
    width, height = _png_size(figure.png)
    assert (width, height) == (figure.width, figure.height)
    assert abs(width - (figure.bbox[2] - figure.bbox[0]) * DPI / 72) <= 2
    assert abs(height - (figure.bbox[3] - figure.bbox[1]) * DPI / 72) <= 2


def test_a_raster_figure_is_cropped_to_its_image(figure_pdf):
    figures = {figure.label: figure for figure in extract_figures(figure_pdf, dpi=DPI)}

    figure = figures["Figure 2"]  # printed "Fig. 2." in bold
    assert (figure.page, figure.caption) == (2, "Fig. 2. A raster gradient image.")
    assert _covers(figure.bbox, RASTER_IMAGE)
    assert figure.bbox[3] < RASTER_CAPTION_TOP
    assert figure.bbox[2] - figure.bbox[0] < (RASTER_IMAGE[2] - RASTER_IMAGE[0]) + 10
    width, height = _png_size(figure.png)
    assert abs(width - 300 * DPI / 72) <= 12 and abs(height - 150 * DPI / 72) <= 12
    # The gradient is there: its left edge is dark red-free, its right edge red.
    pixels = Image.open(io.BytesIO(figure.png)).convert("RGB")
    assert pixels.getpixel((width - 10, height // 2))[0] > pixels.getpixel((10, height // 2))[0] + 150


def test_a_table_is_cropped_below_its_caption(figure_pdf):
    (table,) = [figure for figure in extract_figures(figure_pdf) if figure.kind == "table"]

    assert (table.label, table.page) == ("Table 1", 1)
    assert table.caption == "Table 1: Measured latencies of two operations."
    assert _covers(table.bbox, TABLE_RULES, slack=1)
    assert table.bbox[1] > TABLE_CAPTION_TOP + 9 and table.bbox[3] < 560


def test_a_mention_in_the_body_text_is_not_a_caption(figure_pdf):
    # The prose says "As Figure 1 shows," on every page: still one Figure 1, the captioned one.
    labels = [figure.label for figure in extract_figures(figure_pdf)]

    assert labels == ["Figure 1", "Table 1", "Figure 2"]


def test_the_number_of_figures_and_their_size_are_capped(figure_pdf):
    figures = extract_figures(figure_pdf, max_figures=2, max_pixels=120)

    assert [figure.label for figure in figures] == ["Figure 1", "Table 1"]
    assert all(max(_png_size(figure.png)) <= 120 for figure in figures)


def test_the_gfs_paper_yields_its_architecture_figure():
    figures = {figure.label: figure for figure in extract_figures(shared_paper("storage/gfs.pdf"))}

    figure = figures["Figure 1"]
    assert figure.page == 3
    assert figure.caption == "Figure 1: GFS Architecture"
    # The diagram spans most of the page's width above its caption (at 212 pt), below the page top.
    x0, top, x1, bottom = figure.bbox
    assert x1 - x0 > 350 and 40 < top < 70 and 190 < bottom < 212
    assert {"Table 1", "Figure 2", "Figure 3", "Table 6"} <= set(figures)
    assert figures["Table 1"].caption == "Table 1: File Region State After Mutation"


# --- labels -----------------------------------------------------------------------------------------


def test_mentions_are_read_as_labels():
    text = "As Fig. 3 and Table II show (see also Figures 4a, 5 and FIGURE S1), Table 2 summarizes it."

    assert mentioned_labels(text) == ["Figure 3", "Table II", "Figure 4", "Figure S1", "Table 2"]
    assert mentioned_labels("Figure I and table 3 and Fig.12") == ["Figure 12"]
    assert first_mentioned(["", "Table 2 and Figure 3"], {"Figure 3", "Figure 1"}) == "Figure 3"
    assert first_mentioned(["Figure 9"], {"Figure 3"}) is None


# --- stored with the paper --------------------------------------------------------------------------


@pytest.fixture
def paper_with_figures(alice, chunk_store):
    paper = stored_paper(alice, figure_pdf_bytes(), "figures.pdf")
    return index_paper(paper_id=paper.pk)


@pytest.mark.django_db
def test_indexing_stores_the_figures_with_the_paper(paper_with_figures, settings):
    figures = list(Figure.objects.of_papers([paper_with_figures.pk]))

    assert [(f.label, f.page_number, f.kind) for f in figures] == [
        ("Figure 1", 1, "figure"),
        ("Table 1", 1, "table"),
        ("Figure 2", 2, "figure"),
    ]
    first = figures[0]
    assert first.caption.startswith("Figure 1: A client")
    assert _covers(first.bbox, VECTOR_DRAWING)
    sha = paper_with_figures.sha256
    assert first.image.name.startswith(f"figures/{sha[:2]}/{sha}/")
    assert _png_size(Path(settings.MEDIA_ROOT, first.image.name).read_bytes()) == (first.width, first.height)


@pytest.mark.django_db
def test_reindexing_replaces_the_figures_and_their_files(
    paper_with_figures, settings, django_capture_on_commit_callbacks
):
    old = {f.pk: Path(settings.MEDIA_ROOT, f.image.name) for f in Figure.objects.filter(paper=paper_with_figures)}

    with django_capture_on_commit_callbacks(execute=True):
        index_paper(paper_id=paper_with_figures.pk)

    new = list(Figure.objects.filter(paper=paper_with_figures))
    assert len(new) == 3 and not {f.pk for f in new} & set(old)
    assert not any(path.exists() for path in old.values())
    assert all(Path(settings.MEDIA_ROOT, f.image.name).exists() for f in new)


@pytest.mark.django_db
def test_figures_can_be_turned_off(alice, chunk_store, settings):
    settings.FIGURES_MAX_PER_PAPER = 0
    paper = index_paper(paper_id=stored_paper(alice, figure_pdf_bytes(), "figures.pdf").pk)

    assert paper.index_status == "ready"
    assert not Figure.objects.filter(paper=paper).exists()


@pytest.mark.django_db
def test_removing_the_last_copy_of_a_paper_deletes_its_figure_files(
    alice, paper_with_figures, settings, django_capture_on_commit_callbacks
):
    files = [Path(settings.MEDIA_ROOT, f.image.name) for f in Figure.objects.filter(paper=paper_with_figures)]
    assert files and all(path.exists() for path in files)

    with django_capture_on_commit_callbacks(execute=True):
        remove_paper_from_library(user=alice, paper=paper_with_figures)

    assert not Figure.objects.exists()
    assert not any(path.exists() for path in files)


@pytest.mark.django_db
def test_a_figure_file_no_row_holds_is_an_orphan(paper_with_figures, settings):
    figure = Figure.objects.filter(paper=paper_with_figures).first()
    stray = Path(settings.MEDIA_ROOT, Path(figure.image.name).parent, "stray.png")
    stray.write_bytes(b"not a figure")

    orphans = orphan_files(grace=timedelta(0))

    assert orphans == [str(stray.relative_to(settings.MEDIA_ROOT))]


# --- shown to those who may read the paper ----------------------------------------------------------


@pytest.mark.django_db
def test_the_reader_lists_the_figures_with_links_to_their_pages(alice, paper_with_figures, client_for):
    response = client_for(alice).get(reverse("papers:reader", args=[paper_with_figures.pk]))

    html = response.content.decode()
    assert "Figures and tables (3)" in html
    table = Figure.objects.get(paper=paper_with_figures, label="Table 1")
    assert f'src="{reverse("papers:figure", args=[paper_with_figures.pk, table.pk])}"' in html
    assert f'href="{reverse("papers:reader", args=[paper_with_figures.pk])}?page=1"' in html
    assert "Table 1: Measured latencies of two operations." in html


@pytest.mark.django_db
def test_the_image_is_served_to_readers_and_a_404_to_anyone_else(
    alice, bob, carol, mallory, team_project, paper_with_figures, client_for, settings
):
    figure = Figure.objects.get(paper=paper_with_figures, label="Figure 2")
    url = reverse("papers:figure", args=[paper_with_figures.pk, figure.pk])

    response = client_for(alice).get(url)
    assert response.status_code == HTTPStatus.OK
    assert response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content) == Path(settings.MEDIA_ROOT, figure.image.name).read_bytes()

    assert client_for(mallory).get(url).status_code == HTTPStatus.NOT_FOUND
    assert client_for(carol).get(url).status_code == HTTPStatus.NOT_FOUND
    # Under the URL of a paper mallory may read, alice's figure id is still not found.
    other = stored_paper(mallory, figure_pdf_bytes(prose="Other text " * 20), "other.pdf")
    response = client_for(mallory).get(reverse("papers:figure", args=[other.pk, figure.pk]))
    assert response.status_code == HTTPStatus.NOT_FOUND

    add_papers_to_project(project=team_project, papers=[paper_with_figures], user=alice)
    assert client_for(carol).get(url).status_code == HTTPStatus.OK  # a reader of the project holding it


@pytest.mark.django_db
def test_the_api_lists_the_figures_with_image_urls(alice, mallory, paper_with_figures, api_client_for):
    response = api_client_for(alice).get(f"/api/papers/{paper_with_figures.pk}/figures/")

    assert response.status_code == HTTPStatus.OK
    body = response.json()
    assert [(f["label"], f["page"], f["kind"]) for f in body] == [
        ("Figure 1", 1, "figure"),
        ("Table 1", 1, "table"),
        ("Figure 2", 2, "figure"),
    ]
    first = Figure.objects.get(paper=paper_with_figures, label="Figure 1")
    assert body[0]["image_url"] == reverse("papers:figure", args=[paper_with_figures.pk, first.pk])
    assert body[0]["reader_url"].endswith("?page=1")
    assert body[0]["caption"] == first.caption and len(body[0]["bbox"]) == 4
    assert api_client_for(mallory).get(f"/api/papers/{paper_with_figures.pk}/figures/").status_code == 404


@pytest.mark.django_db
def test_a_project_reader_gets_the_paper_as_well_as_its_figures(
    alice, carol, mallory, team_project, paper_with_figures, api_client_for
):
    paths = [f"/api/papers/{paper_with_figures.pk}/", f"/api/papers/{paper_with_figures.pk}/figures/"]
    assert [api_client_for(carol).get(path).status_code for path in paths] == [404, 404]
    add_papers_to_project(project=team_project, papers=[paper_with_figures], user=alice)
    assert [api_client_for(carol).get(path).status_code for path in paths] == [200, 200]
    assert api_client_for(carol).get(paths[0]).json()["id"] == paper_with_figures.pk
    assert [api_client_for(mallory).get(path).status_code for path in paths] == [404, 404]


@pytest.mark.django_db
def test_the_apis_image_url_serves_a_token_reader_and_a_404_to_anyone_else(
    alice, mallory, paper_with_figures, api_client_for
):
    figures = f"/api/papers/{paper_with_figures.pk}/figures/"
    url = api_client_for(alice).get(figures).json()[0]["image_url"]
    figure = Figure.objects.get(paper=paper_with_figures, label="Figure 1")

    response = api_client_for(alice).get(url)

    assert response.status_code == HTTPStatus.OK and response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content) == figure.image.open("rb").read()
    assert api_client_for(mallory).get(url).status_code == HTTPStatus.NOT_FOUND
    refused = APIClient(HTTP_AUTHORIZATION="Token not-a-token").get(url)
    assert refused.status_code == HTTPStatus.UNAUTHORIZED and refused["WWW-Authenticate"] == "Token"
    assert refused.json()["error"]["code"] == "authentication_failed"
    assert APIClient().get(url).status_code == HTTPStatus.FOUND  # signed out, no token: to sign in


# --- citation hover cards ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_cited_passage_that_mentions_a_figure_carries_it_to_the_hover_card(alice, paper_with_figures):
    project = create_project(owner=alice, name="Figures")
    add_papers_to_project(project=project, papers=[paper_with_figures], user=alice)

    answer_question(
        project=project, user=alice, question="How do replicated state machines keep servers in agreement?", chat=True
    )

    message = ChatMessage.objects.get(role=ChatMessage.Role.ASSISTANT)
    cards = [c["figure"] for c in message.citations.values() if "figure" in c]
    figure = Figure.objects.get(paper=paper_with_figures, label="Figure 1")
    assert cards and cards[0] == {
        "url": reverse("papers:figure", args=[paper_with_figures.pk, figure.pk]),
        "label": "Figure 1",
        "page": 1,
    }
    html = str(with_citations(message.text, message.citations))
    assert f'<img class="citation-figure" src="{cards[0]["url"]}" alt="Figure 1" loading="lazy">' in html


def test_a_saved_figure_outside_the_site_is_not_shown():
    citation = {"paper_id": 1, "title": "T", "page": 1, "figure": {"url": "https://example.org/x.png", "label": "F"}}

    assert "<img" not in str(with_citations("Claim [1].", {"1": citation}))
