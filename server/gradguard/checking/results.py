"""What checking one file gave: its hazards, or why it could not be analysed."""

from __future__ import annotations

from dataclasses import dataclass, field

from gradguard.analysis.hazard import Hazard
from gradguard.checking.notebook import CellMap


@dataclass
class FileResult:
    path: str  # as given
    # (absolute path, hazard) of each hazard its analysis found, in whichever file.
    found: list[tuple[str, Hazard]] = field(default_factory=list)
    error: str | None = None
    digest: str | None = None
    # The other project files the analysis read, with the digests of their texts.
    read: dict[str, str | None] = field(default_factory=dict)
    cells: CellMap | None = None  # a notebook's
