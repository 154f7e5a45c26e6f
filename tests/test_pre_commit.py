"""The hooks of ``.pre-commit-hooks.yaml``, run by pre-commit on a scratch repository.

``pre-commit try-repo`` installs this checkout (its working tree) the way a user's
pre-commit installs a released one: into a fresh environment of its own, with the
dependencies from the package index.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
HAZARD = """import torch
x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
y += 1
y.sum().backward()
"""


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def run_hook(hook: str, scratch: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), hook, "--all-files"],
        cwd=scratch, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture()
def scratch(tmp_path: Path) -> Path:
    """A git repository with a hazard staged, and a virtualenv the hook must not read."""
    git("init", "-q", cwd=tmp_path)
    git("config", "user.email", "test@example.invalid", cwd=tmp_path)
    git("config", "user.name", "test", cwd=tmp_path)
    (tmp_path / "train.py").write_text(HAZARD)
    (tmp_path / "pyproject.toml").write_text('[tool.gradguard]\nextend-exclude = ["vendor"]\n')
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "lib.py").write_text(HAZARD)
    git("add", ".", cwd=tmp_path)
    return tmp_path


def test_the_check_hook_fails_on_a_hazard_and_passes_once_fixed(
        scratch: Path, pre_commit_home: Path) -> None:
    failed = run_hook("gradguard", scratch, pre_commit_home)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "train.py:4:1: GG001" in failed.stdout
    assert "vendor/lib.py" not in failed.stdout  # staged, but excluded by the project

    fixing = run_hook("gradguard-fix", scratch, pre_commit_home)
    # pre-commit fails a hook that changed files, so that the user looks before committing.
    assert fixing.returncode == 1 and "files were modified by this hook" in fixing.stdout
    assert "y = y + 1" in (scratch / "train.py").read_text()
    assert (scratch / "vendor" / "lib.py").read_text() == HAZARD

    git("add", ".", cwd=scratch)
    passed = run_hook("gradguard", scratch, pre_commit_home)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "gradguard" in passed.stdout and "Passed" in passed.stdout
