"""Settings: which rules run, at which severity, on which files, how soon after a keystroke.

A document's settings are layered, later layers overriding the keys they set:

1. the defaults below;
2. ``[tool.gradguard]`` of the nearest ``pyproject.toml`` above the document that has
   such a table (so a monorepo's sub-projects can differ, as with ruff), read by
   ``gradguard.config`` as ``check`` and ``probe`` read it;
3. the client's ``initializationOptions``;
4. the client's settings for the document's workspace folder: asked for with
   ``workspace/configuration`` (section ``gradguard``, the folder as ``scopeUri``) when
   the client can answer it, otherwise the last ``workspace/didChangeConfiguration``.

Keys, in ``pyproject.toml`` and in client settings alike:
``select`` and ``ignore`` (lists of rule codes or prefixes), ``severity`` (a table from a
code to ``error``/``warning``/``information``/``hint``), ``exclude`` (globs, relative to
the pyproject's folder or the workspace folder), ``uncertain`` (also report findings that
hold only if a tensor of unknown origin requires grad, as ``gradguard check
--uncertain``). Client settings also take
``debounceMs`` and ``incremental`` (``false`` re-analyses the whole file on every edit,
for comparisons) and ``diagnosticMode`` (``openFilesOnly``, the default: diagnostics of
the open documents; ``workspace``: also of every Python file of the workspace folders,
answered to ``workspace/diagnostic``; read at ``initialize``, as the server says then
whether it answers that request). ``probe`` takes ``onSave`` (run the torch probe on
the file at each save; only in a workspace the client says is trusted) and ``timeout``
(seconds per probe target); in pyproject.toml the same table also holds the probe's entries. A bad
value is reported and skipped, never fatal.

``select`` replaces what a lower layer selected; ``ignore`` adds to what lower layers
ignore (an editor that always sends ``ignore: []`` must not undo the project's), as do
``severity`` (per code) and ``exclude``.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any

from gradguard.config import SYNTAX_CODE, ProjectConfig, Selection, load, rule_codes, severities
from gradguard.rules import Severity

DEFAULT_DEBOUNCE_MS = 75
# ``diagnosticMode``: Pylance's names, which users of VS Code already know.
OPEN_FILES_ONLY = "openFilesOnly"
WORKSPACE = "workspace"
DIAGNOSTIC_MODES = (OPEN_FILES_ONLY, WORKSPACE)
# Keys of the same settings object that other parts read (the VS Code client's workspace
# trust, which the server takes from initializationOptions and gradguard/trustChanged
# only; the TCP token, which the transport takes out before the server sees it, and
# which a client that also passes it over stdio need not be told about): accepted here
# without a word.
OTHER_PARTS_KEYS = frozenset({"trusted", "token"})
# Keys of the ``probe`` table that ``gradguard.probe.config`` reads from pyproject.toml.
PROBE_CONFIG_KEYS = frozenset({"entries", "memory_mb", "device"})


@dataclass(frozen=True)
class Exclude:
    """A glob and the folder it is relative to."""

    root: str
    pattern: str

    def matches(self, path: str) -> bool:
        try:
            relative = os.path.relpath(path, self.root)
        except ValueError:  # another drive on Windows
            return False
        if relative.startswith(".."):
            return False
        parts = PurePosixPath(relative.replace(os.sep, "/")).parts
        pattern = self.pattern.strip("/")
        if "/" not in pattern:
            # A bare name or glob ("tests", "*_pb2.py") matches a file or folder anywhere.
            return any(fnmatch.fnmatchcase(part, pattern) for part in parts)
        regex = _glob_regex(pattern)
        # "build/**" and "build" both exclude everything under build/.
        return any(regex.fullmatch("/".join(parts[:end])) for end in range(1, len(parts) + 1))


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:[^/]*/)*")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out))


@dataclass(frozen=True)
class Settings:
    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    exclude: tuple[Exclude, ...] = ()
    uncertain: bool = False
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    incremental: bool = True
    # The torch probe: run on every save of a file (trusted workspaces only), and its
    # wall-clock limit per target (None: the probe's default, or pyproject's).
    probe_on_save: bool = False
    probe_timeout: float | None = None
    # Whose diagnostics the server computes: the open documents', or the workspace's.
    diagnostic_mode: str = OPEN_FILES_ONLY

    @property
    def selection(self) -> Selection:
        return Selection(self.select, self.ignore, self.uncertain)

    def severity_of(self, code: str, default: Severity) -> Severity:
        return self.severity.get(code, default)

    def excludes(self, path: str | None) -> bool:
        return path is not None and any(rule.matches(path) for rule in self.exclude)

    def shows_syntax_errors(self) -> bool:
        return SYNTAX_CODE not in self.ignore


# One layer: the keys a source set, already checked. Problems are collected, not raised.
Layer = dict[str, Any]


def parse_layer(raw: Any, root: str | None, origin: str, problems: list[str]) -> Layer:
    """Check one source of settings; ``root`` is the folder its exclude globs start at."""
    layer: Layer = {}
    if raw is None:
        return layer
    if not isinstance(raw, Mapping):
        problems.append(f"{origin}: settings must be a table, got {raw!r}")
        return layer
    local: list[str] = []
    for key, value in raw.items():
        if key in ("select", "ignore"):
            codes = rule_codes(value, key, local)
            if codes is not None:
                layer[key] = codes
        elif key == "severity":
            layer["severity"] = severities(value, local)
        elif key == "exclude":
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                if root is None:
                    local.append("`exclude` needs a workspace folder to be relative to")
                else:
                    layer["exclude"] = tuple(Exclude(root, v) for v in value if v.strip())
            else:
                local.append(f"`exclude` must be a list of globs, got {value!r}")
        elif key in ("debounceMs", "debounce_ms", "debounce-ms"):
            if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10_000:
                layer["debounce_ms"] = value
            else:
                local.append(f"`{key}` must be a number of milliseconds, got {value!r}")
        elif key == "probe":
            layer.update(_probe_settings(value, local))
        elif key == "diagnosticMode":
            if value in DIAGNOSTIC_MODES:
                layer["diagnostic_mode"] = value
            else:
                local.append(f"`diagnosticMode` must be one of {', '.join(DIAGNOSTIC_MODES)}, "
                             f"got {value!r}")
        elif key in OTHER_PARTS_KEYS:
            continue
        elif key in ("incremental", "uncertain"):
            if isinstance(value, bool):
                layer[key] = value
            else:
                local.append(f"`{key}` must be true or false, got {value!r}")
        else:
            local.append(f"unknown setting `{key}`")
    problems.extend(f"{origin}: {message}" for message in local)
    return layer


def _probe_settings(value: Any, problems: list[str]) -> Layer:
    if not isinstance(value, Mapping):
        problems.append(f"`probe` must be a table, got {value!r}")
        return {}
    layer: Layer = {}
    for key, item in value.items():
        if key in ("onSave", "on_save", "on-save"):
            if isinstance(item, bool):
                layer["probe_on_save"] = item
            else:
                problems.append(f"`probe.{key}` must be true or false, got {item!r}")
        elif key == "timeout":
            if isinstance(item, (int, float)) and not isinstance(item, bool) and item > 0:
                layer["probe_timeout"] = float(item)
            else:
                problems.append(f"`probe.timeout` must be a number of seconds, got {item!r}")
        elif key not in PROBE_CONFIG_KEYS:
            problems.append(f"unknown setting `probe.{key}`")
    return layer


def merge(base: Settings, layer: Layer) -> Settings:
    changes = dict(layer)
    if "ignore" in changes:
        changes["ignore"] = base.ignore | changes["ignore"]
    if "severity" in changes:
        changes["severity"] = {**base.severity, **changes["severity"]}
    if "exclude" in changes:
        changes["exclude"] = base.exclude + changes["exclude"]
    return replace(base, **changes)


def client_section(raw: Any) -> Any:
    """The ``gradguard`` part of client settings sent whole (``{"gradguard": {...}}``)."""
    if isinstance(raw, Mapping) and isinstance(raw.get("gradguard"), Mapping):
        return raw["gradguard"]
    return raw


class SettingsResolver:
    """Resolves the settings of each document, per workspace folder."""

    def __init__(self) -> None:
        self.initialization: Layer = {}
        self.client_global: Layer = {}
        self.client_folders: dict[str, Layer] = {}
        self.folders: list[str] = []
        self.problems: list[str] = []
        # The config last read from each pyproject.toml: its problems are told once.
        self._told: dict[str, ProjectConfig] = {}

    def folder_of(self, path: str | None) -> str | None:
        """The innermost workspace folder holding ``path``."""
        if path is None:
            return self.folders[0] if len(self.folders) == 1 else None
        holding = [f for f in self.folders
                   if path == f or path.startswith(f.rstrip(os.sep) + os.sep)]
        return max(holding, key=len, default=None)

    def resolve(self, path: str | None) -> Settings:
        settings = Settings()
        if path is not None:
            settings = merge(settings, self._pyproject_layer(load(path)))
        settings = merge(settings, self.initialization)
        folder = self.folder_of(path)
        client = self.client_folders.get(folder, self.client_global) if folder else \
            self.client_global
        return merge(settings, client)

    def forget_pyprojects(self) -> None:
        """Read every pyproject.toml again (``gradguard.config`` caches by mtime and size;
        this also tells their problems again)."""
        self._told.clear()

    def _pyproject_layer(self, config: ProjectConfig) -> Layer:
        """``[tool.gradguard]`` (read by ``gradguard.config``, as check and probe read it)
        as a layer of settings."""
        if config.path is None:
            return {}
        if self._told.get(config.path) is not config:
            self._told[config.path] = config
            self.problems.extend(config.problems)
        layer: Layer = {}
        for key in ("select", "ignore", "uncertain", "debounce_ms", "incremental"):
            if getattr(config, key) is not None:
                layer[key] = getattr(config, key)
        if config.severity:
            layer["severity"] = dict(config.severity)
        globs = (config.exclude or ()) + config.extend_exclude
        if globs and config.root is not None:
            layer["exclude"] = tuple(Exclude(config.root, glob) for glob in globs)
        if config.probe is not None:
            if config.probe.on_save is not None:
                layer["probe_on_save"] = config.probe.on_save
            if config.probe.timeout is not None:
                layer["probe_timeout"] = config.probe.timeout
        return layer

    def take_problems(self) -> list[str]:
        problems, self.problems = self.problems, []
        return problems
