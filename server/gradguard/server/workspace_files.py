"""Which files the workspace diagnostics cover: those ``gradguard check .`` would check,
run from each workspace folder (``.gitignore``, virtualenvs, ruff's default excludes and
``[tool.gradguard]`` include/exclude all honoured, by the same code).

Only Python files: a notebook's diagnostics belong to its cells, which exist as
documents only while the notebook is open.
"""

from __future__ import annotations

import os
from pathlib import Path

from gradguard.checking.discovery import discover, load_discovery
from gradguard.config import load


def workspace_files(folders: list[str]) -> dict[str, list[str]]:
    """Each folder's Python files (absolute paths); a file under two folders counts
    for the innermost one (nested workspace folders)."""
    innermost = sorted(folders, key=len, reverse=True)
    taken: set[str] = set()
    files: dict[str, list[str]] = {}
    for folder in innermost:
        found = [path for path in _python_files(folder) if path not in taken]
        taken.update(found)
        files[folder] = found
    return {folder: files[folder] for folder in folders}


def _python_files(folder: str) -> list[str]:
    if not os.path.isdir(folder):
        return []
    discovery = load_discovery(Path(folder), config=load(folder))
    return [os.path.abspath(path) for path in discover([folder], discovery)
            if path.endswith(".py")]
