"""same_code answers as libcst's deep_equals does, on the differences that matter."""

from __future__ import annotations

import libcst as cst
import pytest

from gradguard.analysis.sameness import same_code

BASE = "class C:\n    def f(self, x):\n        return x + 1  # one\n"


@pytest.mark.parametrize("other", [
    BASE,
    BASE.replace("x + 1", "x + 2"),
    BASE.replace("x + 1", "x  + 1"),
    BASE.replace("# one", "# two"),
    BASE.replace("return", "yield"),
    BASE + "\n",
    BASE.replace("(self, x)", "(self, x, y)"),
])
def test_same_code_agrees_with_deep_equals(other: str) -> None:
    a, b = cst.parse_module(BASE), cst.parse_module(other)

    assert same_code(a, b) == a.deep_equals(b)
    assert same_code(a, b) == (other == BASE)


def test_a_node_is_not_the_same_code_as_a_sequence_or_a_string() -> None:
    name = cst.Name("x")

    assert not same_code(name, [name])
    assert not same_code("x", name)
    assert same_code([name], (cst.Name("x"),))
