"""The editor and `gradguard check` choose the same files: for one pyproject.toml with
every kind of pattern, the files `check .` reports on are exactly those the server
analyses when each is opened, and those its workspace diagnostics cover."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gradguard.server.settings import SettingsResolver, parse_layer
from gradguard.server.workspace_files import workspace_files

# Each file holds a hazard, so `check` reports on every file it analyses.
HAZARD = """\
import torch
x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
y.mul_(2)
y.sum().backward()
"""

PYPROJECT = """\
[tool.gradguard]
# Replaces ruff's default list, so that `/build` alone decides about build folders.
exclude = ["/build", "sub/gen", "nets/model_[ab].py"]
extend-exclude = ["**/x", "legacy/*.py", "!legacy/keep.py"]
include = ["*.py", "*.pyw"]
"""

# Each file and whether both front ends analyse it.
TREE = {
    "main.py": True,
    "build/m.py": False,           # "/build": the build folder beside pyproject.toml
    "sub/build/m.py": True,        # ... and no other
    "sub/gen/m.py": False,         # "sub/gen": a path from the root
    "other/sub/gen/m.py": True,
    "nets/model_a.py": False,      # a character class
    "nets/model_b.py": False,
    "nets/model_c.py": True,
    "x/m.py": False,               # "**/x": a folder named x anywhere
    "deep/er/x/m.py": False,
    "deep/er/m.py": True,
    "legacy/old.py": False,        # "legacy/*.py" ...
    "legacy/keep.py": True,        # ... and its negation
    "tool.pyw": True,              # include
    "notes.txt": False,            # not included
    "env/m.py": False,             # a virtualenv, whatever its name
}


def _tree(root: Path) -> Path:
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    for name in TREE:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(HAZARD, encoding="utf-8")
    (root / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    return root


def _checked_by_check(root: Path) -> set[str]:
    done = subprocess.run([sys.executable, "-m", "gradguard", "check", "--no-cache",
                           "--format", "json", "."], cwd=root, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stderr
    return {Path(finding["path"]).as_posix() for finding in json.loads(done.stdout)}


def _analysed_by_the_server(root: Path) -> set[str]:
    resolver = SettingsResolver()
    resolver.folders = [str(root)]
    return {name for name in TREE
            if not resolver.resolve(str(root / name)).excludes(str(root / name))}


def test_check_and_the_server_choose_the_same_files(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    expected = {name for name, kept in TREE.items() if kept}

    assert _checked_by_check(root) == expected
    assert _analysed_by_the_server(root) == expected


def test_the_workspace_diagnostics_cover_the_files_check_checks(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    covered = workspace_files([str(root)])[str(root)]

    # Python files only: a notebook's diagnostics belong to its open cells.
    assert {Path(path).relative_to(root).as_posix() for path in covered} == \
        {name for name, kept in TREE.items() if kept and name.endswith(".py")}


def test_a_client_exclude_leaves_out_more_for_the_server(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    resolver = SettingsResolver()
    resolver.folders = [str(root)]
    problems: list[str] = []
    resolver.client_global = parse_layer({"exclude": ["deep/"]}, str(root), "client",
                                         problems)

    assert problems == []
    assert resolver.resolve(str(root / "deep/er/m.py")).excludes(str(root / "deep/er/m.py"))
    assert not resolver.resolve(str(root / "main.py")).excludes(str(root / "main.py"))
