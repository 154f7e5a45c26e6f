"""Python's cyclic garbage collector, moved out of the way of typing.

A document's analysis state is millions of objects (parse trees, cached results). A
full collection walks all of them, about 200 ms for a 7,000-line file, and fires every
few edits as each one leaves new long-lived objects behind: it landed inside keystroke
analyses at random. Instead, everything alive after an analysis is frozen (left out of
collections; freed objects are still freed at once by reference counting), and only
when the session has been quiet for a while is everything unfrozen and collected, to
reclaim the cycles that became garbage meanwhile.

Before the freeze, the objects the analysis itself made (all that is not frozen yet)
are collected: a collection walks only those, well under a millisecond for a keystroke,
and the cycles an analysis leaves behind (the worlds of the roots it ran again) are
most of what a session of typing would otherwise pile up until the pause, and keep as
resident memory after it, since freed memory is seldom handed back to the system.
"""

from __future__ import annotations

import gc

QUIET_S = 2.0


def after_analysis() -> None:
    """Runs on the analysis thread once an analysis is done."""
    gc.collect()
    gc.freeze()


def collect_all() -> None:
    """Runs on the analysis thread when no edit came for ``QUIET_S`` seconds."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
