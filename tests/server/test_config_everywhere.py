"""One ``[tool.gradguard]``, one answer: ``gradguard check``, the language server and
``gradguard probe`` read the same pyproject.toml (``gradguard.config``) and report the
same findings at the same severities."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from tests.server.conftest import PUSH, RecordingClient, start

pytestmark = pytest.mark.asyncio

# A saved sigmoid output overwritten (GG001, line 5), then a leaf written in place
# (GG002, line 6), which autograd refuses when it runs.
MODEL = """import torch
w = torch.randn(4, requires_grad=True)
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
y.relu_()
w.add_(1)
"""
PYPROJECT = """[tool.gradguard]
ignore = ["GG002"]
severity = { GG001 = "warning" }
"""
SEVERITY_NAMES = {types.DiagnosticSeverity.Error: "error",
                  types.DiagnosticSeverity.Warning: "warning",
                  types.DiagnosticSeverity.Information: "information",
                  types.DiagnosticSeverity.Hint: "hint"}


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gradguard", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _checked(cwd: Path) -> list[tuple[int, str, str]]:
    done = _run("check", "--format", "json", "--no-cache", "model.py", cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return [(f["line"], f["code"], f["severity"]) for f in json.loads(done.stdout)]


def _probed(cwd: Path) -> list[tuple[int, str, str]]:
    done = _run("probe", "model.py", "--format", "json", cwd=cwd)
    (result,) = json.loads(done.stdout)
    return sorted((f["line"], f["code"], f["severity"]) for f in result["findings"])


@pytest.mark.torch
@pytest.mark.slow
async def test_check_serve_and_probe_apply_the_same_pyproject(
        client: RecordingClient, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    unconfigured = [(5, "GG001", "error"), (6, "GG002", "error")]
    assert _checked(tmp_path) == _probed(tmp_path) == unconfigured
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")

    by_check = _checked(tmp_path)
    by_probe = _probed(tmp_path)

    session = await start(client, PUSH, tmp_path)
    uri = session.open(tmp_path / "model.py")
    by_server = sorted((d.range.start.line + 1, str(d.code),
                        SEVERITY_NAMES[d.severity or types.DiagnosticSeverity.Error])
                       for d in await session.diagnostics(uri))

    assert by_check == by_probe == by_server == [(5, "GG001", "warning")]
