"""Load, concurrency and cold start: `python -m benchmarks.load` (`./run bench --load`).

Starts a profile in a temporary folder and indexes the shipped sample paper
(`sample_papers/s2orc.pdf`) into one project per user:

- `--profile embedded` (the default): its own DATA_DIR, SQLite, the embedded chunk index, one
  `db_worker`, one Daphne;
- `--profile production`: the production profile of tests/support/production.py (PostgreSQL, the
  Redis channel layer, two Daphne processes, two `db_worker` processes, one MongoDB-wire chunk index
  shared by all, DEBUG off), with a PostgreSQL database of its own on the server of `--postgres`
  (created and dropped by the run) and the Redis database of `--redis` (flushed before and after).
  Clients are split evenly across the two Daphne processes (in turn).

Then it warms the server (one question on each Daphne process) and measures on
`/ws/projects/<id>/chat/`:

1. `--clients N` sockets (default 200) connecting at once, each asking one question;
2. `--askers M` sockets (default 50) each asking `--questions K` questions (default 5) one after
   another.

Each socket is its own user (own session, own project holding the same paper), and the server runs
with `USER_QUESTIONS_PER_MINUTE=0` (off) and a socket frame budget far above what a client sends, so
the figures are the server's capacity, not its rate limits. Per scenario: refused connections (the
handshake failed or timed out), errors (`error` events and sockets dropped mid-answer), unfinished
answers (no `answer.done` within `ANSWER_TIMEOUT` seconds), seconds from sending the question to
`answer.start` (sent once the references are found), to the first `answer.delta` and to
`answer.done` (p50/p95/max), throughput (answers done per second of the scenario's wall time),
each Daphne process's resident memory at the end and its peak (VmRSS, VmHWM from /proc), and
event-loop lag: the round trip of a WebSocket ping on one idle socket per Daphne process every half
second (Daphne answers pings in its reactor, so a late pong means a busy event loop; the probes'
round trips are pooled). Then the cold `manage.py ask` time, twice (the second with the operating
system's file cache warm), while the servers still run.

The clients run in this process on the same machine as the server, so they take CPU from it; the
machine's load average is recorded before and after. Every process the run starts is stopped at the
end, also on Ctrl-C, SIGTERM or an error. Writes `benchmarks/results/load.md` and `.json`
(production: `load-production.md` and `.json`), or, not committed, `load-N-MxQ.md`/`.json`
(`load-production-N-MxQ`) when the sizes differ from the defaults.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets

from benchmarks.__main__ import percentile
from benchmarks.environment import BASE_DIR, RESULTS_DIR
from tests.support.live_server import live_server, manage, stop
from tests.support.processes import processes_mentioning, wait_for_none
from tests.support.production import production_profile, unreachable

SAMPLE_PAPER = BASE_DIR / "sample_papers" / "s2orc.pdf"
PROJECT = "load"
ANSWER_TIMEOUT = 600.0  # seconds a socket waits for one answer's `answer.done`
CONNECT_TIMEOUT = 60.0  # seconds for the WebSocket handshake and the history event
QUESTIONS = [
    "What is S2ORC?",
    "How many papers does the corpus contain?",
    "How are citations linked to papers?",
    "Which fields of study are covered?",
    "How was the full text extracted from PDFs?",
]
DEFAULT_SIZES = (200, 50, 5)  # --clients, --askers, --questions: the committed results' sizes
POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"
REDIS = "redis://127.0.0.1:6379/14"
PROFILES = {
    "embedded": "Embedded default: SQLite, the embedded chunk index, one `db_worker`, one Daphne",
    "production": "Production profile: PostgreSQL, the Redis channel layer, two Daphne processes (clients split "
    "evenly), two `db_worker` processes, one MongoDB-wire chunk index shared by all (the embedded SecantusDB "
    "server), DEBUG off",
}
# The server's limits, lifted so the benchmark measures capacity (see the module docstring).
LIMITS = {
    "USER_QUESTIONS_PER_MINUTE": "0",
    "CHAT_SOCKET_FRAME_BURST": "100000",
    "CHAT_SOCKET_FRAMES_PER_SECOND": "1000",
}

SETUP = """
import json
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore
from indexing.ingest import ingest_paths
from pathlib import Path

