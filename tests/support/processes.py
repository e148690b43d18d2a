"""Finding the processes a command left behind (Linux /proc): by session, for commands started in a
new session, and by a text in their command line, for the detached ones (the embedded chunk index
runs in a session of its own)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


def session_processes(session_id: int) -> list[str]:
    """`pid command` of every live process in session *session_id*."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        if int(fields[3]) == session_id and fields[0] != "Z":
            found.append(f"{stat.parent.name} {text[text.index('(') + 1 : text.rindex(')')]}")
    return found


def processes_mentioning(text: str) -> list[str]:
    """`pid command line` of every live process whose command line contains *text*."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if text in command and state != "Z":
            found.append(f"{entry.name} {command.strip()}")
    return found


def wait_for_none(find: Callable[[], list[str]], timeout: float = 60) -> list[str]:
    """Call *find* until it finds nothing or *timeout* seconds pass; what it found last."""
    deadline = time.monotonic() + timeout
    while (left := find()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def wait_for_no_processes(session_id: int, timeout: float = 60) -> list[str]:
    """Wait up to *timeout* seconds for session *session_id* to empty; what is left in it."""
    return wait_for_none(lambda: session_processes(session_id), timeout)
