"""`./run bench --load`: sizes it cannot run and a production profile without PostgreSQL are refused
before any server starts; clients are split evenly across the Daphne processes; the report shows
every Daphne process; results at the default sizes are committed, others are not; Ctrl-C during a
production run leaves no process, database or Redis key behind. (The benchmark itself is timed and
lives in benchmarks/, not here.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest
import redis

from benchmarks.load import DEFAULT_SIZES, main, render, result_name, servers_for
from tests.support.processes import processes_mentioning, session_processes, wait_for_no_processes, wait_for_none
from tests.support.production import WAIT_SECONDS, admin_url_for_tests, unreachable

ROOT = Path(__file__).resolve().parent.parent
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


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


def test_an_operator_without_postgresql_is_told_before_anything_starts(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--profile", "production", "--postgres", "postgres://postgres@127.0.0.1:1/postgres"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "The production profile needs PostgreSQL and Redis. PostgreSQL is not reachable at 127.0.0.1" in err
    assert "Starting" not in err


@pytest.mark.parametrize("clients", [1, 2, 5, 50, 201])
def test_clients_are_split_evenly_across_the_daphne_processes(clients: int) -> None:
    urls = ["http://127.0.0.1:8001", "http://127.0.0.1:8002"]
    assigned = servers_for(clients, urls)
    assert len(assigned) == clients
    shares = Counter(assigned)
    assert set(shares) <= set(urls)
    assert max(shares.values()) - min(shares[url] for url in urls) <= 1
    assert servers_for(len(urls), urls) == urls  # the warm-up reaches every process


def test_one_server_takes_every_client() -> None:
    assert servers_for(3, ["http://127.0.0.1:8001"]) == ["http://127.0.0.1:8001"] * 3


def _scenario(clients: int, questions: int, memory: list[dict[str, int]]) -> dict[str, Any]:
    timing = {"p50": 0.5, "p95": 1.25, "max": 2.0}
    return {
        "clients": clients,
        "questions_each": questions,
        "answers_expected": clients * questions,
        "answers_done": clients * questions - 1,
        "refused_connections": 0,
        "errors": {"connection_closed": 1},
        "unfinished_answers": 1,
        "wall_seconds": 4.0,
        "answers_per_second": 2.5,
        "answer_start_s": timing,
        "first_token_s": timing,
        "answer_done_s": {"p50": None, "p95": None, "max": None},
        "event_loop_lag_s": {"p50": 0.001, "p95": 0.002, "max": 0.004},
        "daphne_memory_kb": memory,
    }


def _results(profile: str, memory: list[dict[str, int]]) -> dict[str, Any]:
    return {
        "profile": profile,
        "machine": "x86_64, 2 cores, Python 3.11.7",
        "load_average_before": [1.0, 2.0, 3.0],
        "load_average_after": [1.5, 2.0, 3.0],
        "limits": {"USER_QUESTIONS_PER_MINUTE": "0"},
        "setup_seconds": 12.4,
        "daphne_memory_idle_kb": [{"VmRSS": m["VmRSS"] // 2, "VmHWM": m["VmHWM"] // 2} for m in memory],
        "warmup": _scenario(len(memory), 1, memory),
        "one_each": _scenario(10, 1, memory),
        "several_each": _scenario(4, 2, memory),
        "cold_ask_s": [4.44, 2.25],
    }


def test_the_production_report_shows_the_memory_of_both_daphne_processes() -> None:
    memory = [{"VmRSS": 600 * 1024, "VmHWM": 650 * 1024}, {"VmRSS": 500 * 1024, "VmHWM": 512 * 1024}]
    report = render(_results("production", memory))
    assert "Production profile: PostgreSQL, the Redis channel layer, two Daphne processes" in report
    assert "Daphne idle: 300, 250 MB RSS." in report
    rows = [line for line in report.splitlines() if line.startswith("| ") and "x" in line.split("|")[1]]
    assert [row.split("|")[1].strip() for row in rows] == ["2 x 1 (warm-up, cold model)", "10 x 1", "4 x 2"]
    for row in rows:
        cells = [cell.strip() for cell in row.split("|")[1:-1]]
        assert len(cells) == 11
        assert cells[-1] == "600 (650), 500 (512)"
    timings = "0.50 / 1.25 / 2.00 | 0.50 / 1.25 / 2.00 | - / - / -"
    assert f"| 10 x 1 | 9 / 10 | 0 | connection_closed: 1 | 1 | {timings} |" in report
    assert "| 2.50 | 1.00 / 2.00 / 4.00 |" in report
    assert "first 4.4 s, second 2.2 s." in report


def test_the_embedded_report_shows_its_one_daphne_process() -> None:
    report = render(_results("embedded", [{"VmRSS": 600 * 1024, "VmHWM": 650 * 1024}]))
    assert "Embedded default: SQLite, the embedded chunk index, one `db_worker`, one Daphne" in report
    assert "Daphne idle: 300 MB RSS." in report
    assert report.count("| 600 (650) |") == 3


@pytest.mark.parametrize(
    ("profile", "sizes", "stem", "command"),
    [
        ("embedded", (200, 50, 5), "load", "./run bench --load"),
        ("production", (200, 50, 5), "load-production", "./run bench --load --profile production"),
        (
            "production",
            (10, 4, 2),
            "load-production-10-4x2",
            "./run bench --load --profile production --clients 10 --askers 4 --questions 2",
        ),
        ("embedded", (10, 4, 2), "load-10-4x2", "./run bench --load --clients 10 --askers 4 --questions 2"),
    ],
)
def test_results_at_the_default_sizes_are_committed_and_others_are_not(
    profile: str, sizes: tuple[int, int, int], stem: str, command: str
) -> None:
    assert result_name(profile, *sizes) == (stem, command)
    paths = [f"benchmarks/results/{stem}.{ext}" for ext in ("md", "json")]
    ignored = subprocess.run(["git", "check-ignore", *paths], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert ignored == ([] if sizes == DEFAULT_SIZES else paths)


def test_ctrl_c_during_a_production_run_leaves_no_process_database_or_redis_keys(tmp_path: Path) -> None:
    admin = admin_url_for_tests()
    problem = unreachable(admin, REDIS_URL)
    if problem:
        pytest.skip(problem)
    log = tmp_path / "stderr.log"
    options = ["--clients", "1", "--askers", "1", "--questions", "1", "--postgres", admin, "--redis", REDIS_URL]
    with log.open("wb") as err:
        run = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.load", "--profile", "production", *options],
            cwd=ROOT,
            env={**os.environ, "TMPDIR": str(tmp_path)},  # its temporary folder, named by its processes
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            # Ctrl-C must reach it even when this run was started with SIGINT ignored (a background job).
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    deadline = time.monotonic() + WAIT_SECONDS
    try:
        # Every server and worker answers before the sample paper is indexed.
        while "Indexing the sample paper" not in log.read_text() and run.poll() is None:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert run.poll() is None, log.read_text()
        assert len(session_processes(run.pid)) >= 5  # this run, two Daphne, two workers (and setup)
        assert processes_mentioning(str(tmp_path))  # the chunk index
        os.killpg(run.pid, signal.SIGINT)  # what Ctrl-C in its terminal sends
        run.wait(timeout=120)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode != 0
    assert "KeyboardInterrupt" in log.read_text()
    assert wait_for_no_processes(run.pid) == []
    # The detached ones (the chunk index; a PDF parser, which stops when its reader is gone) too.
    assert wait_for_none(lambda: processes_mentioning(str(tmp_path)), 30) == []
    assert list(tmp_path.iterdir()) == [log]  # the data directory is gone
    with psycopg.connect(admin, autocommit=True) as connection:
        name = f"annotagent_load_{run.pid}"
        assert connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchall() == []
    assert redis.Redis.from_url(REDIS_URL).dbsize() == 0
