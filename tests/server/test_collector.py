"""The garbage collector: frozen after analyses, cycles reclaimed once quiet."""

from __future__ import annotations

import gc
import weakref

from gradguard.server import collector


class _Node:
    def __init__(self) -> None:
        self.partner: _Node | None = None


def test_what_lives_through_an_analysis_is_frozen_and_cycles_are_reclaimed_later() -> None:
    try:
        first, second = _Node(), _Node()
        first.partner, second.partner = second, first
        alive = weakref.ref(first)
        collector.after_analysis()
        assert gc.get_freeze_count() > 0

        del first, second  # a cycle: reference counting alone never frees it
        gc.collect()
        assert alive() is not None  # frozen: left alone by collections

        collector.collect_all()
        assert alive() is None
    finally:
        gc.unfreeze()
