"""Output formats of ``gradguard check``: text like other linters, JSON, SARIF 2.1.0, and
GitHub Actions workflow commands (annotations on the pull request's diff).

A finding in a notebook is located as (cell, line in the cell): text prints
``path:cell N:line:column``, JSON adds a ``cell`` key, SARIF a ``cell`` property.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from gradguard import __version__
from gradguard.analysis.hazard import Hazard, Span
from gradguard.checking.notebook import CellMap
from gradguard.rules import RULES


@dataclass(frozen=True)
class Finding:
    path: str
    hazard: Hazard
    # For a notebook: where each code cell's lines are in the program that was analysed.
    cells: CellMap | None = None

    def where(self, line: int) -> tuple[int | None, int]:
        """(cell number or None, line) of a line of the analysed text."""
        return (None, line) if self.cells is None else self.cells.locate(line)

    @property
    def message(self) -> str:
        """The hazard's message; in a notebook, "line N" said as "cell C, line L"."""
        if self.cells is None:
            return self.hazard.message
        return _LINE.sub(lambda m: "cell {}, line {}".format(*self.where(int(m.group(1)))),
                         self.hazard.message)


# How the analysis's messages name a line of the program.
_LINE = re.compile(r"\bline (\d+)\b")


def hazard_record(path: str, hazard: Hazard) -> dict[str, Any]:
    """One finding in the JSON schema shared by ``check`` and ``probe``."""
    span = hazard.span
    fix = None
    if hazard.fix is not None:
        fix = {
            "message": hazard.fix.message,
            "edits": [
                {
                    "line": edit.span.line,
                    "column": edit.span.column,
                    "end_line": edit.span.end_line,
                    "end_column": edit.span.end_column,
                    "new_text": edit.new_text,
                }
                for edit in hazard.fix.edits
            ],
        }
    return {
        "path": path,
        "line": span.line,
        "column": span.column,
        "end_line": span.end_line,
        "end_column": span.end_column,
        "code": hazard.code,
        "severity": hazard.severity,
        "message": hazard.message,
        "related": [
            {"path": r.path or path, "line": r.span.line, "column": r.span.column,
             "message": r.message}
            for r in hazard.related
        ],
        "fix": fix,
    }


def _shift(span: Span, line: int) -> Span:
    return Span(line, span.column, line + span.end_line - span.line, span.end_column)


def _in_cells(finding: Finding) -> dict[str, Any]:
    """The JSON record of a notebook finding: lines counted in their cells."""
    record = hazard_record(finding.path, finding.hazard)
    cell, line = finding.where(finding.hazard.span.line)
    record.update(cell=cell, line=line, end_line=_shift(finding.hazard.span, line).end_line,
                  message=finding.message)
    for related, source in zip(record["related"], finding.hazard.related, strict=True):
        related["cell"], related["line"] = finding.where(source.span.line)
    # Fix edits stay in program lines: they are applied to the notebook by `--fix`.
    record["fix"] = None
    return record


def record_of(finding: Finding) -> dict[str, Any]:
    if finding.cells is None:
        return hazard_record(finding.path, finding.hazard)
    return _in_cells(finding)


def as_text(results: list[Finding]) -> str:
    lines = []
    for finding in results:
        h = finding.hazard
        cell, line = finding.where(h.span.line)
        place = f"{finding.path}:" + (f"cell {cell}:" if cell is not None else "")
        lines.append(f"{place}{line}:{h.span.column}: {h.code} {finding.message}")
    return "\n".join(lines)


def as_json(results: list[Finding]) -> str:
    return json.dumps([record_of(finding) for finding in results], indent=2,
                      ensure_ascii=False)


_GITHUB_LEVEL = {"error": "error", "warning": "warning", "information": "notice",
                 "hint": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def as_github(results: list[Finding]) -> str:
    """GitHub Actions workflow commands: one ``::error file=...::message`` line a finding."""
    lines = []
    for finding in results:
        h = finding.hazard
        cell, line = finding.where(h.span.line)
        end = _shift(h.span, line)
        where = f"cell {cell}, " if cell is not None else ""
        properties = ",".join([
            f"file={_escape_property(finding.path)}", f"line={line}", f"col={h.span.column}",
            f"endLine={end.end_line}", f"endColumn={end.end_column}",
            f"title={_escape_property(f'gradguard {h.code}')}",
        ])
        lines.append(f"::{_GITHUB_LEVEL[h.severity]} {properties}::"
                     f"{_escape_data(f'{where}{h.code} {finding.message}')}")
    return "\n".join(lines)


_SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


def _location(finding: Finding, span: Span, whole: bool = True,
              path: str | None = None) -> dict[str, Any]:
    """Where a span is; ``path`` when it is in another file than the finding."""
    cell, line = finding.where(span.line) if path is None else (None, span.line)
    region: dict[str, Any] = {"startLine": line, "startColumn": span.column}
    if whole:
        region["endLine"] = _shift(span, line).end_line
        region["endColumn"] = span.end_column
    location: dict[str, Any] = {"physicalLocation": {
        "artifactLocation": {"uri": (path or finding.path).replace("\\", "/")},
        "region": region}}
    if cell is not None:
        location["properties"] = {"cell": cell}
    return location


def as_sarif(results: list[Finding]) -> str:
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "helpUri": rule.doc_url,
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.default_severity]},
        }
        for rule in RULES.values()
    ]
    sarif_results = []
    for finding in results:
        hazard = finding.hazard
        sarif_results.append(
            {
                "ruleId": hazard.code,
                "level": _SARIF_LEVEL[hazard.severity],
                "message": {"text": finding.message},
                "locations": [_location(finding, hazard.span)],
                "relatedLocations": [
                    {**_location(finding, r.span, whole=False, path=r.path), "id": index,
                     "message": {"text": r.message}}
                    for index, r in enumerate(hazard.related)
                ],
            }
        )
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "gradguard", "version": __version__,
                                    "informationUri": "https://github.com/gradguard/gradguard",
                                    "rules": rules}},
                "results": sarif_results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False)


FORMATTERS = {"text": as_text, "json": as_json, "sarif": as_sarif, "github": as_github}
