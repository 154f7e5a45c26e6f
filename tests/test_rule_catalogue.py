"""The rule catalogue is the one list of rules: the docs, the case files, the messages
and SARIF's rule metadata all agree with it."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest

from gradguard.analysis import findings
from gradguard.analysis.hazard import Hazard, Span
from gradguard.cli.formats import Finding, as_sarif
from gradguard.rules import RULES, SEVERITIES, Rule
from tests.rules import CASE_FILES

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "rules"
# SARIF 2.1.0 has no "information": a note is its lowest level.
SARIF_LEVELS = {"error": "error", "warning": "warning", "information": "note"}


def test_every_rule_has_a_docs_page_and_a_case_file_and_nothing_else_does() -> None:
    assert sorted(p.stem for p in DOCS.glob("*.md")) == sorted(RULES)
    assert sorted(module.RULE for module in CASE_FILES) == sorted(RULES)
    assert sorted(Path(module.__file__).stem for module in CASE_FILES) == \
        sorted(code.lower() for code in RULES)


@pytest.mark.parametrize("rule", RULES.values(), ids=lambda r: r.code)
def test_a_rules_docs_page_is_titled_with_its_code_and_name(rule: Rule) -> None:
    first = (DOCS / f"{rule.code}.md").read_text(encoding="utf-8").splitlines()[0]
    assert first == f"# {rule.code} {rule.name}"
    assert rule.doc_url.endswith(f"/docs/rules/{rule.code}.md")
    assert f"[{rule.code}](docs/rules/{rule.code}.md)" in \
        (REPO / "README.md").read_text(encoding="utf-8")


def test_every_rule_is_reported_by_a_finding_class_and_every_class_reports_a_rule() -> None:
    classes = [kind for kind in vars(findings).values() if isinstance(kind, type) and
               kind.__module__ == findings.__name__ and isinstance(getattr(kind, "code", None),
                                                                   str)]
    assert sorted({kind.code for kind in classes}) == sorted(RULES)
    assert sorted(kind.__name__ for kind in findings.KINDS) == \
        sorted(kind.__name__ for kind in classes)


@pytest.mark.parametrize("module", CASE_FILES, ids=lambda m: m.RULE)
def test_a_case_file_triggers_its_own_rule_and_has_code_that_must_not(module: object) -> None:
    invalid, valid = module.INVALID, module.VALID  # type: ignore[attr-defined]
    assert invalid and valid
    assert {code for case in invalid for _, code in case.expected} == {module.RULE}  # type: ignore[attr-defined]


@pytest.mark.parametrize("rule", RULES.values(), ids=lambda r: r.code)
def test_every_message_template_renders(rule: Rule) -> None:
    assert rule.default_severity in SEVERITIES
    assert "static" in rule.messages
    for kind, template in rule.messages.items():
        fields = {name: 1.5 if spec else "X"
                  for _, name, spec, _ in string.Formatter().parse(template) if name}
        assert "{" not in rule.message(kind, **fields)


def test_sarif_rule_metadata_is_the_catalogue() -> None:
    hazard = Hazard("GG001", Span(1, 1, 1, 2), "m", "error", "high")
    log = json.loads(as_sarif([Finding("a.py", hazard)]))
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [(r["id"], r["name"], r["helpUri"], r["defaultConfiguration"]["level"])
            for r in rules] == [(r.code, r.name, r.doc_url, SARIF_LEVELS[r.default_severity])
                                for r in RULES.values()]
