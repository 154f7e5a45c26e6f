"""Freeing the head of an output file keeps its length and every byte after the head."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gradguard.probe.holes import free_head


@pytest.mark.skipif(sys.platform != "linux", reason="punching holes is checked on Linux")
def test_the_head_is_released_and_the_tail_and_the_length_stay(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_bytes(b"a" * 3_000_000 + b"tail")
    with open(path, "r+b") as file:
        assert free_head(file.fileno(), 2_000_000)
        file.seek(0, os.SEEK_END)
        file.write(b" and more")  # the writer goes on at its own end
    data = path.read_bytes()
    assert len(data) == 3_000_000 + len(b"tail and more")
    assert data.endswith(b"a" * 1000 + b"tail and more")
    assert data[:1000] == bytes(1000)
    assert path.stat().st_blocks * 512 < 1_500_000  # the head's blocks went back


def test_nothing_to_free_is_not_a_hole(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_bytes(b"short")
    with open(path, "r+b") as file:
        assert not free_head(file.fileno(), 0)
    assert path.read_bytes() == b"short"
