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

# What an entry gets when neither the command line nor the table says.
DEFAULT_TIMEOUT = 60.0
DEFAULT_MEMORY_MB = 8192


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
