"""Text extraction you can trust: the labelled extraction set (tests/support/extraction_cases.py),
per-page quality and its warning on the paper, printed page numbers, and the real papers."""

from __future__ import annotations

import io
import re
from http import HTTPStatus
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse
from fpdf import FPDF

from indexing.chunking import split_sentences
from indexing.pdf import PdfGarbledError, extract_metadata, extract_text, page_ranges
from indexing.services import index_paper
from papers.models import Paper
from tests.conftest import shared_paper
from tests.support.extraction_cases import CASES, FAILING_CASES, FIRST_PRINTED_PAGE, HEADER, partial_scan
from tests.support.indexing import stored_paper


def folded(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def write_case(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / f"{name}.pdf"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_labelled_case_reads_as_a_reader_reads_it(name, tmp_path):
    case = CASES[name]
    for needed in case.needs:
        if not needed.exists():
            pytest.skip(f"{needed} is not on this machine")
    text = extract_text(write_case(tmp_path, name, case.build()))
    assert [report.status for report in text.reports] == case.statuses
    assert [folded(page) for page in text.pages] == [folded(page) for page in case.expected]


@pytest.mark.parametrize("name", sorted(FAILING_CASES))
def test_a_pdf_whose_glyphs_map_to_no_letters_is_refused_as_garbled(name, tmp_path):
    build, code = FAILING_CASES[name]
    with pytest.raises(PdfGarbledError) as raised:
        extract_text(write_case(tmp_path, name, build()))
    assert raised.value.code == code
    assert "cannot be read" in raised.value.message and "page 1" in raised.value.message


def test_an_off_centre_two_column_page_never_splices_the_columns_into_one_sentence(tmp_path):
    text = extract_text(write_case(tmp_path, "two", CASES["off-centre-two-columns"].build()))
    page = folded(text.pages[0])
    assert "before a new leader accepts writes from clients." in page
    assert page.index("Beta column") > page.rindex("Alpha column")
    assert text.reports[0].columns == 2


def test_three_columns_are_read_left_to_right(tmp_path):
    text = extract_text(write_case(tmp_path, "three", CASES["three-columns"].build()))
    page = folded(text.pages[0])
    assert page.rindex("Alpha") < page.index("Gamma") < page.rindex("Gamma") < page.index("Beta")
    assert text.reports[0].columns == 3


def test_running_headers_stay_out_of_the_text_and_give_the_printed_page_numbers(tmp_path):
    text = extract_text(write_case(tmp_path, "headers", CASES["running-headers"].build()))
    assert not any(HEADER.split(" · ")[0] in page or "Licensed" in page for page in text.pages)
    assert [report.printed for report in text.reports] == [str(FIRST_PRINTED_PAGE + i) for i in range(4)]


def test_pages_that_repeat_the_same_text_keep_it(tmp_path, make_pdf):
    # Every line recurs on every page, so every line looks like a running header or footer; it is
    # the pages' content all the same.
    pages = ["Raft elects a single leader for each term.\nAn entry is committed once a majority stored it."] * 6
    path = tmp_path / "repeated.pdf"
    path.write_bytes(make_pdf(pages))
    text = extract_text(path)
    assert all("elects a single leader" in page and "committed once" in page for page in text.pages)


GOSSIP = (
    "Gossip protocols spread membership updates between nodes. Each node forwards every update to three "
    "random peers, so an update reaches the whole cluster within a few rounds. The fanout of three was "
    "chosen to balance bandwidth against convergence time."
)
FANOUT = (
    "Each node forwards every update to three random peers, so an update reaches the whole cluster within a few rounds."
)
ASIDES = [
    "Membership lists are kept in memory and written to disk once a minute.",
    "Failure detection relies on heartbeats that every node sends each second.",
    "The evaluation ran on a cluster of forty machines in one data centre.",
]


@pytest.mark.parametrize(
    "pages",
    [
        pytest.param([GOSSIP] * 4, id="one-paragraph-on-every-page"),
        pytest.param([f"{FANOUT} {aside}" for aside in ASIDES], id="a-sentence-opening-each-page"),
        pytest.param([f"{FANOUT}\n{aside}" for aside in ASIDES], id="a-sentence-on-its-own-lines-atop-each-page"),
    ],
)
def test_body_text_that_repeats_at_the_top_and_bottom_of_pages_is_kept(tmp_path, make_pdf, pages):
    # Its first and last lines recur at the edges of every page like a running header, but a
    # sentence wraps into and out of them: they are the pages' prose.
    path = tmp_path / "gossip.pdf"
    path.write_bytes(make_pdf(pages))
    text = extract_text(path)
    assert all(FANOUT in folded(page) for page in text.pages)


def test_running_lines_stay_out_of_pages_whose_body_repeats(tmp_path):
    pdf = FPDF()
    pdf.set_auto_page_break(auto=False)
    for _ in range(4):
        pdf.add_page()
        pdf.set_font("Helvetica", size=8)
        pdf.text(20, 12, HEADER)
        pdf.set_font("Helvetica", size=11)
        pdf.set_xy(20, 30)
        pdf.multi_cell(170, 6, GOSSIP)
    path = tmp_path / "gossip.pdf"
    path.write_bytes(bytes(pdf.output()))
    pages = extract_text(path).pages
    assert all(FANOUT in folded(page) and HEADER.split(" · ")[0] not in page for page in pages)


@pytest.mark.django_db
def test_a_paper_that_repeats_its_paragraph_on_every_page_is_quoted_in_answers(alice, indexed_paper):
    from chat.services import answer_question
    from projects.services import add_papers_to_project, create_project

    project = create_project(owner=alice, name="Gossip")
    paper = indexed_paper(alice, [GOSSIP] * 4, title="Gossip")
    add_papers_to_project(project=project, papers=[paper], user=alice)

    answer = answer_question(project=project, user=alice, question="Why was the fanout of three chosen?")

    assert answer.status == "answered"
    assert "“The fanout of three was chosen to balance bandwidth against convergence time.”" in answer.text


def test_a_short_body_line_that_recurs_mid_page_on_a_one_column_paper_is_kept(tmp_path, make_pdf):
    # Short lines anywhere on a page are running-line candidates only where columns put a footer
    # mid-text; on one column this recurring line is the papers' own sentence.
    body = [
        "Reef surveys continued through the season and the divers noted recovery of the reef after "
        "the bleaching event of the previous summer, with more growth on the sheltered side."
    ] * 6
    pages = [
        "\n".join(
            [*body, f"At the northern transect the team counted {8 + n}", "juvenile corals per square metre.", *body]
        )
        for n in range(5)
    ]
    path = tmp_path / "coral.pdf"
    path.write_bytes(make_pdf(pages))
    assert all("juvenile corals per square metre" in page for page in extract_text(path).pages)


def test_page_reports_name_the_script_and_the_rotation(tmp_path):
    arabic = CASES["arabic"]
    if not arabic.needs[0].exists():
        pytest.skip("no Arabic font")
    text = extract_text(write_case(tmp_path, "arabic", arabic.build()))
    assert text.reports[0].script == "Arabic"
    rotated = extract_text(write_case(tmp_path, "rotated", CASES["rotated-table"].build()))
    assert rotated.reports[0].rotated_share == 1.0


def test_page_ranges_name_runs_of_pages():
    assert page_ranges([3]) == "page 3"
    assert page_ranges([3, 4]) == "pages 3\u20134"
    assert page_ranges([1, 3, 5, 6, 7]) == "pages 1, 3 and 5\u20137"


def test_sentences_split_at_latin_and_cjk_full_stops():
    assert split_sentences("Raft elects a leader. It replicates, e.g. the log.") == [
        "Raft elects a leader.",
        "It replicates, e.g. the log.",
    ]
    chinese = "共识需要多数派。领导者复制日志\uff01为什么\uff1f"
    assert split_sentences(chinese) == ["共识需要多数派。", "领导者复制日志\uff01", "为什么\uff1f"]
    assert split_sentences("「これはペンです。」次の文です。") == ["「これはペンです。」", "次の文です。"]


# --- the paper: status, warning, where it is shown ----------------------------------------------------


def index_bytes(user, data: bytes, filename: str) -> Paper:
    paper = stored_paper(user, data, filename)
    try:
        return index_paper(paper_id=paper.pk)
    except Exception:
        return Paper.objects.get(pk=paper.pk)


@pytest.fixture
def scanned_half(alice, chunk_store):
    """alice's paper whose pages 3-4 are images of text, indexed."""
    return index_bytes(alice, partial_scan(), "glacier.pdf")


@pytest.mark.django_db
def test_a_partial_scan_is_ready_with_a_warning_naming_the_unread_pages(scanned_half):
    paper = scanned_half
    assert paper.index_status == Paper.IndexStatus.READY
    assert paper.extraction_warning.startswith("pages 3\u20134 have no text layer")
    assert paper.extraction_warning.endswith("are not searched")
    assert paper.unreadable_pages == [3, 4]
    assert [entry["status"] for entry in paper.page_report] == ["ok", "ok", "image_only", "image_only"]
    assert paper.unreadable_pages_note() == f"2 pages of {paper.display_title} could not be read"


@pytest.mark.django_db
def test_the_warning_is_on_the_status_chip_in_the_reader_and_in_the_api(alice, scanned_half, client_for):
    client = client_for(alice)
    library = client.get(reverse("papers:library")).content.decode()
    assert 'class="chip-warning" role="note">pages 3\u20134 have no text layer' in library
    reader = client.get(reverse("papers:reader", args=[scanned_half.pk])).content.decode()
    assert "Not searched: pages 3\u20134 have no text layer" in reader
    api = client.get(f"/api/papers/{scanned_half.pk}/")
    assert api.status_code == HTTPStatus.OK
    assert api.json()["extraction_warning"] == scanned_half.extraction_warning


@pytest.mark.django_db
def test_staff_see_the_warning_in_the_admin(staff, scanned_half, client_for):
    page = client_for(staff).get(reverse("admin:papers_paper_changelist")).content.decode()
    assert "pages 3\u20134 have no text layer" in page


@pytest.mark.django_db
def test_check_index_notes_the_pages_left_out_without_failing(scanned_half):
    out = io.StringIO()
    call_command("check_index", stdout=out)
    assert f"[note] paper {scanned_half.pk} ({scanned_half}): pages 3\u20134 have no text layer" in out.getvalue()


@pytest.mark.django_db
def test_a_paper_read_whole_has_no_warning_and_no_note(alice, chunk_store, make_pdf):
    paper = index_bytes(alice, make_pdf(["Raft elects a leader for each term by majority vote."] * 2), "raft.pdf")
    assert paper.index_status == Paper.IndexStatus.READY
    assert (paper.extraction_warning, paper.unreadable_pages, paper.unreadable_pages_note()) == ("", [], "")


@pytest.mark.django_db
def test_a_one_word_retraction_is_indexed_not_sent_to_ocr(alice, chunk_store, make_pdf):
    paper = index_bytes(alice, make_pdf(["Retracted."]), "retracted.pdf")
    assert paper.index_status == Paper.IndexStatus.READY, paper.index_error
    assert paper.page_report[0]["status"] == "little_text"
    assert paper.extraction_warning == ""


@pytest.mark.django_db
def test_a_garbled_paper_fails_with_its_reason_and_no_garbage_title(alice, chunk_store):
    build, _ = FAILING_CASES["unmapped-glyphs"]
    paper = index_bytes(alice, build(), "garbled.pdf")
    assert paper.index_status == Paper.IndexStatus.FAILED
    assert paper.index_error.startswith("The PDF's text cannot be read")
    assert "fl" not in paper.title


@pytest.mark.django_db
def test_the_reader_shows_the_printed_page_number_beside_the_physical_one(alice, chunk_store, client_for):
    paper = index_bytes(alice, CASES["running-headers"].build(), "gossip.pdf")
    assert paper.page_label(2) == f"p. 2 (printed {FIRST_PRINTED_PAGE + 1})"
    assert paper.printed_page(9) == ""
    page = client_for(alice).get(reverse("papers:reader", args=[paper.pk]) + "?page=2").content.decode()
    assert f"Page 2 of 4 (printed {FIRST_PRINTED_PAGE + 1})" in page


# --- the real papers ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["storage/bigtable.pdf", "storage/mapreduce.pdf"])
def test_ligatures_named_by_the_font_read_as_letters_in_real_papers(name):
    text = extract_text(shared_paper(name))
    words = set(re.findall(r"[a-z]+", " ".join(text.pages).lower()))
    assert {"first", "different", "efficient"} <= words
    assert not words & {"rst", "specic", "dierent", "ecient"}
    assert "flfl" not in " ".join(text.pages)


def test_a_running_header_of_a_real_paper_stays_out_of_its_pages():
    pages = extract_text(shared_paper("storage/mapreduce.pdf")).pages
    assert not any("To appear in OSDI 2004" in page for page in pages)


def test_printed_journal_page_numbers_of_a_real_paper_are_read():
    text = extract_text(shared_paper("scholarly-reading/s2orc.pdf"))
    assert [report.printed for report in text.reports[:3]] == ["4969", "4970", "4971"]
    assert extract_metadata(text).title == "S2ORC: The Semantic Scholar Open Research Corpus"


@pytest.mark.parametrize("name", ["consensus/raft.pdf", "storage/gfs.pdf", "scholarly-reading/citesee.pdf"])
def test_no_page_of_a_real_paper_is_taken_for_garbled_or_a_scan(name):
    reports = extract_text(shared_paper(name)).reports
    assert {report.status for report in reports} <= {"ok", "little_text"}
    assert all(report.script == "Latin" for report in reports if report.chars > 200)


@pytest.mark.django_db(transaction=True)
def test_an_answer_about_a_partly_scanned_paper_says_which_pages_could_not_be_read(alice, scanned_half):
    from chat.services import answer_question
    from projects.services import add_papers_to_project, create_project

    project = create_project(owner=alice, name="Glaciers")
    add_papers_to_project(project=project, papers=[scanned_half], user=alice)

    answer = answer_question(project=project, user=alice, question="What fanout do the authors use?")

    assert "fanout of three" in answer.text
    assert f"Note: 2 pages of {scanned_half.display_title} could not be read" in answer.text
