"""Incremental analysis equals a fresh one, whatever edits came before: a property test.

Two files of one project are open (a model module and the training code that imports
it); random edit sequences go to either file, line by line (statements added, removed,
replaced, half-typed lines included). After each sequence, when both final texts parse,
the incremental results of both files equal those of a fresh, non-incremental analysis
of the final texts in a fresh project.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gradguard.analysis.analyze import project_for
from gradguard.analysis.hazard import Hazard
from gradguard.analysis.incremental import IncrementalDocument
from gradguard.fixes import fix_of

pytestmark = pytest.mark.slow

MODEL = '''import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.Sigmoid()

    def forward(self, x):
        return self.act(self.fc(x))

    def helper(self, x):
        return x


def gate(t):
    return torch.sigmoid(t)
'''

TRAIN = '''import torch
from model import Block, gate


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.relu = torch.nn.ReLU(inplace=True)

    def forward(self, x):
        h = self.block(x)
        return self.relu(h)


def main():
    x = torch.randn(2, 4, requires_grad=True)
    y = gate(x)
    y.add_(1)
    Head()(x).sum().backward()
'''

FRAGMENTS = [
    "", "        x = x * 2", "        return self.relu(x)", "        return x.exp()",
    "    y.relu_()", "    y = y * 2", "        self.act = nn.ReLU(inplace=True)",
    "        self.act = nn.Identity()", "        self.relu = torch.nn.ReLU()",
    "def gate(t):", "    return t", "    return torch.tanh(t)", "class Block(nn.Module):",
    "    def helper(self, x):", "        h = self.block.helper(h)", "x = (", "import math",
    "from model import gate", "        h.mul_(2)", "        h = self.block(x)",
]

FOLDER = "/project"
PATHS = {"model": f"{FOLDER}/model.py", "train": f"{FOLDER}/train.py"}


def _edit(text: str, line: int, action: str, fragment: str) -> str:
    lines = text.split("\n")
    at = line % (len(lines) + 1)
    if action == "insert":
        lines.insert(at, fragment)
    elif lines and action == "delete":
        del lines[min(at, len(lines) - 1)]
    elif lines:
        lines[min(at, len(lines) - 1)] = fragment
    return "\n".join(lines)


class Workspace:
    """Both files open, their analyses sharing one project."""

    def __init__(self, texts: dict[str, str], incremental: bool) -> None:
        self.texts = dict(texts)
        by_path = {PATHS[name]: name for name in PATHS}
        self.project = project_for([FOLDER], read=lambda p: self.texts.get(by_path.get(p, "")))
        self.documents = {name: IncrementalDocument(incremental=incremental, path=PATHS[name],
                                                    project=self.project, fix_of=fix_of)
                          for name in PATHS}

    def update(self) -> dict[str, list[Hazard]]:
        # As the server does: the edited file, then the files that read it.
        return {name: self.documents[name].update(self.texts[name])
                for name in ("model", "train", "model", "train")}

    def parses(self) -> bool:
        return all(not document.errors for document in self.documents.values())


edits = st.lists(st.tuples(st.sampled_from(["model", "train"]), st.integers(0, 60),
                           st.sampled_from(["insert", "delete", "replace"]),
                           st.sampled_from(FRAGMENTS)), min_size=1, max_size=12)


# More with GRADGUARD_PROPERTY_EXAMPLES=1000 (a longer run than the test suite's).
EXAMPLES = int(os.environ.get("GRADGUARD_PROPERTY_EXAMPLES", "60"))


# Many random edit sequences leave a file that does not parse, and are set aside.
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(edits)
def test_after_any_edits_to_either_file_incremental_equals_fresh(
        sequence: list[tuple[str, int, str, str]]) -> None:
    texts = {"model": MODEL, "train": TRAIN}
    live = Workspace(texts, incremental=True)
    live.update()
    for name, line, action, fragment in sequence:
        live.texts[name] = _edit(live.texts[name], line, action, fragment)
        live.update()
    final = live.update()
    assume(live.parses())
    fresh = Workspace(live.texts, incremental=False)
    assert final == fresh.update()


def test_the_starting_texts_have_hazards_in_both_files() -> None:
    """The property is about something: the edits start from findings in each file."""
    found = Workspace({"model": MODEL, "train": TRAIN}, incremental=True).update()
    assert found["train"], found
