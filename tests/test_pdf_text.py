"""Text extraction from real papers: ligatures, unmapped glyphs, reading order of two-column pages."""

import re

from indexing.pdf import extract_metadata, extract_text
from indexing.pdfparse import normalise_text
from tests.conftest import shared_paper


def folded(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"-\n", "", text))


def test_ligatures_read_as_plain_letters():
    assert normalise_text("the \ufb01le system") == "the file system"


def test_typeset_accents_go_back_on_their_letters():
    assert normalise_text("Saier and Fa\u00a8rber (2019)") == "Saier and F\u00e4rber (2019)"
    assert normalise_text("D. Me\u00b4ry, Eds.") == "D. M\u00e9ry, Eds."
    assert normalise_text("this was na\u00a8\u0131ve") == "this was na\u00efve"  # TeX's \\"\\i
    assert normalise_text("a spacing \u00a8 alone") == "a spacing \u0308 alone"


def test_s2orc_names_faerber_whole():
    text = "\n".join(extract_text(shared_paper("scholarly-reading/s2orc.pdf")).pages)
    assert "F\u00e4rber" in text and "Fa \u0308rber" not in text


def test_a_title_set_inside_narrow_margins_keeps_its_first_and_last_words(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()  # margins of 1 cm: every line starts 28 pt from the page edge
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 18)
    title = "HydroNet: Predicting Urban Flash Flooding with Graph Neural Networks"
    pdf.multi_cell(0, 9, title, align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 12)
    pdf.multi_cell(0, 6, "Maria Smith, John Okafor", align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 10)
    pdf.multi_cell(0, 5, "Abstract. " + "We predict street-level flash flooding from rain gauges and drains. " * 8)
    path = tmp_path / "hydronet.pdf"
    pdf.output(str(path))
    metadata = extract_metadata(extract_text(path))
    assert metadata.title == title
    assert metadata.authors == ("Maria Smith", "John Okafor")


def test_unmapped_glyph_codes_are_dropped_never_guessed_as_ligatures():
    assert normalise_text("ef(cid:2)cient (cid:3)ow (cid:99)x") == "efcient ow x"


def test_gfs_uses_ligatures_yet_reads_file_system():
    pages = extract_text(shared_paper("storage/gfs.pdf")).pages
    assert "\ufb01" not in "".join(pages)
    assert "distributed file system" in folded(pages[0])


def test_bigtable_without_a_unicode_map_still_reads_efficient():
    pages = extract_text(shared_paper("storage/bigtable.pdf")).pages
    text = "\n".join(pages)
    assert "(cid:" not in text
    assert "efficient" in text


def test_two_column_page_reads_one_column_at_a_time():
    page = folded(extract_text(shared_paper("storage/gfs.pdf")).pages[0])
    # The abstract (left column) reads on without the introduction (right column) interleaved.
    assert "We have designed and implemented the Google File System, a scalable distributed file system" in page


def test_a_full_width_caption_mid_page_does_not_interleave_the_columns_below_it():
    page = folded(extract_text(shared_paper("consensus/paxos-made-moderately-complex.pdf")).pages[9])
    assert "the value of the timeout interval depends on the ballot number" in page


def test_metadata_comes_from_the_first_page_when_the_pdf_gives_none():
    metadata = extract_metadata(extract_text(shared_paper("consensus/chubby.pdf")))
    assert metadata.title.startswith("The Chubby lock service")
    assert metadata.authors == ("Mike Burrows",)  # without "Google Inc."
    assert metadata.abstract.startswith("We describe our experiences")


def test_a_centred_title_whose_word_gap_falls_on_the_page_centre_reads_as_one_line():
    text = extract_text(shared_paper("storage/gfs.pdf"))
    assert text.pages[0].startswith("The Google File System\n")
    assert extract_metadata(text).title == "The Google File System"


def test_metadata_ignores_an_info_title_the_page_does_not_print_and_lists_all_authors():
    metadata = extract_metadata(extract_text(shared_paper("scholarly-reading/s2orc.pdf")))
    assert metadata.title == "S2ORC: The Semantic Scholar Open Research Corpus"
    assert metadata.authors[:3] == ("Kyle Lo", "Lucy Lu Wang", "Mark Neumann")
    assert metadata.year == 2020


def test_a_title_broken_over_two_lines_is_read_whole():
    metadata = extract_metadata(extract_text(shared_paper("scholarly-reading/papermage.pdf")))
    assert metadata.title.endswith("Representing, and Manipulating Visually-Rich Scientific Documents")


def _page_of(tmp_path, draw) -> str:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", "", 10)
    draw(pdf)
    path = tmp_path / "page.pdf"
    pdf.output(str(path))
    return extract_text(path).pages[0]


def _prose(pdf, text: str) -> None:
    pdf.multi_cell(0, 5, text, new_x="LMARGIN", new_y="NEXT")


def test_a_table_whose_cell_gap_falls_on_the_page_centre_keeps_its_rows_whole(tmp_path):
    def draw(pdf):
        _prose(pdf, "We measured how long leader election took in clusters of different sizes. " * 4)
        _prose(pdf, "Table 2: Election latency by cluster size.")
        for row in [("Cluster size", "Median (ms)", "p99 (ms)"), ("3", "150", "9.5"), ("5", "240", "7")] + [
            (str(n), str(100 * n), str(2 * n)) for n in (7, 9, 11, 13)
        ]:
            pdf.cell(40, 6, row[0])
            pdf.cell(70, 6, row[1])  # the third column starts right of the page centre
            pdf.cell(50, 6, row[2], new_x="LMARGIN", new_y="NEXT")
        _prose(pdf, "Larger clusters took longer because split votes happened more often. " * 4)

    lines = _page_of(tmp_path, draw).splitlines()
    assert "Cluster size Median (ms) p99 (ms)" in lines
    assert "5 240 7" in lines


def test_two_columns_below_full_width_text_still_read_one_column_at_a_time(tmp_path):
    def draw(pdf):
        _prose(pdf, "Full width introduction text that spans the page from margin to margin. " * 14)
        y = pdf.get_y() + 3
        pdf.set_xy(10, y)
        pdf.multi_cell(92, 5, "The left column tells of replicated logs and elections, sentence after sentence. " * 3)
        pdf.set_xy(108, y)
        pdf.multi_cell(92, 5, "The right column speaks of storage tablets and compactions, in words of its own. " * 3)

    page = folded(_page_of(tmp_path, draw))
    assert "The left column tells of replicated logs and elections, sentence after sentence. " * 3 in page + " "
