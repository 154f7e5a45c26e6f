"""Hostile input through ``gradguard check``: no crash, no silent skip, a status for
every file in every format, and an exit status that says what happened."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gradguard.cli.check import EXIT_CLEAN, EXIT_FOUND, EXIT_NOT_ANALYSED, EXIT_USAGE
from tests.rulecases import Case
from tests.rules import STATUS_FILES

HERE = Path(__file__).resolve().parent
HAZARD = """import torch
a = torch.randn(3, requires_grad=True)
b = a.exp()
b += 1
b.sum().backward()
"""
SECOND = """c = a.sigmoid()
c.mul_(2)
c.sum().backward()
"""


def check(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gradguard", "check", "--no-cache", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def codes(done: subprocess.CompletedProcess[str]) -> list[tuple[int, str]]:
    return [(f["line"], f["code"]) for f in json.loads(done.stdout)]


def test_nesting_deeper_than_python_accepts_is_a_syntax_error_not_a_crash(
        tmp_path: Path) -> None:
    (tmp_path / "deep.py").write_text(HAZARD + "x = " + "(" * 2000 + "1" + ")" * 2000 + "\n")
    done = check("--format", "json", "deep.py", cwd=tmp_path)
    assert done.returncode == EXIT_NOT_ANALYSED, done.stderr
    [status] = json.loads(done.stdout)
    assert (status["code"], status["line"]) == ("GG900", 6)
    assert "too many nested parentheses" in status["message"]


def test_a_very_long_expression_is_skipped_and_every_hazard_around_it_reported(
        tmp_path: Path) -> None:
    # A 3,000-term sum is 3,000 levels of tree: deeper than Python's own recursion limit.
    (tmp_path / "long.py").write_text(HAZARD + "y = " + " + ".join(["a"] * 3000) + "\n"
                                      + SECOND)
    done = check("--format", "json", "long.py", cwd=tmp_path)
    assert codes(done) == [(4, "GG001"), (6, "GG901"), (8, "GG001")]
    [note] = [f for f in json.loads(done.stdout) if f["code"] == "GG901"]
    assert note["severity"] == "information"
    assert "nested 3000 levels deep" in note["message"]
    assert done.returncode == EXIT_FOUND  # the note alone would not fail a run


def test_the_closest_safe_code_gets_no_note(tmp_path: Path) -> None:
    (tmp_path / "wide.py").write_text(
        "import torch\nys = [" + ", ".join(["torch.ones(1)"] * 500) + "]\n"
        "z = " + " + ".join(["1"] * 60) + "\n")
    done = check("wide.py", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (EXIT_CLEAN, "")


def test_calls_nested_too_deeply_stop_that_root_with_a_note(tmp_path: Path) -> None:
    # Each function nests its call in 20 blocks and 60 levels of expression: followed
    # through eight calls that is more than Python's stack allows the analysis.
    def function(n: int) -> str:
        blocks = "".join("    " * (i + 1) + "if x is not None:\n" for i in range(20))
        call = "-(" * 60 + f"f{n + 1}(x)" + ")" * 60
        return f"def f{n}(x):\n{blocks}{'    ' * 21}return {call}\n    return x\n"

    text = ("import torch\n" + "".join(function(n) for n in range(9)) +
            "def f9(x):\n    return x\n\n"
            "def run():\n    a = torch.randn(3, requires_grad=True)\n    b = a.exp()\n"
            "    b += 1\n    f0(b).sum().backward()\n")
    (tmp_path / "calls.py").write_text(text)
    done = check("--format", "json", "calls.py", cwd=tmp_path)
    found = json.loads(done.stdout)
    run_line = text.splitlines().index("def run():") + 1
    assert [(f["line"], f["code"]) for f in found] == [(run_line, "GG901"),
                                                      (run_line + 3, "GG001")]
    assert "could not follow `run` to its end" in found[0]["message"]
    assert found[0]["end_line"] == run_line


def test_a_function_too_long_to_follow_stops_with_a_note(tmp_path: Path) -> None:
    items = "[" + ", ".join(str(i) for i in range(32)) + "]"
    (tmp_path / "loops.py").write_text(
        "import torch\n\n\ndef run():\n"
        "    a = torch.randn(3, requires_grad=True)\n    b = a.exp()\n    b += 1\n"
        f"    for i in {items}:\n        for j in {items}:\n            for k in {items}:\n"
        f"                for m in {items}:\n"
        "                    c = a.sigmoid()\n    b.sum().backward()\n")
    done = check("--format", "json", "loops.py", cwd=tmp_path)
    found = json.loads(done.stdout)
    assert [(f["line"], f["code"]) for f in found] == [(4, "GG901"), (7, "GG001")]
    assert "more than 40,000 steps to follow" in found[0]["message"]


@pytest.mark.parametrize("output_format", ["text", "json", "sarif", "github"])
def test_every_file_that_cannot_be_analysed_has_a_status_in_every_format(
        tmp_path: Path, output_format: str) -> None:
    (tmp_path / "syntax.py").write_text("import torch\ndef f(:\n")
    (tmp_path / "latin1.py").write_bytes(b"import torch\n# caf\xe9\n")
    (tmp_path / "binary.py").write_bytes(bytes(range(256)))
    (tmp_path / "good.py").write_text(HAZARD)
    done = check("--format", output_format, ".", cwd=tmp_path)
    assert done.returncode == EXIT_NOT_ANALYSED
    for name in ("syntax.py", "latin1.py", "binary.py"):
        assert name in done.stdout, (name, done.stdout)
    statuses = [line for line in done.stdout.splitlines() if "GG900" in line]
    if output_format in ("text", "github"):
        assert len(statuses) == 3, done.stdout
    assert "GG001" in done.stdout
    if output_format == "json":
        statuses = {Path(f["path"]).name: (f["line"], f["column"])
                    for f in json.loads(done.stdout) if f["code"] == "GG900"}
        assert statuses == {"syntax.py": (2, 7), "latin1.py": (2, 6), "binary.py": (2, 118)}


def test_exit_status_says_what_happened(tmp_path: Path) -> None:
    (tmp_path / "safe.py").write_text("import torch\nx = torch.randn(3)\nx.add_(1)\n")
    (tmp_path / "hazard.py").write_text(HAZARD)
    (tmp_path / "broken.py").write_text("def f(:\n")
    assert check("safe.py", cwd=tmp_path).returncode == EXIT_CLEAN
    assert check("hazard.py", cwd=tmp_path).returncode == EXIT_FOUND
    assert check("hazard.py", "broken.py", cwd=tmp_path).returncode == EXIT_NOT_ANALYSED
    assert check("hazard.py", "missing.py", cwd=tmp_path).returncode == EXIT_USAGE


def test_fix_reports_files_it_could_not_read_and_exits_for_them(tmp_path: Path) -> None:
    (tmp_path / "hazard.py").write_text(HAZARD.replace("b += 1", "b.add_(1)"))
    (tmp_path / "broken.py").write_text("def f(:\n")
    done = check("--fix", ".", cwd=tmp_path)
    assert done.returncode == EXIT_NOT_ANALYSED
    assert "broken.py:1:7: GG900" in done.stdout
    assert "1 file(s) not analysed" in done.stderr
    assert "b = b.add(1)" in (tmp_path / "hazard.py").read_text()


def test_a_worker_that_dies_costs_only_its_file(tmp_path: Path) -> None:
    for index in range(12):
        (tmp_path / f"model{index}.py").write_text(HAZARD)
    (tmp_path / "crash_me.py").write_text(HAZARD)
    done = subprocess.run(
        [sys.executable, str(HERE / "faults.py"), "segfault-on", "crash_me.py", "--",
         "check", "--no-cache", "--jobs", "2", "--format", "json", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == EXIT_NOT_ANALYSED, done.stderr
    found = json.loads(done.stdout)
    [status] = [f for f in found if f["code"] == "GG900"]
    assert status["path"].endswith("crash_me.py")
    assert "the analysis process died (killed by SIGSEGV)" in status["message"]
    assert sorted(Path(f["path"]).name for f in found if f["code"] == "GG001") == \
        sorted(f"model{index}.py" for index in range(12))


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_fault_of_the_analysis_costs_only_its_file(tmp_path: Path, jobs: str) -> None:
    for index in range(3):
        (tmp_path / f"model{index}.py").write_text(HAZARD)
    (tmp_path / "fails.py").write_text(HAZARD)
    done = subprocess.run(
        [sys.executable, str(HERE / "faults.py"), "raise-in-check-on", "fails.py", "--",
         "check", "--no-cache", "--jobs", jobs, "--format", "json", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == EXIT_NOT_ANALYSED, done.stderr
    found = json.loads(done.stdout)
    [status] = [f for f in found if f["code"] == "GG900"]
    assert status["path"].endswith("fails.py")
    assert "internal error (RuntimeError: injected fault); please report it" in \
        status["message"]
    assert sorted(Path(f["path"]).name for f in found if f["code"] == "GG001") == \
        [f"model{index}.py" for index in range(3)]


@pytest.mark.parametrize("rule_case", [c for m in STATUS_FILES for c in m.INVALID + m.VALID],
                         ids=lambda c: c.name)
def test_the_status_rules_cases(tmp_path: Path, rule_case: Case) -> None:
    (tmp_path / "case.py").write_text(rule_case.source)
    done = check("--format", "json", "case.py", cwd=tmp_path)
    found = json.loads(done.stdout)
    assert {(f["line"], f["code"]) for f in found} == rule_case.expected, done.stderr
    assert all(f["severity"] == rule_case.severity for f in found)
