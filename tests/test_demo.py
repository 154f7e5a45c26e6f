"""`scripts/demo.sh` succeeds when the demo ran as intended: `check` found the seeds'
hazards (its exit status 1) and the script says so and exits 0.

Each run installs GradGuard into a fresh venv of a copy of the checkout, as a newcomer's
first run does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent


def checkout_copy(root: Path) -> Path:
    """The files the demo needs: the package, the examples and the script."""
    for name in ("pyproject.toml", "README.md", "server", "examples", "scripts"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(source, root / name)
    return root


def run_demo(root: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    return subprocess.run(["bash", "scripts/demo.sh"], cwd=root, capture_output=True,
                          text=True, timeout=600, env=env)


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return checkout_copy(tmp_path_factory.mktemp("demo"))


def test_the_demo_exits_0_when_check_finds_the_seeds_hazards(copy: Path) -> None:
    demo = run_demo(copy)
    assert demo.returncode == 0, demo.stderr
    assert demo.stdout.count(" GG001 ") == 2
    assert "check exited 1: hazards found" in demo.stderr
    assert "0 when nothing is found" in demo.stderr


def test_the_demo_fails_when_check_finds_nothing(copy: Path) -> None:
    for fixed in (copy / "examples" / "fixed").glob("*.py"):
        shutil.copy2(fixed, copy / "examples" / fixed.name)
    demo = run_demo(copy)
    assert demo.returncode == 1
    assert "demo: FAILED. check exited 0" in demo.stderr
