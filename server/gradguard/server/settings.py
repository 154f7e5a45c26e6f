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

Every key, where it can be set and what it takes, is declared once in
``gradguard/settings_schema.py``. A bad value is reported and skipped, never fatal.
Which documents are analysed is decided as ``check`` decides which files to walk
(``checking/discovery.py``: pathspec's gitignore patterns, the pyproject's ``include``,
``exclude`` and ``extend-exclude``, ruff's default excludes, virtualenvs), and the
client's ``exclude`` patterns, relative to its workspace folder, leave out more.

``select`` replaces what a lower layer selected; ``ignore`` adds to what lower layers
ignore (an editor that always sends ``ignore: []`` must not undo the project's), as do
``severity`` (per code) and ``exclude``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gradguard.checking.discovery import Discovery, Patterns, load_discovery, passed_over
from gradguard.config import ProjectConfig, Selection, load
from gradguard.rules import Severity
from gradguard.settings_read import SYNTAX_CODE, read_settings
from gradguard.settings_schema import default

DEFAULT_DEBOUNCE_MS: int = default("debounceMs")
# ``diagnosticMode``: Pylance's names, which users of VS Code already know.
OPEN_FILES_ONLY = "openFilesOnly"
WORKSPACE = "workspace"
# The field of ``Settings`` each client key sets.
FIELDS = {"select": "select", "ignore": "ignore", "severity": "severity",
          "uncertain": "uncertain", "debounceMs": "debounce_ms",
          "incremental": "incremental", "diagnosticMode": "diagnostic_mode",
          "probe.onSave": "probe_on_save", "probe.timeout": "probe_timeout"}


@dataclass(frozen=True)
class Settings:
    select: frozenset[str] | None = default("select")
    ignore: frozenset[str] = frozenset(default("ignore"))
    severity: Mapping[str, Severity] = field(default_factory=dict)
    # The project's files, as ``check`` walks them (its pyproject's include and exclude).
    discovery: Discovery | None = None
    # The client's exclude patterns, each relative to its workspace folder.
    exclude: tuple[Patterns, ...] = ()
    uncertain: bool = default("uncertain")
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    incremental: bool = default("incremental")
    # The torch probe: run on every save of a file (trusted workspaces only), and its
    # wall-clock limit per target (None: the probe's default, or pyproject's).
    probe_on_save: bool = default("probe.onSave")
    probe_timeout: float | None = None
    # Whose diagnostics the server computes: the open documents', or the workspace's.
    diagnostic_mode: str = default("diagnosticMode")

    @property
    def selection(self) -> Selection:
        return Selection(self.select, self.ignore, self.uncertain)

    def severity_of(self, code: str, default: Severity) -> Severity:
        return self.severity.get(code, default)

    def excludes(self, path: str | None) -> bool:
        """Whether the document at ``path`` is left out: ``check`` would pass over it
        walking its project, or the client excludes it."""
        if path is None:
            return False
        file = Path(path)
        return (self.discovery is not None and passed_over(file, self.discovery)) or \
            any(patterns.cover(file) for patterns in self.exclude)

    def shows_syntax_errors(self) -> bool:
        return SYNTAX_CODE not in self.ignore


# One layer: the keys a source set, already checked. Problems are collected, not raised.
Layer = dict[str, Any]


def parse_layer(raw: Any, root: str | None, origin: str, problems: list[str]) -> Layer:
    """Check one source of client settings; ``root`` is the folder its exclude patterns
    start at."""
    layer: Layer = {}
    if raw is None:
        return layer
    if not isinstance(raw, Mapping):
        problems.append(f"{origin}: settings must be a table, got {raw!r}")
        return layer
    local: list[str] = []
    for key, value in read_settings(raw, "client", local).items():
        if key != "exclude":
            layer[FIELDS[key]] = value
        elif root is None:
            local.append("`exclude` needs a workspace folder to be relative to")
        else:
            layer["exclude"] = (Patterns.of(Path(root), value),)
    problems.extend(f"{origin}: {message}" for message in local)
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
        self._discoveries: dict[str, tuple[ProjectConfig, Discovery]] = {}

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
            config = load(path)
            settings = merge(settings, self._pyproject_layer(config))
            # Without a pyproject, patterns are relative to the workspace folder, as
            # `check .` run there takes them.
            start = self.folder_of(path) or os.path.dirname(path)
            settings = replace(settings, discovery=self._discovery(start, config))
        settings = merge(settings, self.initialization)
        folder = self.folder_of(path)
        client = self.client_folders.get(folder, self.client_global) if folder else \
            self.client_global
        return merge(settings, client)

    def _discovery(self, start: str, config: ProjectConfig) -> Discovery:
        # Kept while the pyproject is unchanged (config.load hands out the same object):
        # documents are resolved at every edit.
        known = self._discoveries.get(start)
        if known is None or known[0] is not config:
            known = self._discoveries[start] = (config, load_discovery(Path(start),
                                                                       config=config))
        return known[1]

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
        if config.probe is not None:
            if config.probe.on_save is not None:
                layer["probe_on_save"] = config.probe.on_save
            if config.probe.timeout is not None:
                layer["probe_timeout"] = config.probe.timeout
        return layer

    def take_problems(self) -> list[str]:
        problems, self.problems = self.problems, []
        return problems
