"""The embedded default under concurrent writers: a live server on one SQLite file, four signed-in
users uploading ten PDFs each while another process writes to the same file as the worker does.
Writers wait for the lock (IMMEDIATE transactions, busy timeout, WAL) instead of failing."""

from __future__ import annotations

import json
import threading
from http import HTTPStatus

import pytest

from tests.support.live_server import SignedIn, live_server, stop
from tests.support.pdfs import make_pdf_bytes

USERS = 4
UPLOADS = 10

# A second process on the database: read, then write, in one transaction, holding the write lock
# for a moment, as the worker does when it saves a paper's status or a task result.
WRITER = """
import time, uuid
from datetime import timedelta
from django.contrib.sessions.models import Session
from django.db import transaction
from django.utils import timezone
from papers.models import Paper
while True:
    with transaction.atomic():
        list(Paper.objects.values_list("pk", flat=True)[:50])
        key = uuid.uuid4().hex
        Session.objects.create(session_key=key, session_data="x", expire_date=timezone.now() + timedelta(days=1))
        time.sleep(0.05)
        Session.objects.filter(session_key=key).delete()
    time.sleep(0.005)
"""

OUTCOME = """
import json
from django.core.files.storage import default_storage
from papers.models import Paper, UserPaper
from papers.storage import orphan_files
from datetime import timedelta
print(json.dumps({
    "papers": Paper.objects.count(),
    "links": {u: UserPaper.objects.filter(user__username=u).count() for u in %r},
    "files": sum(1 for p in Paper.objects.all() if default_storage.exists(p.file.name)),
    "orphans": orphan_files(grace=timedelta(0)),
}))
"""


@pytest.mark.slow
def test_four_users_uploading_while_another_process_writes_never_get_a_500(tmp_path):
    usernames = [f"user{n}" for n in range(USERS)]
    with live_server(tmp_path) as server:
        server.shell(
            "from django.contrib.auth.models import User\n"
            + "".join(f"User.objects.create_user({name!r}, password='pw-{name}-1')\n" for name in usernames)
            + "print('ok')"
        )
        sessions = [SignedIn(server, name, f"pw-{name}-1") for name in usernames]
        files = {
            name: [
                make_pdf_bytes([f"Paper {n} of {name}: on lock contention in embedded databases."])
                for n in range(UPLOADS)
            ]
            for name in usernames
        }
        statuses: dict[str, list[int]] = {name: [] for name in usernames}

        def upload_all(name: str, session: SignedIn) -> None:
            for n, data in enumerate(files[name]):
                status, _ = session.upload("/papers/upload/", f"{name}-{n}.pdf", data)
                statuses[name].append(status)

        writer = server.spawn(WRITER, tmp_path / "writer.log")
        try:
            threads = [threading.Thread(target=upload_all, args=pair) for pair in zip(usernames, sessions, strict=True)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(300)
            assert writer.poll() is None, (tmp_path / "writer.log").read_text()
        finally:
            stop(writer)
        outcome = json.loads(server.shell(OUTCOME % (usernames,)))

    assert statuses == {name: [HTTPStatus.FOUND] * UPLOADS for name in usernames}, server.log_tail()
    assert outcome == {
        "papers": USERS * UPLOADS,
        "links": dict.fromkeys(usernames, UPLOADS),
        "files": USERS * UPLOADS,
        "orphans": [],
    }
