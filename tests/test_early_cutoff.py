"""Summary-level early cut-off: an edit inside a function re-runs that function's own
root and computes its summaries again; what called it runs again only when one of those
summaries came out different (what it saves, writes, reports, returns or changes on its
inputs, or where in it that happens). In every case the hazards equal those of a fresh
analysis of the same texts.
"""

from __future__ import annotations

from gradguard.analysis.analyze import project_for
from gradguard.analysis.incremental import IncrementalDocument
from tests.reruns import fresh, reruns

SOURCE = '''import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        label = "gate"
        self.threshold = 0.5

    def forward(self, x):
        factor = 2
        return torch.sigmoid(x)


def run():
    gate = Gate()
    x = torch.randn(3, requires_grad=True)
    y = gate(x)
    y.mul_(2)
    return y


def run_twice():
    gate = Gate()
    x = torch.randn(3, requires_grad=True)
    return gate(x) + gate(x.exp())
'''



def _opened() -> IncrementalDocument:
    document = IncrementalDocument()
    found = document.update(SOURCE)
    assert found == fresh(SOURCE)
    assert [h.code for h in found] == ["GG001"]  # mul_ over what sigmoid saved

    return document


def test_an_edit_that_leaves_the_summary_the_same_reruns_none_of_the_callers() -> None:
    document = _opened()
    edited = SOURCE.replace("factor = 2", "factor = 3")

    # Gate.forward's own root only: run and run_twice keep what they found through it.
    assert reruns(document, edited) == 1
    assert document.summaries_cut_off == 1


def test_an_edit_that_changes_the_summary_reruns_the_callers() -> None:
    document = _opened()
    edited = SOURCE.replace("return torch.sigmoid(x)", "return torch.sigmoid(x).clone()")

    # Gate.forward's root, run and run_twice: what it returns is no longer saved.
    assert reruns(document, edited) == 3
    assert document.summaries_cut_off == 0
    assert document.update(edited) == []


def test_an_edit_to_init_that_leaves_its_summary_the_same_reruns_nothing() -> None:
    document = _opened()
    edited = SOURCE.replace('label = "gate"', 'label = "Gate"')

    # __init__ is no root of its own; every root that built a Gate keeps its result.
    assert reruns(document, edited) == 0


def test_code_moved_within_the_function_reruns_the_callers() -> None:
    """The callers' findings point at the save: when the code that makes it moves
    within the function, they run again to point at the new place."""
    document = _opened()
    edited = SOURCE.replace("        factor = 2\n", "        factor = 2\n        more = 3\n")

    assert reruns(document, edited) == 3


def test_findings_kept_through_a_cut_off_move_with_the_code_above() -> None:
    document = _opened()
    edited = SOURCE.replace("factor = 2", "factor = 3")
    assert reruns(document, edited) == 1
    moved = edited.replace("import torch\n", "import torch\nimport math\n\n\n")

    assert reruns(document, moved) == 1  # the module's statements; the findings move


MODEL = '''import torch


def gate(t):
    factor = 2
    return torch.sigmoid(t)
'''

TRAIN = '''import torch
from model import gate


def step():
    x = torch.randn(3, requires_grad=True)
    y = gate(x)
    y.mul_(2)
    y.sum().backward()
'''


class _Workspace:
    """Two open files of one project, as the server keeps them."""

    def __init__(self) -> None:
        self.texts = {"/project/model.py": MODEL, "/project/train.py": TRAIN}
        self.project = project_for(["/project"], read=self.texts.get)
        self.documents = {path: IncrementalDocument(path=path, project=self.project)
                          for path in self.texts}

    def edit(self, path: str, text: str) -> dict[str, int]:
        """The roots each document ran again after ``path`` changed to ``text``."""
        self.texts[path] = text
        before = {p: d.roots_run for p, d in self.documents.items()}
        self.documents[path].update(text)
        for other, document in self.documents.items():
            if other != path:
                document.update(self.texts[other])
        return {p: d.roots_run - before[p] for p, d in self.documents.items()}


def test_an_edit_in_an_imported_file_that_leaves_summaries_the_same_reruns_no_importer() -> None:
    workspace = _Workspace()
    for path, document in workspace.documents.items():
        document.update(workspace.texts[path])
    train = workspace.documents["/project/train.py"]
    assert [h.code for h in train.update(TRAIN)] == ["GG001"]

    ran = workspace.edit("/project/model.py", MODEL.replace("factor = 2", "factor = 5"))

    assert ran["/project/train.py"] == 0
    assert [h.code for h in train.update(TRAIN)] == ["GG001"]

    ran = workspace.edit("/project/model.py", MODEL.replace("torch.sigmoid(t)", "t.exp() + 1"))

    assert ran["/project/train.py"] == 1  # gate saves nothing of its result now
    assert train.update(TRAIN) == []
