"""``[tool.gradguard]`` in pyproject.toml: read here, once, for ``check``, ``serve`` and
``probe`` alike, so CI and the editor report the same things.

    [tool.gradguard]
    select = ["GG00"]                 # rule codes or prefixes (default: all)
    ignore = ["GG004"]                # added to what is ignored
    severity = { GG001 = "warning" }  # per code: error, warning, information, hint
    uncertain = false                 # also report findings that hold only if a tensor
                                      # of unknown origin requires grad
    exclude = ["generated"]           # gitignore-style, relative to this file's folder
    extend-exclude = ["legacy/*.py"]  # (exclude replaces ruff's defaults, this adds)
    include = ["*.py", "*.ipynb"]
    debounce_ms = 75                  # the editor only: wait after a keystroke
    incremental = true                # the editor only: re-analyse changed blocks only

    [tool.gradguard.probe]
    entries = ["train.py::step"]      # what ``gradguard probe`` runs with no TARGET
    timeout = 120
    memory_mb = 16384
    device = "cpu"
    on_save = false                   # the editor probes a file at each save

The table that counts is the one of the nearest pyproject.toml at or above a file that
has a ``[tool.gradguard]`` table (a monorepo's sub-projects can differ, as with ruff).
A bad value is reported as a problem and skipped, never fatal; callers decide whether a
problem stops them. Reading a file is cached by its modification time and size.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gradguard.rules import Severity
from gradguard.settings_read import read_settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - tomli is a dependency on Python 3.10
    import tomli as tomllib

@dataclass(frozen=True)
class Selection:
    """Which findings a run reports: rule codes (prefixes), and whether uncertain ones.

    A finding is uncertain when it holds only if a tensor whose origin the analysis
    cannot see requires grad (a plain function's argument, say), or only if a backward
    reaches a save that nothing its function returns or keeps carries gradient from;
    those are left out unless asked for, because on real code most of them never do.
    """

    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    uncertain: bool = False

    def wants(self, code: str) -> bool:
        def matches(codes: Iterable[str]) -> bool:
            return any(code.startswith(prefix) for prefix in codes)

        if self.select is not None and not matches(self.select):
            return False
        return not matches(self.ignore)


@dataclass(frozen=True)
class ProbeTable:
    """``[tool.gradguard.probe]``, checked (entries are parsed by the probe itself)."""

    entries: tuple[str, ...] = ()
    timeout: float | None = None
    memory_mb: int | None = None
    device: str | None = None
    on_save: bool | None = None


@dataclass(frozen=True)
class ProjectConfig:
    """One pyproject.toml's ``[tool.gradguard]``; only the keys it sets are not None."""

    path: str | None = None  # the pyproject.toml (None: there is none)
    select: frozenset[str] | None = None
    ignore: frozenset[str] | None = None
    severity: Mapping[str, Severity] = field(default_factory=dict)
    uncertain: bool | None = None
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    include: tuple[str, ...] | None = None
    probe: ProbeTable | None = None
    # Editor-only settings (the server's), accepted here too.
    debounce_ms: int | None = None
    incremental: bool | None = None
    problems: tuple[str, ...] = ()

    @property
    def root(self) -> str | None:
        """The folder exclude patterns and probe entries are relative to."""
        return None if self.path is None else os.path.dirname(self.path)

    def selection(self, select: frozenset[str] | None = None,
                  ignore: frozenset[str] = frozenset(), uncertain: bool = False) -> Selection:
        """The selection of a run: options given on top of this table's (``select``
        replaces, ``ignore`` adds, ``uncertain`` turns on)."""
        return Selection(select if select is not None else self.select,
                         (self.ignore or frozenset()) | ignore,
                         uncertain or bool(self.uncertain))

    def severity_of(self, code: str, default: Severity) -> Severity:
        return self.severity.get(code, default)


def _field(key: str) -> str:
    """The field of ``ProjectConfig`` (or ``ProbeTable``) a key is held in:
    ``debounceMs`` -> ``debounce_ms``, ``extend-exclude`` -> ``extend_exclude``."""
    return re.sub(r"(?<=[a-z])([A-Z])", r"_\1", key).lower().replace("-", "_")


def parse_table(table: Mapping[str, Any], path: str | None) -> ProjectConfig:
    """A ``[tool.gradguard]`` table, checked against the settings schema; its problems
    name the file."""
    problems: list[str] = []
    values = read_settings(table, "pyproject", problems)
    top = {_field(key): value for key, value in values.items() if "." not in key}
    probe = {_field(key.partition(".")[2]): value for key, value in values.items()
             if key.startswith("probe.")}
    origin = f"{path} [tool.gradguard]" if path else "[tool.gradguard]"
    return ProjectConfig(path, problems=tuple(f"{origin}: {p}" for p in problems),
                         probe=ProbeTable(**probe) if probe else None, **top)


@dataclass(frozen=True)
class _Read:
    stamp: tuple[int, int]
    config: ProjectConfig | None  # None: the file has no [tool.gradguard] table


_cache: dict[str, _Read] = {}


def read_pyproject(path: str) -> ProjectConfig | None:
    """The ``[tool.gradguard]`` of one pyproject.toml (None: none, or no such file).

    A file that cannot be read or parsed gives a config holding only that problem.
    """
    try:
        status = os.stat(path)
    except OSError:
        _cache.pop(path, None)
        return None
    stamp = (status.st_mtime_ns, status.st_size)
    known = _cache.get(path)
    if known is not None and known.stamp == stamp:
        return known.config
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as error:
        config: ProjectConfig | None = ProjectConfig(path, problems=(
            f"{path}: cannot read: {error}",))
    else:
        tool = data.get("tool")
        table = tool.get("gradguard") if isinstance(tool, dict) else None
        if table is None:
            config = None
        elif not isinstance(table, dict):
            config = ProjectConfig(path, problems=(
                f"{path}: [tool.gradguard] must be a table",))
        else:
            config = parse_table(table, path)
    _cache[path] = _Read(stamp, config)
    return config


def load(start: str) -> ProjectConfig:
    """The config for a file or folder: the nearest pyproject.toml at or above it with a
    ``[tool.gradguard]`` table (an empty config if there is none)."""
    directory = os.path.abspath(start)
    if not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    while True:
        config = read_pyproject(os.path.join(directory, "pyproject.toml"))
        if config is not None:
            return config
        parent = os.path.dirname(directory)
        if parent == directory:
            return ProjectConfig()
        directory = parent
