"""The analyzer's rule examples, run under the probe in all three target forms.

Each case of tests/cases_*.py is a runnable script whose ``# expect: GG00x`` marks
are the lines that break backward (tests/test_rule_cases_under_torch.py checks that
torch agrees). The probe must report exactly those lines with those codes, and
nothing for the unmarked cases, when it runs the case

- as a script (``case.py``);
- as a function (``case.py::main``, the case's code indented into ``def main():``,
  so every mark moves down one line);
- as modules (``case.py --auto``, the case's classes only: its module-level code
  blanked out, lines kept), for the cases whose marks all sit inside classes.

Every finding of a marked case must be confirmed by torch's own error (backward's,
or the forward op autograd refused), or, for a write through ``.data`` that torch cannot
see (GG005), by the probe recomputing the gradients without it; the unmarked cases must
run to their end.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from gradguard.probe.runner import ProbeResult
from tests.probe.probekit import codes_and_lines, probe_all, torch_installed
from tests.rulecases import Case
from tests.rules import INVALID as RULE_INVALID
from tests.rules import QUIET as RULE_QUIET
from tests.rules import VALID as RULE_VALID

pytestmark = [pytest.mark.torch, pytest.mark.slow,
              pytest.mark.skipif(not torch_installed(), reason="the probe runs under torch")]

CASES = RULE_INVALID + RULE_VALID + RULE_QUIET


def as_function(case: Case) -> str:
    return "def main():\n" + textwrap.indent(case.source, "    ")


def classes_only(case: Case) -> str | None:
    """The case with its module-level statements blanked (imports, classes, functions
    and tables that call nothing kept, line numbers unchanged), if it has classes
    holding every mark."""
    tree = ast.parse(case.source)
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    inside = all(any(c.lineno <= line <= (c.end_lineno or c.lineno) for c in classes)
                 for line, _ in case.expected)
    if not classes or not inside:
        return None
    lines = case.source.splitlines()
    for node in tree.body:
        kept = isinstance(node, (ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef)) \
            or (isinstance(node, ast.Assign) and
                not any(isinstance(inner, ast.Call) for inner in ast.walk(node.value)))
        if not kept:
            for index in range(node.lineno - 1, node.end_lineno or node.lineno):
                lines[index] = ""
    return "\n".join(lines) + "\n"


def targets_of(directory: Path) -> dict[tuple[str, str], tuple[str, set[tuple[int, str]]]]:
    """(case, form) -> (target, expected (line, code) pairs)."""
    targets = {}
    for number, case in enumerate(CASES):
        script = directory / f"case{number}.py"
        script.write_text(case.source, encoding="utf-8")
        targets[case.name, "script"] = (str(script), case.expected)
        function = directory / f"case{number}_function.py"
        function.write_text(as_function(case), encoding="utf-8")
        targets[case.name, "function"] = (f"{function}::main",
                                          {(line + 1, code) for line, code in case.expected})
        modules = classes_only(case)
        if modules is not None:
            auto = directory / f"case{number}_modules.py"
            auto.write_text(modules, encoding="utf-8")
            targets[case.name, "auto"] = (f"{auto} --auto", case.expected)
    return targets


PARAMETERS = [(case, form) for case in CASES for form in ("script", "function", "auto")
              if form != "auto" or classes_only(case) is not None]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory
         ) -> dict[tuple[str, str], tuple[ProbeResult, set[tuple[int, str]]]]:
    targets = targets_of(tmp_path_factory.mktemp("rule-cases"))
    results = probe_all([target for target, _ in targets.values()], timeout=60)
    return {key: (results[target], expected) for key, (target, expected) in targets.items()}


@pytest.mark.parametrize(("case", "form"), PARAMETERS,
                         ids=[f"{form}: {case.name}" for case, form in PARAMETERS])
def test_probe_reports_exactly_the_marked_lines(
        runs: dict[tuple[str, str], tuple[ProbeResult, set[tuple[int, str]]]],
        case: Case, form: str) -> None:
    result, expected = runs[case.name, form]
    assert codes_and_lines(result) == expected, [f["message"] for f in result.findings]
    if expected:
        # A write through .data raises nothing: the probe confirms it by recomputing.
        assert all(f["torch_error"] or "(confirmed: recomputed" in f["message"]
                   for f in result.findings), "torch did not confirm it"
    else:
        assert (result.status, result.error) == ("ok", None)
    if form == "auto":  # no case may pass by being skipped
        assert result.skipped == [] and result.ran


def test_every_case_runs_in_at_least_two_forms_and_some_in_three() -> None:
    forms: dict[str, int] = {}
    for case, _ in PARAMETERS:
        forms[case.name] = forms.get(case.name, 0) + 1
    assert min(forms.values()) == 2
    assert sum(1 for count in forms.values() if count == 3) >= 8
