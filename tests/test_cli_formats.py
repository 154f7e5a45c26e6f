"""``gradguard check --format sarif|github``: what code-scanning and GitHub Actions read."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.test_cli import HAZARD, check

# The OASIS schema, vendored from a PyPI package (see tests/data/README.md): no network.
SARIF_SCHEMA = json.loads(
    (Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "model.py").write_text(HAZARD, encoding="utf-8")
    (tmp_path / "100%, done: ok.py").write_text(HAZARD, encoding="utf-8")
    return tmp_path


def test_sarif_output_validates_against_the_sarif_2_1_0_schema(project: Path) -> None:
    log = json.loads(check("--format", "sarif", ".", cwd=project).stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    assert len(log["runs"][0]["results"]) == 2


def test_the_schema_check_can_fail() -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(SARIF_SCHEMA).validate(
            {"version": "2.1.0", "runs": [{"results": [{"message": {"text": "x"}}]}]})


def test_github_format_is_one_workflow_command_per_finding(project: Path) -> None:
    done = check("--format", "github", "model.py", cwd=project)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "::error file=model.py,line=4,col=1,endLine=4,endColumn=10,title=gradguard GG001::"
        "GG001 `y.relu_()` overwrites the output of `torch.sigmoid` at line 3, which "
        "sigmoid's backward needs"
    ]


def test_github_format_escapes_what_would_end_a_property(project: Path) -> None:
    done = check("--format", "github", "100%, done: ok.py", cwd=project)
    assert done.stdout.startswith("::error file=100%25%2C done%3A ok.py,line=4,")
