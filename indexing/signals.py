"""Signals indexing sends for the apps above it (indexing never imports them).

`paper_indexed`: a paper's new chunks are live (its row names their version); sent by
`indexing.services.index_paper` after the swap, with `paper` (the refreshed row). Receivers only
react (warm caches); a failing receiver is logged and never fails the build.
"""

from django.dispatch import Signal

paper_indexed = Signal()
