"""The papers app's own signals, for the layers above it to react to (see `indexing.receivers`).

Papers know nothing of who listens. A paper saved or deleted one at a time already sends Django's
`post_save` / `post_delete`; the signals here cover the paths that send none.
"""

from django.dispatch import Signal

# Sent by `Paper.objects.bulk_create` (which sends no `post_save`), with `objs`: the list of Paper
# rows it created (their `pk` is set on PostgreSQL and SQLite).
papers_bulk_created = Signal()
