"""Backward formulas as derivatives.yaml words them, loaded from generated data.

``data/derivatives.json`` is written by ``tools/generate_facts.py`` from the installed
torch's derivatives.yaml (read by torchgen). The analysis never needs the text of a
formula, only what it keeps (``aten_ops.json``); this is for explaining a call to a
person, so it is loaded only when something asks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class BackwardLine:
    """One line of a derivatives.yaml entry: ``of: formula``."""

    # The yaml key: the arguments whose gradient the formula computes (``self``,
    # ``input, weight, bias``).
    of: str
    formula: str
    # The tensors the formula reads, which autograd keeps for it: inputs by argument
    # name, outputs as ``result`` (``result1``...) or by their return names.
    keeps: tuple[str, ...]


@dataclass(frozen=True)
class Formula:
    """One derivatives.yaml entry: the schema it is written for and its backward lines."""

    name: str
    schema: str
    backward: tuple[BackwardLine, ...]

    @property
    def keeps(self) -> tuple[str, ...]:
        """Every tensor some line of it reads, in the order the lines name them."""
        return tuple(dict.fromkeys(k for line in self.backward for k in line.keeps))


@cache
def load_formulas() -> dict[str, Formula]:
    """derivatives.yaml entry name (``mul.Tensor``) -> its formulas."""
    raw = json.loads(resources.files("gradguard.facts").joinpath(
        "data", "derivatives.json").read_text("utf-8"))
    return {
        name: Formula(name=name, schema=entry["schema"], backward=tuple(
            BackwardLine(of=of, formula=formula, keeps=tuple(keeps))
            for of, formula, keeps in entry["backward"]))
        for name, entry in raw["formulas"].items()
    }
