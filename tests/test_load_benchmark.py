"""`./run bench --load` refuses sizes it cannot run before starting any server (the benchmark itself
is timed and lives in benchmarks/, not here)."""

from __future__ import annotations

import pytest

from benchmarks.load import main


@pytest.mark.parametrize("argv", [["--clients", "0"], ["--askers", "-1"], ["--questions", "0"]])
def test_an_operator_asking_for_no_sockets_or_questions_is_told_why(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "--clients, --askers and --questions must be at least 1" in capsys.readouterr().err


def test_an_operator_passing_a_word_for_a_size_is_told_it_must_be_a_number(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--clients", "many"])
    assert "invalid int value: 'many'" in capsys.readouterr().err
