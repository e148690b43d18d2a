"""`manage.py chunk_index_server {start,stop,status}`: the embedded MongoDB-wire server."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexing import store


class Command(BaseCommand):
    help = (
        "Start, stop or show the embedded chunk-index server (SecantusDB under EMBEDDED_MONGO_DIR). "
        "Any process that needs it starts it on first use; with MONGODB_URI set it is never used."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["start", "stop", "status"])

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.MONGODB_URI:
            raise CommandError("MONGODB_URI is set: the embedded server is not used.")
        action = options["action"]
        if action == "start":
            self.stdout.write(f"Embedded chunk index at {store.ensure_embedded_server()}")
        elif action == "stop":
            stopped = store.stop_embedded_server()
            self.stdout.write("Stopped the embedded chunk index." if stopped else "It was not running.")
        else:
            uri = store.embedded_server_uri()
            self.stdout.write(f"Running at {uri}" if uri else "Not running.")
