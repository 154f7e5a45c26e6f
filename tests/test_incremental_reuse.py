"""Which roots an edit re-runs: those that used what changed, and no others.

A root's results hold while every class, function and method it looked up is found the
same; a method of a re-parsed class whose code did not change keeps its node. Whatever
is re-run or kept, the hazards equal those of a fresh analysis of the same text.
"""

from __future__ import annotations

from gradguard.analysis.incremental import IncrementalDocument
from tests.reruns import fresh, reruns

SOURCE = '''import torch
import torch.nn as nn


class Gen(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(x)

    def helper(self, x):
        return x


class Sub(Gen):
    def extra(self, x):
        return x


def build():
    return Gen()


def run():
    g = Gen()
    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    return g(y)


def run_sub():
    s = Sub()
    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    return s(y)


def calls_missing():
    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    return later(y)
'''



def _opened() -> IncrementalDocument:
    document = IncrementalDocument()
    assert document.update(SOURCE) == fresh(SOURCE)
    return document


def test_an_edit_to_a_method_no_other_root_used_reruns_only_its_class() -> None:
    document = _opened()
    edited = SOURCE.replace("    def helper(self, x):\n        return x",
                            "    def helper(self, x):\n        return x + 1")

    # Only the root of helper itself: ``build`` and ``run`` used Gen's __init__ (and
    # forward), and the root of Gen's forward ran on its own instance.
    assert reruns(document, edited) == 1


def test_an_edit_to_a_method_a_root_ran_reruns_that_root() -> None:
    document = _opened()
    edited = SOURCE.replace("        return self.relu(x)\n",
                            "        x = x * 2\n        return self.relu(x)\n")

    # Gen's forward, run and run_sub (which calls it through Sub); not build, not helper.
    assert reruns(document, edited) == 3


def test_an_edit_to_init_reruns_every_root_that_built_the_class() -> None:
    document = _opened()
    edited = SOURCE.replace("nn.ReLU(inplace=True)", "nn.ReLU()")

    # Every method's root (each builds its own instance), build, run and run_sub.
    assert reruns(document, edited) == 6


def test_a_method_added_where_a_lookup_found_none_reruns_the_roots_that_looked() -> None:
    document = _opened()
    edited = SOURCE.replace("    def extra(self, x):\n        return x\n",
                            "    def extra(self, x):\n        return x\n\n"
                            "    def forward(self, x):\n        return x.exp()\n")

    # The new method's own root, and run_sub, which looked for Sub's own forward; run
    # and the rest never did. Taking it out again re-runs run_sub alone.
    assert reruns(document, edited) == 2
    assert reruns(document, SOURCE) == 1


def test_a_function_added_where_a_call_found_none_reruns_the_caller() -> None:
    document = _opened()
    edited = SOURCE + "\n\ndef later(t):\n    t.relu_()\n    return t\n"

    assert reruns(document, edited) == 2  # the new function and calls_missing
    assert any(h.code == "GG001" and h.span.line == len(SOURCE.splitlines()) + 4
               for h in document.update(edited))


def test_a_changed_base_class_reruns_the_roots_that_looked_through_it() -> None:
    document = _opened()
    edited = SOURCE.replace("class Sub(Gen):", "class Sub(nn.Module):")

    assert reruns(document, edited) == 2  # class Sub and run_sub


def test_an_added_import_no_root_used_reruns_only_the_module_statements() -> None:
    document = _opened()
    edited = SOURCE.replace("import torch.nn as nn\n", "import torch.nn as nn\nimport math\n")

    # Each root records which imported names it looked up: none looked up ``math``.
    assert reruns(document, edited) == 1


def test_a_changed_import_reruns_the_roots_that_used_the_name() -> None:
    document = _opened()
    edited = SOURCE.replace("import torch\n", "import numpy as torch\n", 1)

    # The module's statements (which changed), and run, run_sub and calls_missing, the
    # functions that call torch.randn; not build, nor the methods, which use only ``nn``.
    assert reruns(document, edited) == 4


def test_an_edit_that_changes_nothing_another_root_read_reruns_only_the_edited_one() -> None:
    document = _opened()
    edited = SOURCE.replace("    return later(y)\n", "    return later(y * 2)\n")

    assert reruns(document, edited) == 1
    assert reruns(document, edited) == 0  # the same text again
