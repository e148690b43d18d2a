"""`manage.py demo`: which folder it reads, and a folder without PDFs still gives a demo user."""

from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from indexing.management.commands.demo import demo_papers_dir

SAMPLE = Path(__file__).resolve().parent.parent / "sample_papers"


def test_the_shipped_sample_is_the_default_without_a_shared_corpus(tmp_path):
    assert demo_papers_dir(None, defaults=[tmp_path / "shared" / "papers" / "consensus", SAMPLE]) == SAMPLE
    assert any(path.suffix == ".pdf" for path in SAMPLE.iterdir())


def test_a_shared_corpus_with_pdfs_comes_before_the_sample(tmp_path):
    (tmp_path / "consensus").mkdir()
    (tmp_path / "consensus" / "raft.pdf").write_bytes(b"%PDF-1.4")
    assert demo_papers_dir(None, defaults=[tmp_path / "consensus", SAMPLE]) == tmp_path / "consensus"


def test_a_configured_folder_wins_even_when_empty(tmp_path):
    assert demo_papers_dir(tmp_path, defaults=[SAMPLE]) == tmp_path


def test_the_sample_is_credited_in_the_notice():
    notice = (SAMPLE.parent / "NOTICE").read_text()
    assert "sample_papers/s2orc.pdf" in notice
    assert "CC BY 4.0" in notice


@pytest.mark.django_db
@pytest.mark.parametrize("folder", ["empty", "missing"])
def test_a_folder_without_pdfs_gives_the_demo_user_an_empty_library(tmp_path, settings, folder):
    papers = tmp_path / folder
    if folder == "empty":
        papers.mkdir()
    settings.DEMO_PAPERS_DIR = papers
    out, err = StringIO(), StringIO()
    call_command("demo", stdout=out, stderr=err)
    assert "No PDFs found" in err.getvalue()
    assert ("no such folder" in err.getvalue()) == (folder == "missing")
    assert authenticate(username=settings.DEMO_USERNAME, password=settings.DEMO_PASSWORD) is not None
