"""The shipped formula texts (facts/data/derivatives.json) are derivatives.yaml's own.

The hover shows these texts as "derivatives.yaml says"; they must be the yaml's words,
key for key, for every entry an aten op of the tables runs.
"""

from __future__ import annotations

from gradguard.facts import load
from gradguard.facts.formulas import load_formulas
from tests.derivatives_yaml import backward_lines, entries

FORMULAS = load_formulas()


def test_every_shipped_formula_is_the_yaml_text_of_its_entry() -> None:
    differ = []
    for name, formula in FORMULAS.items():
        shipped = {line.of: line.formula for line in formula.backward}
        if shipped != backward_lines(name):
            differ.append(name)
    assert differ == []


def test_every_aten_op_with_a_formula_written_in_the_yaml_has_its_text_shipped() -> None:
    named = {op.formula for op in load().aten.values() if op.formula is not None}
    assert {name for name in named if name in entries()} <= set(FORMULAS)
    assert len(FORMULAS) > 500


def test_a_formula_says_which_tensors_it_reads() -> None:
    (sigmoid,) = FORMULAS["sigmoid"].backward
    assert (sigmoid.of, sigmoid.formula, sigmoid.keeps) == \
        ("self", "sigmoid_backward(grad, result)", ("result",))
    by_argument = {line.of: line.keeps for line in FORMULAS["mul.Tensor"].backward}
    # x * y: y's gradient needs x, and x's needs y.
    assert by_argument == {"self": ("other",), "other": ("self",)}
    # Only sizes and options of its input: nothing is kept.
    assert [line.keeps for line in FORMULAS["sum"].backward] == [()]
