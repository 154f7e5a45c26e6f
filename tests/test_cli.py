"""``gradguard check`` as a user runs it: formats, exit status, bad files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gradguard.rules import RULES

HAZARD = """import torch
x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)  # 注释: sigmoid 保存输出 🙂
y.relu_()
y.sum().backward()
"""
SAFE = "import torch\nx = torch.randn(3)\nx.add_(1)\n"
JSON_KEYS = {"path", "line", "column", "end_line", "end_column", "code", "severity",
             "message", "related", "fix"}


def check(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gradguard", "check", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text(HAZARD, encoding="utf-8")
    (tmp_path / "pkg" / "safe.py").write_text(SAFE)
    return tmp_path


def test_text_output_is_path_line_col_code_message(tree: Path) -> None:
    done = check("pkg", cwd=tree)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "pkg/model.py:4:1: GG001 `y.relu_()` overwrites the output of `torch.sigmoid` at "
        "line 3, which sigmoid's backward needs"
    ]


def test_nothing_found_exits_zero(tree: Path) -> None:
    done = check("pkg/safe.py", cwd=tree)
    assert (done.returncode, done.stdout) == (0, "")


def test_json_output_has_exactly_the_documented_keys(tree: Path) -> None:
    done = check("--format", "json", "pkg", cwd=tree)
    [finding] = json.loads(done.stdout)
    assert set(finding) == JSON_KEYS
    assert (finding["line"], finding["column"], finding["end_line"], finding["end_column"]) \
        == (4, 1, 4, 10)
    assert finding["related"] == [{
        "path": "pkg/model.py", "line": 3, "column": 5,
        "message": "`torch.sigmoid` saves its output here for backward"}]


def test_sarif_output_is_a_sarif_2_1_0_log(tree: Path) -> None:
    done = check("--format", "sarif", "pkg", cwd=tree)
    log = json.loads(done.stdout)
    assert log["version"] == "2.1.0"
    [run] = log["runs"]
    assert {rule["id"] for rule in run["tool"]["driver"]["rules"]} == set(RULES)
    [result] = run["results"]
    assert result["ruleId"] == "GG001" and result["level"] == "error"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (4, 1)
    assert result["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 3


def test_columns_count_code_points_after_cjk_and_emoji(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "import torch\nx = torch.randn(3, requires_grad=True)\n"
        "y = torch.exp(x); z = '变量🙂'; y.add_(1)\ny.sum().backward()\n", encoding="utf-8")
    [finding] = json.loads(check("--format", "json", "m.py", cwd=tmp_path).stdout)
    assert finding["column"] == len("y = torch.exp(x); z = '变量🙂'; ") + 1


def test_bad_files_are_reported_and_the_run_goes_on(tree: Path) -> None:
    (tree / "pkg" / "latin1.py").write_bytes(b"# caf\xe9\nx += 1\n")
    (tree / "pkg" / "broken.py").write_text("import torch\ndef f(x:\n    x.add_(1)\n")
    done = check("pkg", cwd=tree)
    assert done.returncode == 3  # some files could not be analysed
    assert "pkg/latin1.py:1:6: GG900 not analysed: not UTF-8 (byte 5: 0xe9)" in done.stdout
    assert "pkg/broken.py:2:6: GG900 not analysed: syntax error" in done.stdout
    assert "pkg/model.py:4:1: GG001" in done.stdout


def test_usage_errors_exit_two(tree: Path) -> None:
    assert check("--select", "XX9", "pkg", cwd=tree).returncode == 2
    assert check("missing.py", cwd=tree).returncode == 2
    assert check(cwd=tree).returncode == 2


def test_parallel_and_single_process_runs_agree(tree: Path) -> None:
    for index in range(12):
        (tree / "pkg" / f"copy{index}.py").write_text(HAZARD, encoding="utf-8")
    parallel = check("--format", "json", "--jobs", "2", "pkg", cwd=tree)
    single = check("--format", "json", "--jobs", "1", "pkg", cwd=tree)
    assert json.loads(parallel.stdout) == json.loads(single.stdout)
    assert len(json.loads(single.stdout)) == 13
