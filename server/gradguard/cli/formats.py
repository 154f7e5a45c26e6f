"""Output formats of ``gradguard check``: text like other linters, JSON, SARIF 2.1.0."""

from __future__ import annotations

import json
from typing import Any

from gradguard import __version__
from gradguard.analysis.hazard import Hazard
from gradguard.analysis.rules import RULES


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


def as_text(results: list[tuple[str, Hazard]]) -> str:
    lines = [
        f"{path}:{h.span.line}:{h.span.column}: {h.code} {h.message}" for path, h in results
    ]
    return "\n".join(lines)


def as_json(results: list[tuple[str, Hazard]]) -> str:
    return json.dumps([hazard_record(path, h) for path, h in results], indent=2,
                      ensure_ascii=False)


_SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


def _location(path: str, line: int, column: int, end_line: int | None = None,
              end_column: int | None = None) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": line, "startColumn": column}
    if end_line is not None:
        region["endLine"] = end_line
        region["endColumn"] = end_column
    return {"physicalLocation": {"artifactLocation": {"uri": path.replace("\\", "/")},
                                 "region": region}}


def as_sarif(results: list[tuple[str, Hazard]]) -> str:
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "helpUri": rule.doc_url,
        }
        for rule in RULES.values()
    ]
    sarif_results = []
    for path, hazard in results:
        span = hazard.span
        sarif_results.append(
            {
                "ruleId": hazard.code,
                "level": _SARIF_LEVEL[hazard.severity],
                "message": {"text": hazard.message},
                "locations": [_location(path, span.line, span.column, span.end_line,
                                        span.end_column)],
                "relatedLocations": [
                    {**_location(r.path or path, r.span.line, r.span.column), "id": index,
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


FORMATTERS = {"text": as_text, "json": as_json, "sarif": as_sarif}
