"""`manage.py ask --user USERNAME [--project NAME|ID] "QUESTION" [--json] [--mode MODE] [--chat [--new]]`.

MODE is hybrid, dense or lexical. Without --project the question goes to the user's default
project. The project is resolved and checked like every other path
(`projects.services.get_project_for_user`): asking needs any role.
The status line (and `"project"` in the JSON) names the project asked.

Without --chat the question stands alone and nothing is saved; with --chat it is the next turn of
the project's chat: a follow-up is resolved against the thread, and both turns are appended to it.
--new clears the thread first (as the project page's *Clear chat*: it needs the writer role), so
the question starts a new conversation.
"""

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser, OutputWrapper
from django.test.utils import override_settings

from chat.services import QuestionError, answer_question, check_question, clear_chat
from indexing.embedding_server import use_running_server
from indexing.retrieval import MODES
from projects.management.commands.projects import resolve_project
from projects.models import Role


@contextmanager
def quiet_when_output_closes(stdout: OutputWrapper) -> Iterator[None]:
    """Write to *stdout* inside; when its reader has gone (`ask ... | head -4`), exit with status 1
    and no traceback, as Python's documentation advises for SIGPIPE ("Note on SIGPIPE" in `signal`).

    The output is flushed inside, so a closed pipe is met here rather than at interpreter exit; the
    process's stdout is then pointed at devnull, so that exit's own flush cannot fail again."""
    try:
        yield
        stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)


class Command(BaseCommand):
    # The system checks cost most of a second per run; a question needs none of them.
    requires_system_checks: list[str] = []
    help = (
        "Ask a project a question; print the answer and its references (or JSON with --json, where each "
        "reference also shows its dense rank, lexical rank and fused score, and 'query', the resolved question). "
        "With --chat the question is a turn of the project's chat (follow-ups work, the turn is saved)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question")
        parser.add_argument("--user", required=True)
        parser.add_argument(
            "--project", help="project name or id (one the user is a member of); default: the user's default project"
        )
        parser.add_argument("--json", action="store_true", help="print {answer, mode, references} as JSON")
        parser.add_argument("--mode", choices=MODES, help="retrieval mode (default: the RETRIEVAL_MODE setting)")
        parser.add_argument(
            "--chat", action="store_true", help="ask in the project's chat thread: read its history, append the turn"
        )
        parser.add_argument(
            "--new", action="store_true", help="with --chat: clear the project's chat first (a new conversation)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user named {options['user']!r}.")
        if options["new"] and not options["chat"]:
            raise CommandError("--new starts a new chat conversation: give it with --chat.")
        project = resolve_project(user, options["project"], need=Role.WRITER if options["new"] else Role.READER)
        try:
            question = check_question(options["question"])
        except QuestionError as exc:
            raise CommandError(exc.message) from None
        mode = options["mode"] or settings.RETRIEVAL_MODE
        if options["new"]:
            clear_chat(project=project)
        # A running web server's model answers in milliseconds; loading our own takes seconds.
        use_running_server()
        # The answer workflow reads the mode from settings; the flag is this invocation's setting.
        with override_settings(RETRIEVAL_MODE=mode):
            answer = answer_question(project=project, user=user, question=question, chat=options["chat"])
        references = [
            {"n": ref.n, "paper_id": ref.paper_id, "title": ref.title, "page": ref.page, "text": ref.text}
            | ref.ranking()
            for ref in answer.references
        ]
        with quiet_when_output_closes(self.stdout):
            if options["json"]:
                self.stdout.write(
                    json.dumps(
                        {
                            "answer": answer.text,
                            "query": answer.query,
                            "status": answer.status,
                            "extractive": answer.extractive,
                            "mode": mode,
                            "project": {"id": project.pk, "name": project.name},
                            "references": references,
                        },
                        indent=2,
                    )
                )
                return
            if answer.query and answer.query.strip() != question.strip():
                # A follow-up (--chat) is answered as the standalone question it was resolved to.
                self.stdout.write(f"Asked as: {answer.query}\n")
            self.stdout.write(answer.text + "\n")
            # The project asked, by name: a question asked without --project goes to the default one.
            self.stdout.write(f"Status: {answer.status.replace('_', ' ')} (project {project.name!r})\n")
            for ref in references:
                self.stdout.write(f"[{ref['n']}] {ref['title']}, page {ref['page']}")
