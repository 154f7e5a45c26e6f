"""Suppression comments: ``# gradguard: ignore[GG001]``, ``# gradguard: ignore``, ``# noqa``."""

from __future__ import annotations

import re
from collections.abc import Sequence

_GRADGUARD = re.compile(r"#\s*gradguard:\s*ignore(?:\[(?P<codes>[A-Za-z0-9,\s]*)\])?")
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?",
                   re.IGNORECASE)

ALL = frozenset({"*"})


def suppressed_codes(line: str) -> frozenset[str]:
    """The rule codes a source line silences (``{"*"}`` for all of them)."""
    if "#" not in line:
        return frozenset()
    codes: set[str] = set()
    for pattern in (_GRADGUARD, _NOQA):
        for match in pattern.finditer(line):
            listed = match.group("codes")
            if listed is None or not listed.strip():
                return ALL
            codes.update(c.strip().upper() for c in re.split(r"[,\s]+", listed) if c.strip())
    return frozenset(codes)


def is_suppressed(code: str, lines: Sequence[str], line_numbers: list[int]) -> bool:
    """Whether any of the given 1-based lines silences ``code``."""
    for number in line_numbers:
        if 1 <= number <= len(lines):
            codes = suppressed_codes(lines[number - 1])
            if codes is ALL or code in codes:
                return True
    return False


def suppression_comment(line: str, code: str) -> str:
    """The text to append to ``line`` so that it silences ``code``."""
    match = _GRADGUARD.search(line)
    if match and match.group("codes"):
        existing = match.group("codes").strip()
        return line[: match.start("codes")] + f"{existing}, {code}" + line[match.end("codes"):]
    separator = "  " if line.rstrip() else ""
    return f"{line.rstrip()}{separator}# gradguard: ignore[{code}]"
