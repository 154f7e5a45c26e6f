"""``gradguard probe`` as a user runs it: target forms, pyproject entries, formats, exits.

Findings go to stdout as ``path:line:col: CODE message`` with their related lines, or
as JSON (the keys of ``gradguard check`` plus ``source`` and ``torch_error``); notes go
to stderr. Exit 1 when something was found, 2 when the probe could not run, else 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.probe.probekit import ROOT, line_of, torch_installed, write

pytestmark = [pytest.mark.torch, pytest.mark.slow,
              pytest.mark.skipif(not torch_installed(), reason="the probe runs under torch")]

CHECK_KEYS = {"path", "line", "column", "end_line", "end_column", "code", "severity",
              "message", "related", "fix"}
TRAIN = """
import sys
import torch
print("argv", sys.argv[1:])
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
y.relu_()
y.sum().backward()
"""
MODELS = """
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(self.fc(x))


class Head(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, 2)
"""
PYPROJECT = """
[tool.gradguard.probe]
entries = ["train.py -- --lr 0.5", "models.py --auto"]
timeout = 90
"""


def gradguard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gradguard", "probe", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("project")
    write(directory, "train.py", TRAIN)
    write(directory, "models.py", MODELS)
    write(directory, "safe.py", "import torch\n(torch.randn(3, requires_grad=True) * 2)"
                                ".relu_().sum().backward()\n")
    write(directory, "pyproject.toml", PYPROJECT)
    return directory


def test_without_target_the_pyproject_entries_run(project: Path) -> None:
    done = gradguard(cwd=project)
    line = line_of(project / "train.py", "y.relu_()")
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[:2] == [
        f"train.py:{line}:1: GG001 `relu_` overwrites the output of `sigmoid`, saved for "
        f"backward at line {line - 1} (version 0 -> 1)",
        f"    train.py:{line - 1}:5: the output of `sigmoid` saved here for backward "
        "(version 0)",
    ]
    assert done.stdout.splitlines()[2].startswith("    torch then raised: one of the variables")
    assert "gradguard probe: ran Block: input (2, 4)" in done.stderr
    assert "gradguard probe: skipped Head: needs arguments: width" in done.stderr


def test_json_has_the_check_keys_and_the_script_gets_its_arguments(project: Path) -> None:
    done = gradguard("train.py", "--format", "json", "--timeout", "90", "--", "--lr", "3",
                     cwd=project)
    assert done.returncode == 1, done.stderr
    [result] = json.loads(done.stdout)
    assert (result["target"], result["status"], result["error"]) == (
        "train.py -- --lr 3", "raised", None)
    assert result["stdout"] == "argv ['--lr', '3']\n"
    [finding] = result["findings"]
    assert set(finding) == CHECK_KEYS | {"source", "torch_error"}
    assert (finding["path"], finding["source"], finding["fix"]) == ("train.py", "probe", None)


def test_a_clean_run_of_two_targets_prints_nothing_and_exits_zero(project: Path) -> None:
    done = gradguard("safe.py", "models.py::Block", cwd=project)
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert done.stderr == "gradguard probe: ran Block: input (2, 4)\n"


def test_a_target_that_is_not_a_python_file_exits_two(project: Path) -> None:
    done = gradguard("notes.txt", cwd=project)
    assert done.returncode == 2
    assert "a probe target is a .py file" in done.stderr


def test_without_torch_the_command_names_the_extra_to_install(project: Path) -> None:
    hide_torch = (
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "from gradguard.cli.main import main\n"
        "sys.exit(main(['probe', 'train.py']))\n")
    done = subprocess.run([sys.executable, "-c", hide_torch], cwd=project,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "gradguard probe: the probe runs your code under torch, which is not "
        "installed here; install the probe extra: pip install 'gradguard[probe]'")
    assert done.stdout == ""


def test_help_lists_the_target_forms() -> None:
    done = subprocess.run([sys.executable, "-m", "gradguard", "probe", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)
    assert "path.py::name" in done.stdout and "--auto" in done.stdout