users = []
for i in range({users}):
    user = get_user_model().objects.create(username=f"load{{i}}")
    user.set_unusable_password()
    user.save()
    report = ingest_paths(user=user, paths=[Path({paper!r})], project_name={project!r})
    assert not report.failed, report.failed
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    users.append({{"username": user.username, "session": session.session_key, "project": report.project.pk}})
print(json.dumps(users))
"""


@dataclass
class Tally:
    """What the sockets of one scenario saw (seconds from sending each question)."""

    refused: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    unfinished: int = 0
    done: int = 0
    start: list[float] = field(default_factory=list)
    first_token: list[float] = field(default_factory=list)
    total: list[float] = field(default_factory=list)

    def error(self, code: str) -> None:
        self.errors[code] = self.errors.get(code, 0) + 1


@dataclass
class Servers:
    """The system under load: the base URL and pid of each Daphne process, and the environment
    `manage.py` commands run with against the same database and chunk index."""

    urls: list[str]
    pids: list[int]
    env: dict[str, str]


def servers_for(clients: int, urls: Sequence[str]) -> list[str]:
    """The base URL each of *clients* clients talks to: *urls* in turn, so the servers' shares
    differ by at most one (and a scenario of one client per server reaches every server)."""
    return [urls[i % len(urls)] for i in range(clients)]


async def open_socket(base_url: str, user: dict[str, Any]) -> Any:
    """A signed-in chat socket on *user*'s project at the server *base_url*, its history event read."""
    headers = {"Origin": base_url, "Cookie": f"sessionid={user['session']}"}
    url = base_url.replace("http://", "ws://", 1) + f"/ws/projects/{user['project']}/chat/"
    ws = await asyncio.wait_for(
        websockets.connect(url, additional_headers=headers, open_timeout=None, ping_interval=None, max_size=None),
        CONNECT_TIMEOUT,
    )
    await asyncio.wait_for(ws.recv(), CONNECT_TIMEOUT)  # history
    return ws


async def ask(ws: Any, question: str, tally: Tally) -> bool:
    """Send *question* and read until `answer.done`; False when the socket is no longer usable."""
    sent = time.monotonic()
    await ws.send(json.dumps({"type": "question", "text": question}))
    first = start = None
    deadline = sent + ANSWER_TIMEOUT
    while True:
        try:
            event = json.loads(await asyncio.wait_for(ws.recv(), max(0.0, deadline - time.monotonic())))
        except TimeoutError:
            tally.unfinished += 1
            return False
        except websockets.ConnectionClosed:
            tally.unfinished += 1
            tally.error("connection_closed")
            return False
        kind = event.get("type")
        if kind == "answer.start" and start is None:
            start = time.monotonic() - sent
        elif kind == "answer.delta" and first is None:
            first = time.monotonic() - sent
        elif kind == "error":
            tally.error(str(event.get("code")))
        elif kind == "answer.done":
            tally.done += 1
            tally.total.append(time.monotonic() - sent)
            tally.start.append(start if start is not None else time.monotonic() - sent)
            tally.first_token.append(first if first is not None else time.monotonic() - sent)
            return True


async def client(base_url: str, user: dict[str, Any], questions: list[str], tally: Tally) -> None:
    try:
        ws = await open_socket(base_url, user)
    except (OSError, TimeoutError, websockets.InvalidHandshake, websockets.ConnectionClosed):
        tally.refused += 1
        tally.unfinished += len(questions)
        return
    try:
        for i, question in enumerate(questions):
            if not await ask(ws, question, tally):
                tally.unfinished += len(questions) - i - 1
                return
    finally:
        await ws.close()


async def lag_probe(base_url: str, user: dict[str, Any], lags: list[float], stopped: asyncio.Event) -> None:
    """Round trips of a WebSocket ping on an idle socket, every half second until *stopped*."""
    ws = await open_socket(base_url, user)
    try:
        while not stopped.is_set():
            started = time.monotonic()
            try:
                await asyncio.wait_for(await ws.ping(), ANSWER_TIMEOUT)
            except TimeoutError:
                pass
            lags.append(time.monotonic() - started)
            try:
                await asyncio.wait_for(stopped.wait(), 0.5)
            except TimeoutError:
                pass
    finally:
        await ws.close()


def memory_kb(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) of process *pid*, in kB (Linux /proc)."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


