"""derivatives.yaml as the installed torch ships it, read here with PyYAML alone.

The tests compare what GradGuard shows with the yaml's own text, so they read the
file themselves rather than through torchgen, which the generator uses.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import torchgen
import yaml

PATH = Path(torchgen.__file__).parent / "packaged" / "autograd" / "derivatives.yaml"


@cache
def entries() -> dict[str, dict[str, Any]]:
    """Entry name (``mul.Tensor``) -> the yaml's mapping for it."""
    loaded = yaml.safe_load(PATH.read_text("utf-8"))
    return {str(entry["name"]).split("(", 1)[0]: entry for entry in loaded}


def _argument_names(schema: str) -> set[str]:
    inside = schema[schema.index("(") + 1: schema.rindex(") ->")]
    names = set()
    for argument in inside.split(","):
        argument = argument.split("=", 1)[0].strip()
        if argument and argument != "*":
            names.add(argument.split()[-1])
    return names


def backward_lines(name: str) -> dict[str, str]:
    """The yaml's backward formulas of one entry: key (``self``, ``input, weight``) ->
    formula, for the dense kernels (``dispatch: Default:`` where the entry has one).

    Keys naming arguments are backward formulas, unless they only declare those arguments
    ``non_differentiable``; the other keys are the entry's schema, its output
    differentiability, or forward-mode formulas (keyed by the outputs)."""
    entry = entries()[name]
    arguments = _argument_names(entry["name"])
    formulas = entry.get("dispatch", {}).get("Default", entry)
    return {key: value for key, value in formulas.items()
            if all(part.strip() in arguments for part in re.split(",", key))
            and value != "non_differentiable"}
