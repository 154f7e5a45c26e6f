"""``[tool.gradguard.probe]`` in pyproject.toml: entry points and defaults (the table is
read and checked by ``gradguard.config``; the entries are parsed here).

    [tool.gradguard.probe]
    entries = ["train.py::step", "models/unet.py --auto", "scripts/fit.py -- --epochs 1"]
    timeout = 120        # seconds per entry
    memory_mb = 16384    # 0: no limit
    device = "cpu"

Entry paths are relative to the directory of that pyproject.toml. ``gradguard probe``
with no TARGET runs every entry; the server offers them as code lenses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gradguard.config import load
from gradguard.probe.target import ProbeTarget, TargetError, parse_target
from gradguard.settings_schema import default

# What an entry gets when neither the command line (or the editor) nor the table says.
DEFAULT_TIMEOUT: float = default("probe.timeout")
DEFAULT_MEMORY_MB: int = default("probe.memory_mb")
DEFAULT_DEVICE: str = default("probe.device")


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class ProbeConfig:
    root: str  # the directory of the pyproject.toml (the cwd for the entries)
    entries: tuple[ProbeTarget, ...] = field(default=())
    timeout: float | None = None
    memory_mb: int | None = None
    device: str | None = None


def load_config(start: str) -> ProbeConfig | None:
    """The probe settings of the ``[tool.gradguard]`` that holds ``start`` (read by
    ``gradguard.config``, as ``check`` and the server read it). A problem in the table
    is a ``ConfigError``: the probe runs nothing on a guess."""
    config = load(start)
    if config.problems:
        raise ConfigError("; ".join(config.problems))
    table, root = config.probe, config.root
    if table is None or root is None:
        return None
    try:
        targets = tuple(parse_target(entry) for entry in table.entries)
    except TargetError as error:
        raise ConfigError(f"{config.path}: {error}") from None
    return ProbeConfig(root, targets, table.timeout, table.memory_mb, table.device)


@dataclass(frozen=True)
class ProbeOptions:
    """What a probe run is given."""

    timeout: float
    memory_mb: int | None  # None: no limit
    device: str


def probe_options(config: ProbeConfig | None, timeout: float | None = None,
                  memory_mb: int | None = None, device: str | None = None) -> ProbeOptions:
    """The options of a run: those given (``gradguard probe``'s command line, or the
    editor's settings), else the pyproject's probe table's, else the defaults."""
    table = config or ProbeConfig("")
    memory = memory_mb if memory_mb is not None else table.memory_mb
    # A memory limit of 0 is none; no timeout is 0 (the schema's minimum is 1).
    return ProbeOptions(timeout=timeout or table.timeout or DEFAULT_TIMEOUT,
                        memory_mb=(DEFAULT_MEMORY_MB if memory is None else memory) or None,
                        device=device or table.device or DEFAULT_DEVICE)
