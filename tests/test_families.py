"""The families of hazards of issue 16, each on the smallest real code that triggers it
and the closest code that must not (tests/families/f1_...py to f9_...py).

Statically, a case must get exactly its marked hazards (a valid case none); a case marked
``missed`` is one GradGuard does not get right yet, held as a strict xfail so that it
fails loudly once it is right. Under torch, every label must hold: a marked case raises
autograd's in-place error, a valid one runs, backward included. A ``silent`` case (a
write through ``.data``, which torch does not refuse) runs cleanly as written, and is
judged again with ``.data`` read as ``.detach()``: the detached tensor shares the version
counter, so the marked write must then raise the saved-tensor error (it overwrites what
backward saved), and a valid case must still run.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gradguard.analysis.analyze import analyze_source
from tests.families import FAMILY_FILES, INVALID, VALID
from tests.rulecases import Case

SAVED_MODIFIED = "modified by an inplace operation"
INPLACE_ERRORS = (
    SAVED_MODIFIED,
    "a leaf Variable that requires grad is being used in an in-place operation",
    "is a view and is being modified inplace",
    "view was created in no_grad mode and is being modified inplace",
    "view of a leaf Variable that requires grad is being used in an in-place",
)

RUNNER = """
import json, sys
detach_data = sys.argv[1] == "detach"
if detach_data:
    import torch
    # .data read as .detach(): the same storage, but the version counter is shared, so
    # a write into a saved tensor is caught by backward (assignment to .data unchanged).
    torch.Tensor.data = property(lambda self: self.detach(), torch._C.TensorBase.data.__set__)
results = {}
for name, source in json.load(sys.stdin):
    try:
        exec(compile(source, name, "exec"), {"__name__": "__main__"})
        results[name] = None
    except Exception as error:
        results[name] = f"{type(error).__name__}: {error}"
print(json.dumps(results))
"""


def static(cases: list[Case]) -> list[object]:
    return [pytest.param(c, id=c.name, marks=pytest.mark.xfail(
        strict=True, reason="GradGuard does not get this family case right yet"))
            if c.missed else pytest.param(c, id=c.name) for c in cases]


def test_every_family_has_cases_both_ways() -> None:
    assert [m.FAMILY for m in FAMILY_FILES] == [str(n) for n in range(1, 10)]
    for module in FAMILY_FILES:
        assert len(module.INVALID) >= 2 and len(module.VALID) >= 1, module.__name__
        assert all(c.expected for c in module.INVALID), module.__name__
        assert not any(c.expected for c in module.VALID), module.__name__


@pytest.mark.parametrize("case", static(INVALID))
def test_flags_exactly_the_marked_lines(case: Case) -> None:
    hazards = analyze_source(case.source)
    assert {(h.span.line, h.code) for h in hazards} == case.expected
    assert {h.severity for h in hazards} == {case.severity}


@pytest.mark.parametrize("case", static(VALID))
def test_stays_silent_on_safe_code(case: Case) -> None:
    assert analyze_source(case.source) == []


def run_all(cases: list[Case], mode: str) -> dict[str, str | None]:
    payload = json.dumps([(c.name, c.source) for c in cases])
    done = subprocess.run([sys.executable, "-c", RUNNER, mode], input=payload, text=True,
                          capture_output=True, timeout=300, check=True)
    result: dict[str, str | None] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def outcomes() -> dict[str, dict[str, str | None]]:
    pytest.importorskip("torch")
    silent = [c for c in INVALID + VALID if c.silent]
    return {"plain": run_all(INVALID + VALID, "plain"), "detach": run_all(silent, "detach")}


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.parametrize("case", INVALID, ids=lambda c: c.name)
def test_marked_case_fails_in_torch(case: Case,
                                    outcomes: dict[str, dict[str, str | None]]) -> None:
    error = outcomes["plain"][case.name]
    if case.silent:
        assert error is None, f"a .data write should raise nothing: {error}"
        error = outcomes["detach"][case.name]
        assert error is not None and SAVED_MODIFIED in error, \
            f"the write through .detach() does not touch a saved tensor: {error}"
    else:
        assert error is not None, "torch ran this case without error"
        assert any(text in error for text in INPLACE_ERRORS), error


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.parametrize("case", VALID, ids=lambda c: c.name)
def test_unmarked_case_runs_in_torch(case: Case,
                                     outcomes: dict[str, dict[str, str | None]]) -> None:
    assert outcomes["plain"][case.name] is None
    if case.silent:
        assert outcomes["detach"][case.name] is None
