"""Progress on long runs: on a terminal, once a run has taken a second, ``check`` shows
files done of all, the time so far, and the file being analysed when one takes long;
``probe`` names each target as it runs. Only on stderr, only when stderr is a terminal:
a pipe sees nothing, and stdout (JSON here) is the same either way.

Each run is real: the CLI in a child process whose stderr is a pseudo-terminal.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import pytest

from gradguard.progress import Progress

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "examples" / "yolov5_loss_seed.py"


def drawn(write: Callable[[TextIO, float], None], wait: float) -> bytes:
    """What a Progress drew on a pseudo-terminal while ``write`` ran and ``wait`` passed."""
    master, slave = os.openpty()
    with open(slave, "w", closefd=True) as terminal:
        write(terminal, wait)
    output = b""
    os.set_blocking(master, False)
    try:
        while chunk := os.read(master, 65536):
            output += chunk
    except (BlockingIOError, OSError):
        pass
    os.close(master)
    return output


def one_slow_file(terminal: TextIO, wait: float) -> None:
    with Progress(terminal, total=3, noun="files", done=1) as progress:
        progress.started("a.py")
        progress.finished("a.py")
        progress.started("big.py")
        time.sleep(wait)
        progress.finished("big.py")


def test_a_run_past_a_second_on_a_terminal_shows_counts_elapsed_and_the_slow_file() -> None:
    shown = drawn(one_slow_file, 2.6).decode("utf-8", "replace")
    assert "files" in shown and "0:00:0" in shown  # the counts' noun and the elapsed time
    assert "/3" in shown
    assert "big.py (2 s)" in shown  # named once it has taken NAME_AFTER seconds


def test_a_run_under_a_second_shows_nothing() -> None:
    assert drawn(one_slow_file, 0.2) == b""


def test_nothing_is_drawn_when_the_stream_is_not_a_terminal(tmp_path: Path) -> None:
    with open(tmp_path / "stderr", "w") as log:
        one_slow_file(log, 1.3)
    assert (tmp_path / "stderr").read_text() == ""


# -- the CLI --------------------------------------------------------------------------


def tree(folder: Path, small: int) -> Path:
    """``small`` copies of a seed example and one file of 120 of them (some seconds of
    analysis)."""
    text = SEED.read_text("utf-8")
    for index in range(small):
        shutil.copy(SEED, folder / f"m{index:02}.py")
    big = "".join(text.replace("class ", f"class V{n}_").replace("def ", f"def v{n}_")
                  for n in range(120))
    (folder / "big.py").write_text(big, "utf-8")
    return folder


def run(args: list[str], cwd: Path, terminal: bool) -> tuple[int, bytes, bytes]:
    """(exit status, stdout, stderr) of ``gradguard ARGS``, stderr a pseudo-terminal or
    a pipe."""
    command = [sys.executable, "-m", "gradguard", *args]
    if not terminal:
        done = subprocess.run(command, cwd=cwd, capture_output=True, timeout=600)
        return done.returncode, done.stdout, done.stderr
    master, slave = os.openpty()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    stderr = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal's last writer has gone
            break
        if not chunk:
            break
        stderr += chunk
    os.close(master)
    assert process.stdout is not None
    stdout = process.stdout.read()
    return process.wait(timeout=600), stdout, stderr


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_check_on_a_terminal_shows_progress_on_stderr_and_the_same_json(
        tmp_path: Path, jobs: str) -> None:
    folder = tree(tmp_path, small=12)
    args = ["check", ".", "--format", "json", "--no-cache", "--jobs", jobs]
    status, stdout, stderr = run(args, folder, terminal=True)
    shown = stderr.decode("utf-8", "replace")
    # (Whether big.py runs past NAME_AFTER here depends on the machine: naming the file
    # that takes long is the first test's, on a clock of its own.)
    assert "13/13" in shown and "files" in shown
    quiet_status, quiet_stdout, quiet_stderr = run(args, folder, terminal=False)
    assert quiet_stderr == b""
    assert (status, json.loads(stdout)) == (quiet_status, json.loads(quiet_stdout))
    assert json.loads(stdout)  # the seeds' hazards: there is something to compare


@pytest.mark.slow
def test_check_into_a_pipe_draws_nothing_in_any_format(tmp_path: Path) -> None:
    folder = tree(tmp_path, small=4)
    for output in ("text", "sarif", "github"):
        _, stdout, stderr = run(["check", ".", "--format", output, "--no-cache"], folder,
                                terminal=False)
        assert stderr == b"", output
        assert b"\x1b[" not in stdout, output


TRAIN = """
import torch
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
y.relu_()
y.sum().backward()
"""


@pytest.mark.slow
@pytest.mark.torch
@pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                    reason="the probe runs under torch")
def test_probe_on_a_terminal_names_each_target_as_it_runs(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN, "utf-8")
    args = ["probe", "train.py", "--format", "json"]
    status, stdout, stderr = run(args, tmp_path, terminal=True)
    shown = stderr.decode("utf-8", "replace")
    assert "targets" in shown and "train.py (" in shown
    quiet_status, quiet_stdout, quiet_stderr = run(args, tmp_path, terminal=False)
    assert b"targets" not in quiet_stderr and b"\x1b[" not in quiet_stderr
    assert status == quiet_status == 1
    codes = [[f["code"] for f in r["findings"]] for r in json.loads(stdout)]
    assert codes == [[f["code"] for f in r["findings"]] for r in json.loads(quiet_stdout)]
