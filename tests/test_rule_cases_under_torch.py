"""The rule examples are real: torch itself agrees with every label.

A case marked with hazards must raise autograd's in-place RuntimeError when run; an
unmarked case must run, backward included. A GG005 case (a write through ``.data``) is
the exception autograd cannot see: it must run, and the same code writing through
``.detach()`` (the same storage under autograd's own version counter) must raise the
error, which proves the write lands on a tensor backward saved. All cases run in one
child process.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.rules import INVALID as RULE_INVALID
from tests.rules import QUIET as RULE_QUIET
from tests.rules import VALID as RULE_VALID

pytestmark = [pytest.mark.torch, pytest.mark.slow]

pytest.importorskip("torch")

CASES = RULE_INVALID + RULE_VALID + RULE_QUIET
SILENT = [c for c in RULE_INVALID if {code for _, code in c.expected} == {"GG005"}]
LOUD = [c for c in RULE_INVALID if c not in SILENT]
DETACHED = " (.data as .detach())"

RUNNER = """
import json, sys, traceback
results = {}
for name, source in json.load(sys.stdin):
    try:
        exec(compile(source, name, "exec"), {"__name__": "__main__"})
        results[name] = None
    except Exception as error:
        results[name] = f"{type(error).__name__}: {error}"
print(json.dumps(results))
"""

INPLACE_ERRORS = (
    "modified by an inplace operation",
    "a leaf Variable that requires grad is being used in an in-place operation",
    "is a view and is being modified inplace",
    "view was created in no_grad mode and is being modified inplace",
    "view of a leaf Variable that requires grad is being used in an in-place",
)


@pytest.fixture(scope="module")
def outcomes() -> dict[str, str | None]:
    payload = json.dumps([(c.name, c.source) for c in CASES] +
                         [(c.name + DETACHED, c.source.replace(".data", ".detach()"))
                          for c in SILENT])
    done = subprocess.run([sys.executable, "-c", RUNNER], input=payload, text=True,
                          capture_output=True, timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", LOUD, ids=lambda c: c.name)
def test_marked_case_fails_in_torch(case, outcomes) -> None:
    error = outcomes[case.name]
    assert error is not None, "torch ran this case without error"
    assert any(text in error for text in INPLACE_ERRORS), error


@pytest.mark.parametrize("case", SILENT, ids=lambda c: c.name)
def test_a_write_through_data_runs_but_through_detach_is_refused(case, outcomes) -> None:
    assert outcomes[case.name] is None
    error = outcomes[case.name + DETACHED]
    assert error is not None and "modified by an inplace operation" in error, error


@pytest.mark.parametrize("case", RULE_VALID + RULE_QUIET, ids=lambda c: c.name)
def test_unmarked_case_runs_in_torch(case, outcomes) -> None:
    assert outcomes[case.name] is None
