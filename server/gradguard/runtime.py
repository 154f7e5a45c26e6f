"""Process settings for running the analysis (shared by ``check`` and ``serve``)."""

from __future__ import annotations

import gc


def fewer_collections() -> None:
    """Python's cyclic collector, run less often: an analysis allocates millions of small
    objects, most freed at once by reference counting, while each full collection walks
    every parsed tree kept for later (a third of ``check``'s time on torchvision's tree
    with the default thresholds)."""
    gc.set_threshold(50_000, 50, 100)
