"""The projects app's own signals, for the layers above it to react to (see `indexing.receivers`).

Projects know nothing of who listens. A project link saved one at a time already sends Django's
`post_save`; the signals here cover the paths that send none, and requests that are not row changes.
"""

from django.dispatch import Signal

# Sent by `ProjectPaper.objects.bulk_create`, which sends no `post_save`, with `objs`: the list of
# ProjectPaper rows it was given. Many-to-many adds (`project.papers.add(...)`) go through it too.
links_bulk_created = Signal()

# Sent by `projects.services.reprocess_paper` with `paper`: the paper's text should be read again
# (a retry after a failure, or a staff re-index). Sent inside the service's transaction.
reprocess_requested = Signal()
