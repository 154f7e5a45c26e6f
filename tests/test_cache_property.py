"""A cached ``gradguard check`` equals ``check --no-cache``, whatever happened to the
project's files before: a property test.

A small project (a training script, the helpers and the package it may import, a model
module) goes through random sequences of steps: a file written with one of its
variants (a hazard, no hazard, a re-export, a syntax error), created, or deleted. After
each step ``check`` runs with the cache kept from the earlier steps, and its output must
be what a run without the cache prints. The cache is keyed on every file an analysis
depended on: the texts it read, and the names an import was looked for under that did
not exist (creating ``helpers.py`` changes what ``from helpers import compute`` means).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradguard.checking import workers
from gradguard.cli.main import main

SCRIPT = """import torch
from {module} import compute
x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
out = compute(y)
out.sum().backward()
"""

NET_SCRIPT = """import torch
from model import Net
net = Net()
x = torch.randn(2, 4, requires_grad=True)
net(x).sum().backward()
"""

NET = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.{act}()
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.act(self.fc(x)))
"""

# None: the file does not exist.
VARIANTS: dict[str, list[str | None]] = {
    "train.py": [None, SCRIPT.format(module="helpers"), SCRIPT.format(module="pkg.layers"),
                 NET_SCRIPT],
    "helpers.py": [None, "def compute(t):\n    return t.mul_(2)\n",
                   "def compute(t):\n    return t * 2\n",
                   "from pkg.layers import compute\n", "def compute(t:\n"],
    "pkg/__init__.py": [None, ""],
    "pkg/layers.py": [None, "def compute(t):\n    return t.add_(1)\n",
                      "import torch\n\n\ndef compute(t):\n    return torch.exp(t)\n"],
    "model.py": [None, NET.format(act="Sigmoid"), NET.format(act="Identity")],
}

steps = st.lists(st.sampled_from([(name, index) for name, variants in VARIANTS.items()
                                  for index in range(len(variants))]),
                 min_size=1, max_size=8)

EXAMPLES = int(os.environ.get("GRADGUARD_PROPERTY_EXAMPLES", "40"))


def _write(root: Path, name: str, text: str | None) -> None:
    path = root / name
    if text is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


def _check(capsys: pytest.CaptureFixture[str], *options: str) -> tuple[int, object]:
    # Each run is a new process in real use: nothing of an earlier run's project is kept.
    workers._runs.clear()
    capsys.readouterr()
    status = main(["check", ".", "--format", "json", "--jobs", "1", *options])
    out = capsys.readouterr().out
    return status, json.loads(out) if out.strip() else []


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow,
                                 HealthCheck.function_scoped_fixture])
@given(sequence=steps)
def test_a_cached_check_equals_an_uncached_one_after_any_file_changes(
        sequence: list[tuple[str, int]], tmp_path_factory: pytest.TempPathFactory,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path_factory.mktemp("project")
    monkeypatch.chdir(root)
    _write(root, "train.py", VARIANTS["train.py"][1])
    _check(capsys)
    for name, index in sequence:
        _write(root, name, VARIANTS[name][index])
        assert _check(capsys) == _check(capsys, "--no-cache"), (name, index)


def test_creating_the_imported_file_is_seen_by_a_cached_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's reproduction: ``helpers.py`` does not exist, then does."""
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "train.py", VARIANTS["train.py"][1])
    assert _check(capsys) == (0, [])
    _write(tmp_path, "helpers.py", VARIANTS["helpers.py"][1])
    status, found = _check(capsys)
    assert status == 1
    assert [(Path(f["path"]).name, f["line"], f["code"]) for f in found] == [  # type: ignore[attr-defined]
        ("helpers.py", 2, "GG001")]


def test_the_variants_make_findings_come_and_go(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The property is about something: some states have findings, some none."""
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "train.py", VARIANTS["train.py"][3])
    _write(tmp_path, "model.py", VARIANTS["model.py"][1])
    assert _check(capsys, "--no-cache")[0] == 1
    _write(tmp_path, "model.py", VARIANTS["model.py"][2])
    assert _check(capsys, "--no-cache")[0] == 0
