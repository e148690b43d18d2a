"""`manage.py ask --user USERNAME --project NAME "QUESTION" [--json]`."""

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from chat.services import answer_question
from projects.models import Project


class Command(BaseCommand):
    help = "Ask a project a question; print the answer and its references (or JSON with --json)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question")
        parser.add_argument("--user", required=True)
        parser.add_argument("--project", required=True, help="project name")
        parser.add_argument("--json", action="store_true", help="print {answer, references} as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user named {options['user']!r}.")
        project = Project.objects.for_user(user).filter(name=options["project"]).first()
        if project is None:
            raise CommandError(f"{options['user']} has no project named {options['project']!r}.")
        answer = answer_question(project=project, user=user, question=options["question"])
        references = [
            {"n": ref.n, "paper_id": ref.paper_id, "title": ref.title, "page": ref.page, "text": ref.text}
            for ref in answer.references
        ]
        if options["json"]:
            self.stdout.write(json.dumps({"answer": answer.text, "references": references}, indent=2))
            return
        self.stdout.write(answer.text + "\n")
        for ref in references:
            self.stdout.write(f"[{ref['n']}] {ref['title']}, page {ref['page']}")
