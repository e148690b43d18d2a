"""`manage.py ensure_indexes`: create the chunk index's MongoDB indexes (idempotent)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from indexing import store


class Command(BaseCommand):
    help = "Create the MongoDB indexes of the paperchunks and paperpacks collections (safe to run again)."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            names = store.ensure_indexes()
        except store.ChunkStoreError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(
            f"Chunk index ready: {store.COLLECTION} and {store.PACK_COLLECTION} indexes {', '.join(names)}."
        )
