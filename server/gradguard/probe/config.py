"""``[tool.gradguard.probe]`` in pyproject.toml: entry points and defaults.

    [tool.gradguard.probe]
    entries = ["train.py::step", "models/unet.py --auto", "scripts/fit.py -- --epochs 1"]
    timeout = 120        # seconds per entry
    memory_mb = 16384    # 0: no limit
    device = "cpu"

Entry paths are relative to the directory of that pyproject.toml. ``gradguard probe``
with no TARGET runs every entry; the server offers them as code lenses.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from gradguard.probe.target import ProbeTarget, TargetError, parse_target


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class ProbeConfig:
    root: str  # the directory of the pyproject.toml (the cwd for the entries)
    entries: tuple[ProbeTarget, ...] = field(default=())
    timeout: float | None = None
    memory_mb: int | None = None
    device: str | None = None


def find_pyproject(start: str) -> str | None:
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _load_toml(path: str) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef, import-not-found, unused-ignore]
        except ModuleNotFoundError:
            raise ConfigError("reading pyproject.toml needs Python 3.11+ or the tomli "
                              "package") from None
    with open(path, "rb") as file:
        try:
            return tomllib.load(file)
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: {error}") from None


def load_config(start: str) -> ProbeConfig | None:
    """The probe settings of the nearest pyproject.toml at or above ``start``."""
    path = find_pyproject(start)
    if path is None:
        return None
    section = _load_toml(path).get("tool", {}).get("gradguard", {}).get("probe")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.gradguard.probe] must be a table")
    root = os.path.dirname(path)
    entries = section.get("entries", [])
    if isinstance(entries, str) or not all(isinstance(e, str) for e in entries):
        raise ConfigError(f"{path}: tool.gradguard.probe.entries must be a list of strings")
    try:
        targets = tuple(parse_target(entry) for entry in entries)
    except TargetError as error:
        raise ConfigError(f"{path}: {error}") from None
    timeout = section.get("timeout")
    memory = section.get("memory_mb")
    device = section.get("device")
    if timeout is not None and not isinstance(timeout, (int, float)):
        raise ConfigError(f"{path}: tool.gradguard.probe.timeout must be a number")
    if memory is not None and not isinstance(memory, int):
        raise ConfigError(f"{path}: tool.gradguard.probe.memory_mb must be an integer")
    if device not in (None, "cpu", "cuda"):
        raise ConfigError(f"{path}: tool.gradguard.probe.device must be cpu or cuda")
    return ProbeConfig(root, targets, None if timeout is None else float(timeout), memory,
                       device)
