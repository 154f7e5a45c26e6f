"""Rule examples as specifications: source with the expected hazards marked on their lines.

A line ending in ``# expect: GG001`` must carry exactly that hazard; a case without marks
must produce none. ``severity`` names the severity every expected hazard must have.

``missed`` says that GradGuard does not get the case right yet (a family case of issue 16
it misses, or flags though it must not): its static test is a strict xfail, never a
skip. ``silent`` marks a write through ``.data``, which torch does not refuse: under torch
such a case is judged with ``.data`` read as ``.detach()`` (see tests/test_families.py).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>GG\d{3}(?:\s*,\s*GG\d{3})*)")


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    severity: str = "error"
    missed: bool = False
    silent: bool = False

    @property
    def expected(self) -> set[tuple[int, str]]:
        marks = set()
        for number, line in enumerate(self.source.splitlines(), start=1):
            match = EXPECT.search(line)
            if match:
                for code in match.group("codes").split(","):
                    marks.add((number, code.strip()))
        return marks


def case(name: str, source: str, severity: str = "error", *, missed: bool = False,
         silent: bool = False) -> Case:
    return Case(name, textwrap.dedent(source).lstrip("\n"), severity, missed, silent)