def daphne_pid(port: int) -> int:
    """The Daphne process serving *port* (a child of this run)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(b"daphne" in a for a in argv[:2]) and str(port).encode() in argv:
                return int(entry.name)
    raise RuntimeError(f"no Daphne process on port {port}")


def summary(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None, "max": None}
    return {"p50": percentile(values, 0.5), "p95": percentile(values, 0.95), "max": max(values)}


async def scenario(servers: Servers, users: list[dict[str, Any]], clients: int, questions: int) -> dict[str, Any]:
    """*clients* sockets at once (one user each, split across *servers*), each asking *questions*
    questions in turn; the last of *users* holds the idle lag-probe socket on each server."""
    tally = Tally()
    lags: list[float] = []
    stopped = asyncio.Event()
    probes = [asyncio.create_task(lag_probe(url, users[-1], lags, stopped)) for url in servers.urls]
    started = time.monotonic()
    await asyncio.gather(
        *(
            client(url, users[i], [QUESTIONS[(i + q) % len(QUESTIONS)] for q in range(questions)], tally)
            for i, url in enumerate(servers_for(clients, servers.urls))
        )
    )
    wall = time.monotonic() - started
    stopped.set()
    await asyncio.gather(*probes)
    return {
        "clients": clients,
        "questions_each": questions,
        "answers_expected": clients * questions,
        "answers_done": tally.done,
        "refused_connections": tally.refused,
        "errors": tally.errors,
        "unfinished_answers": tally.unfinished,
        "wall_seconds": wall,
        "answers_per_second": tally.done / wall,
        "answer_start_s": summary(tally.start),
        "first_token_s": summary(tally.first_token),
        "answer_done_s": summary(tally.total),
        "event_loop_lag_s": summary(lags),
        "daphne_memory_kb": [memory_kb(pid) for pid in servers.pids],
    }


def cold_ask(servers: Servers, username: str) -> list[float]:
    """Wall seconds of two `manage.py ask` runs, one after the other."""
    times = []
    for _ in range(2):
        started = time.perf_counter()
        manage(servers.env, "ask", "--user", username, "--project", PROJECT, QUESTIONS[0])
        times.append(time.perf_counter() - started)
    return times


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


@contextmanager
def embedded(base: Path) -> Iterator[Servers]:
    """The embedded default under *base*: one Daphne, one `db_worker`, the embedded chunk index
    (all stopped on exit)."""
    with live_server(base, **LIMITS) as server:
        try:
            with (base / "worker.log").open("wb") as out:
                worker = subprocess.Popen(
                    [sys.executable, "manage.py", "db_worker", "--no-reload"],
                    cwd=BASE_DIR,
                    env=server.env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            try:
                yield Servers([server.base_url], [daphne_pid(int(server.base_url.rsplit(":", 1)[1]))], server.env)
            finally:
                stop(worker)
        finally:
            subprocess.run(
                [sys.executable, "manage.py", "chunk_index_server", "stop"],
                cwd=BASE_DIR,
                env=server.env,
                capture_output=True,
                timeout=60,
            )
            # It stops on its own after SIGTERM; wait for that, so that its folder can be removed.
            wait_for_none(lambda: processes_mentioning(str(base)), 20)


@contextmanager
def production(base: Path, *, postgres: str, redis: str) -> Iterator[Servers]:
    """The production profile under *base*, with database `annotagent_load_<pid>` on the server of
    *postgres* and the Redis database of *redis* (see tests/support/production.py)."""
    with production_profile(
        base, admin_url=postgres, redis_url=redis, database=f"annotagent_load_{os.getpid()}", **LIMITS
    ) as profile:
        yield Servers(
            [f"http://127.0.0.1:{port}" for port in profile.web_ports],
            [profile.processes[f"web{n}"].pid for n in (1, 2)],
            profile.env,
        )


def run(servers: Servers, profile: str, clients: int, askers: int, questions: int) -> dict[str, Any]:
    print("Indexing the sample paper, creating users…", file=sys.stderr, flush=True)
    started = time.perf_counter()
    code = SETUP.format(users=max(clients, askers) + 1, paper=str(SAMPLE_PAPER), project=PROJECT)
    users = json.loads(manage(servers.env, "shell", "-c", code).strip().splitlines()[-1])
    setup_seconds = time.perf_counter() - started
    results: dict[str, Any] = {
        "profile": profile,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average_before": load_average(),
        "limits": LIMITS,
        "setup_seconds": setup_seconds,
        "daphne_memory_idle_kb": [memory_kb(pid) for pid in servers.pids],
    }
    print("Warm-up question…", file=sys.stderr, flush=True)
    results["warmup"] = asyncio.run(scenario(servers, users, len(servers.urls), 1))
    for name, (n, k) in (("one_each", (clients, 1)), ("several_each", (askers, questions))):
        print(f"{n} sockets x {k} questions…", file=sys.stderr, flush=True)
        results[name] = asyncio.run(scenario(servers, users, n, k))
        print(f"  {json.dumps(results[name])}", file=sys.stderr, flush=True)
    print("Cold `manage.py ask`…", file=sys.stderr, flush=True)
    results["cold_ask_s"] = cold_ask(servers, users[0]["username"])
    results["load_average_after"] = load_average()
    return results


def render(results: dict[str, Any]) -> str:
    """The report (Markdown) of *results*, as `run` returns them: the setting, one table row per
    scenario, the cold `ask` times. Memory is one "RSS (peak)" figure per Daphne process, in MB."""

    def seconds(row: dict[str, float | None], scale: float = 1.0) -> str:
        values = (row[k] for k in ("p50", "p95", "max"))
        return " / ".join("-" if value is None else f"{scale * value:.2f}" for value in values)

    def megabytes(memory: list[dict[str, int]], peak: bool = True) -> str:
        return ", ".join(f"{m['VmRSS'] / 1024:.0f}" + (f" ({m['VmHWM'] / 1024:.0f})" if peak else "") for m in memory)

    lines = [
        f"Machine: {results['machine']}; load average (1, 5, 15 min) {results['load_average_before']} before, "
        f"{results['load_average_after']} after (other work shares this machine). {PROFILES[results['profile']]}; "
        "clients in the same machine.",
        "Limits lifted so this measures capacity, not the limiter: "
        + ", ".join(f"{k}={v}" for k, v in results["limits"].items())
        + " (0 = off); every socket is its own user.",
        f"Setup (index the sample paper, create users): {results['setup_seconds']:.0f} s. Daphne idle: "
        f"{megabytes(results['daphne_memory_idle_kb'], peak=False)} MB RSS.",
        "",
        "| scenario | answers done / expected | refused | errors | unfinished | answer.start s p50 / p95 / max "
        "| first token s p50 / p95 / max "
        "| answer done s p50 / p95 / max | answers/s | event-loop lag ms p50 / p95 / max "
        "| Daphne RSS MB (peak), each process |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in ("warmup", "one_each", "several_each"):
        row = results[name]
        errors = ", ".join(f"{k}: {v}" for k, v in row["errors"].items()) or "0"
        lines.append(
            f"| {row['clients']} x {row['questions_each']}{' (warm-up, cold model)' * (name == 'warmup')} | "
            f"{row['answers_done']} / {row['answers_expected']} | {row['refused_connections']} | {errors} | "
            f"{row['unfinished_answers']} | {seconds(row['answer_start_s'])} | {seconds(row['first_token_s'])} | "
            f"{seconds(row['answer_done_s'])} | "
            f"{row['answers_per_second']:.2f} | {seconds(row['event_loop_lag_s'], 1000)} | "
            f"{megabytes(row['daphne_memory_kb'])} |"
        )
    first, second = results["cold_ask_s"]
    lines += [
        "",
        f"Cold `manage.py ask` (a new process, the server running): first {first:.1f} s, second {second:.1f} s.",
    ]
    return "\n".join(lines)


def result_name(profile: str, clients: int, askers: int, questions: int) -> tuple[str, str]:
    """The results file stem (in benchmarks/results/) and the command that makes it: `load` or
    `load-production` at the default sizes (committed), else with the sizes in the name."""
    stem = "load" if profile == "embedded" else f"load-{profile}"
    command = "./run bench --load" + ("" if profile == "embedded" else f" --profile {profile}")
    if (clients, askers, questions) != DEFAULT_SIZES:
        stem += f"-{clients}-{askers}x{questions}"
        command += f" --clients {clients} --askers {askers} --questions {questions}"
    return stem, command


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200, help="sockets asking one question each (200)")
    parser.add_argument("--askers", type=int, default=50, help="sockets asking several questions each (50)")
    parser.add_argument("--questions", type=int, default=5, help="questions per socket of --askers (5)")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="embedded", help="what to start (embedded)")
    parser.add_argument(
        "--postgres",
        default=POSTGRES,
        metavar="URL",
        help=f"production: a PostgreSQL server where the run may create and drop its own database ({POSTGRES})",
    )
    parser.add_argument(
        "--redis",
        default=REDIS,
        metavar="URL",
        help=f"production: a Redis database for this run alone, flushed before and after ({REDIS})",
    )
    args = parser.parse_args(argv)
    if min(args.clients, args.askers, args.questions) < 1:
        parser.error("--clients, --askers and --questions must be at least 1")
    if args.profile == "production" and (problem := unreachable(args.postgres, args.redis)):
        parser.exit(1, f"The production profile needs PostgreSQL and Redis. {problem}\n")
    # SIGTERM unwinds like Ctrl-C, so the servers and the temporary data directory are cleaned up.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    with tempfile.TemporaryDirectory(prefix="annotagent-load-") as tmp:
        base = Path(tmp)
        started = (
            embedded(base) if args.profile == "embedded" else production(base, postgres=args.postgres, redis=args.redis)
        )
        print(f"Starting the {args.profile} profile…", file=sys.stderr, flush=True)
        with started as servers:
            results = run(servers, args.profile, args.clients, args.askers, args.questions)
    report = render(results)
    print(report)
    stem, command = result_name(args.profile, args.clients, args.askers, args.questions)
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / f"{stem}.md").write_text(f"# Load (last run of `{command}`)\n\n{report}\n")
    (RESULTS_DIR / f"{stem}.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
