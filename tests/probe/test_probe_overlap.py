"""Which writes can touch a saved tensor: the tracker's storage arithmetic, against torch.

A write shares elements with a saved tensor only if some element is in both; views
of one storage that interleave (the gate chunks of an LSTM cell, a matrix's columns)
share a byte range but no element. And a write is visible to autograd only through a
tensor sharing the saved one's version counter (views and ``detach()`` do, ``.data``
and ``unsafe_split`` outputs do not).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from gradguard.probe.tracker import shares_elements, shares_version_counter  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.slow]


def marked_by_hand(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Every element of ``a`` marked in a copy of the storage, then looked up from ``b``."""
    size = a.untyped_storage().nbytes() // a.element_size()
    marks = torch.zeros(size, dtype=torch.bool)
    marks.as_strided(a.shape, a.stride(), a.storage_offset()).fill_(True)
    return bool(marks.as_strided(b.shape, b.stride(), b.storage_offset()).any())


@st.composite
def two_views(draw: st.DrawFn) -> tuple[torch.Tensor, torch.Tensor]:
    shape = tuple(draw(st.integers(1, 7)) for _ in range(3))
    base = torch.zeros(shape)

    def view() -> torch.Tensor:
        index = []
        for size in shape:
            start = draw(st.integers(0, size - 1))
            stop = draw(st.integers(start + 1, size))
            index.append(slice(start, stop, draw(st.integers(1, 3))))
        picked = base[tuple(index)]
        return picked.transpose(0, 2) if draw(st.booleans()) else picked

    first = view()
    if draw(st.booleans()):  # the same layout somewhere else: the chunks of a cell
        extent = sum((n - 1) * s for n, s in zip(first.shape, first.stride(), strict=True))
        offset = draw(st.integers(0, base.numel() - 1 - extent))
        return first, base.as_strided(first.shape, first.stride(), offset)
    return first, view()


@settings(max_examples=400, deadline=None)
@given(two_views())
def test_shared_elements_are_exactly_the_ones_marked_by_hand(
        views: tuple[torch.Tensor, torch.Tensor]) -> None:
    a, b = views
    assert shares_elements(a, b) == marked_by_hand(a, b)
    assert shares_elements(b, a) == marked_by_hand(a, b)


def test_the_gate_chunks_of_a_cell_share_a_byte_range_but_no_element() -> None:
    gates = torch.randn(4, 12)
    chunks = gates.unsafe_chunk(3, 1)
    assert not shares_elements(chunks[0], chunks[1])
    assert shares_elements(chunks[0], gates)


def test_views_and_detach_share_the_version_counter_data_and_unsafe_chunks_do_not() -> None:
    x = torch.randn(4, 12)
    assert shares_version_counter(x[:, 1:3], x)
    assert shares_version_counter(x.detach(), x)
    assert not shares_version_counter(x.data, x)
    assert not shares_version_counter(x.unsafe_chunk(3, 1)[0], x)
    before = x._version
    shares_version_counter(x[0], x)
    assert x._version == before  # telling them apart leaves no trace
