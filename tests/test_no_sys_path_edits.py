"""Tests, tools, benches and the harness import each other without editing ``sys.path``:
tests/ is a package, pytest puts the repository root on the path (``pythonpath`` in
pyproject.toml), and the benches run as ``python -m bench.name`` from the root. The only
edits left run some other program the way ``python script.py`` would, or reach a folder
of installed packages.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("tests", "tools", "bench", "harness")
SKIPPED = ("tests/corpus/",)  # the accuracy corpus: programs to analyse, not our code

# file -> why it may put a folder on sys.path
RUNS_ANOTHER_PROGRAM = {
    "tools/first_loss.py": "runs a user's script as `python script.py` does",
    "tools/forkserver.py": "runs each script as `python script.py` does",
    "tests/wild/installed.py": "reaches the released packages installed apart from the venv",
}


def is_sys_path(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "path"
            and isinstance(node.value, ast.Name) and node.value.id == "sys")


def sys_path_edits(source: str) -> list[int]:
    """Lines that change ``sys.path``: a call of one of its methods, or an assignment to
    it or to a slice of it."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                is_sys_path(node.func.value):
            lines.append(node.lineno)
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AugAssign) else []
        for target in targets:
            if is_sys_path(target) or (isinstance(target, ast.Subscript)
                                       and is_sys_path(target.value)):
                lines.append(node.lineno)
    return lines


def test_the_finder_sees_each_way_of_editing_sys_path() -> None:
    assert sys_path_edits("import sys\nsys.path.insert(0, 'x')\n") == [2]
    assert sys_path_edits("import sys\nsys.path.append('x')\n") == [2]
    assert sys_path_edits("import sys\nsys.path[:0] = ['x']\n") == [2]
    assert sys_path_edits("import sys\nsys.path = ['x']\n") == [2]
    assert sys_path_edits("import sys\nsys.path += ['x']\n") == [2]
    assert sys_path_edits("import sys\nif 'x' not in sys.path:\n    pass\n") == []


def test_no_test_tool_or_bench_edits_sys_path_to_import_another() -> None:
    found = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if name.startswith(SKIPPED) or name in RUNS_ANOTHER_PROGRAM:
                continue
            found += [f"{name}:{line}" for line in sys_path_edits(path.read_text("utf-8"))]
    assert found == []


def test_each_allowed_edit_is_still_there() -> None:
    for name in RUNS_ANOTHER_PROGRAM:
        assert sys_path_edits((ROOT / name).read_text("utf-8")), name


def test_a_bench_imports_the_tests_it_runs_from_the_root_as_is() -> None:
    # bench.accuracy --metamorphic runs tests.metamorphic, which reads the rule and
    # family cases: all of it must import with nothing added to the path.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT / "server")  # GradGuard itself, as installed
    done = subprocess.run(
        [sys.executable, "-c", "import bench.accuracy, tests.metamorphic.run, "
         "tests.probe.probekit, tests.wild.checking"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
