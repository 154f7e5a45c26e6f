"""``gradguard check`` on a released package's files, as a user runs it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any


def findings(path: Path) -> list[dict[str, Any]]:
    run = subprocess.run([sys.executable, "-m", "gradguard", "check", str(path), "--format",
                          "json", "--no-cache", "--jobs", "1"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode in (0, 1), run.stderr
    return list(json.loads(run.stdout))


def unpacked(package: ModuleType, into: Path) -> Path:
    """A copy of one installed package directory (``transformers.models.doge``) under
    ``into``, at its place in the package tree, as unpacking the wheel gives it: outside
    the site-packages that also holds torch's own sources."""
    source = Path(package.__file__ or "").parent
    target = into.joinpath(*package.__name__.split("."))
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def reported(found: list[dict[str, Any]], file_name: str) -> list[tuple[int, str]]:
    return sorted((f["line"], f["code"]) for f in found if Path(f["path"]).name == file_name)
