"""Metamorphic tests (issue 28): code transformations that keep what a program computes,
applied to every corpus case, rule case and family case. A finding must not depend on
the shape the code happens to be written in.

Each transformation is a libcst rewrite in one of the modules below, its docstring says
what it rewrites; ``TRANSFORMATIONS`` lists them all. ``variants.py`` applies them,
``static.py`` scores ``gradguard check`` on the results, ``judge.py`` runs them under
torch (``python -m bench.accuracy --metamorphic``).
"""

from tests.metamorphic import layer_choice, ops_moved, split_files, training, values, wrapping
from tests.metamorphic.base import Transformation

TRANSFORMATIONS: list[Transformation] = [
    *ops_moved.TRANSFORMATIONS,
    *values.TRANSFORMATIONS,
    *layer_choice.TRANSFORMATIONS,
    *wrapping.TRANSFORMATIONS,
    *split_files.TRANSFORMATIONS,
    *training.TRANSFORMATIONS,
]
BY_NAME = {t.name: t for t in TRANSFORMATIONS}
