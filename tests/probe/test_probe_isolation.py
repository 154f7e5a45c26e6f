"""The probe runs user code in a child process, and nothing the code does reaches us.

A hang meets the wall-clock timeout, a crash of the interpreter or an exception comes
back as a message naming the line, the memory limit ends a runaway allocation, and
what the code prints is returned apart from the findings. One target's crash does
not cost the targets after it. Cancelling kills the child at once, from a thread or
by cancelling an asyncio task. Without torch the child says what to install, and the
gradguard package itself never imports torch.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gradguard.probe.runner import ProbeResult, run_probe, run_probe_async
from tests.probe.probekit import ROOT, line_of, probe_all, torch_installed, write

pytestmark = [pytest.mark.torch, pytest.mark.slow,
              pytest.mark.skipif(not torch_installed(), reason="the probe runs under torch")]

PRINTS = """
import os, sys
import torch
print("to stdout")
print("to stderr", file=sys.stderr)
os.write(1, b"straight to fd 1\\n")
x = torch.randn(3, requires_grad=True)
y = x.exp()
y.add_(1)
y.sum().backward()
"""
RAISES = """
def load():
    raise ValueError("no such checkpoint")

load()
"""
ABORTS = """
import os
import torch
x = torch.randn(3, requires_grad=True)
y = torch.tanh(x)
y.mul_(2)
print("the write happened", flush=True)
os.abort()
"""
HANGS = """
import time
print("started", flush=True)
while True:
    time.sleep(0.05)
"""
ALLOCATES = """
import torch
big = torch.empty(40 * 1024 ** 3, dtype=torch.uint8)
"""
FUNCTIONS = """
def needs_arguments(model, steps):
    pass

VALUE = 3
"""
TIMEOUT = 3.0


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("isolation")
    sources = {"prints": PRINTS, "raises": RAISES, "aborts": ABORTS, "hangs": HANGS,
               "allocates": ALLOCATES, "functions": FUNCTIONS}
    return {name: write(directory, f"{name}.py", text) for name, text in sources.items()}


@pytest.fixture(scope="module")
def results(files: dict[str, Path]) -> dict[str, ProbeResult]:
    # The crash and the hang come last: each costs the child, and the targets after
    # them run in a new one.
    order = ["prints", "raises", "allocates", "aborts", "hangs"]
    targets = [str(files[name]) for name in order] + [
        str(files["functions"].with_name("missing.py")),
        f"{files['functions']}::needs_arguments", f"{files['functions']}::VALUE",
        f"{files['functions']}::absent"]
    started = time.monotonic()
    by_target = probe_all(targets, timeout=TIMEOUT, memory_mb=4096)
    by_target["elapsed"] = ProbeResult("elapsed", duration=time.monotonic() - started)
    return {name: by_target[str(files[name])] for name in order} | {
        "missing": by_target[targets[5]], "needs_arguments": by_target[targets[6]],
        "not_callable": by_target[targets[7]], "absent": by_target[targets[8]]}


def test_prints_are_returned_apart_from_the_findings(results: dict[str, ProbeResult],
                                                     files: dict[str, Path]) -> None:
    result = results["prints"]
    assert result.stdout == "to stdout\nstraight to fd 1\n"
    assert result.stderr.startswith("to stderr\n")
    [finding] = result.findings
    assert finding["line"] == line_of(files["prints"], "y.add_(1)")


def test_an_exception_is_reported_with_its_line(results: dict[str, ProbeResult],
                                                files: dict[str, Path]) -> None:
    result = results["raises"]
    line = line_of(files["raises"], 'raise ValueError("no such checkpoint")')
    assert result.status == "raised"
    assert result.error == (f"{files['raises']} raised ValueError: no such checkpoint at "
                            f"{files['raises']}:{line}")
    # The traceback, as python would print it, starts in the user's code.
    assert result.stderr.startswith("Traceback (most recent call last):\n  File "
                                    f'"{files["raises"]}"')
    assert "gradguard" not in result.stderr


def test_the_memory_limit_ends_a_runaway_allocation(results: dict[str, ProbeResult]) -> None:
    result = results["allocates"]
    assert result.status == "raised"
    assert "can't allocate memory" in (result.error or "")
    assert "the probe limits its memory to 4096 MB; raise it with --memory-mb" in (
        result.error or "")


def test_os_abort_is_a_crash_at_its_line_and_the_finding_before_it_survives(
        results: dict[str, ProbeResult], files: dict[str, Path]) -> None:
    result = results["aborts"]
    assert result.status == "crashed"
    assert result.error == (f"{files['aborts']}: the probe's Python process crashed "
                            f"(signal SIGABRT) in {files['aborts']}:"
                            f"{line_of(files['aborts'], 'os.abort()')} (`os.abort()`)")
    assert result.stdout == "the write happened\n"
    [finding] = result.findings  # reported when the write happened, not at backward
    assert finding["line"] == line_of(files["aborts"], "y.mul_(2)")
    assert finding["torch_error"] is None


def test_a_hang_meets_the_timeout_and_names_the_line(results: dict[str, ProbeResult],
                                                     files: dict[str, Path]) -> None:
    result = results["hangs"]
    assert result.status == "timeout"
    assert result.error is not None
    assert result.error.startswith(f"{files['hangs']}: timed out after 3 s and was stopped, "
                                   f"while running {files['hangs']}:")
    # Where the dump caught it: in the sleep, or between two.
    assert result.error.endswith((
        f":{line_of(files['hangs'], 'time.sleep(0.05)')} (`time.sleep(0.05)`)",
        f":{line_of(files['hangs'], 'while True:')} (`while True:`)"))
    assert result.stdout == "started\n"
    assert TIMEOUT <= result.duration < TIMEOUT + 5


def test_targets_after_a_crash_and_a_hang_still_run(results: dict[str, ProbeResult]) -> None:
    assert results["missing"].status == "bad-target"


@pytest.mark.parametrize(("name", "message"), [
    ("missing", "no such file: "),
    ("needs_arguments", "needs_arguments() needs arguments (model, steps); the probe calls "
                        "a function with none"),
    ("not_callable", "'VALUE' is a int, not a function"),
    ("absent", "has no 'absent'"),
])
def test_a_target_that_cannot_run_says_why(results: dict[str, ProbeResult], name: str,
                                           message: str) -> None:
    result = results[name]
    assert result.status == "bad-target"
    assert message in (result.error or "")


def test_a_cancel_event_stops_the_child_at_once(files: dict[str, Path]) -> None:
    cancel = threading.Event()
    seen: list[str] = []

    def on_event(event: dict[str, object]) -> None:
        seen.append(str(event["event"]))
        if event["event"] == "start":
            cancel.set()

    started = time.monotonic()
    result = run_probe(str(files["hangs"]), timeout=120, cancel_event=cancel,
                       on_event=on_event)
    assert (result.status, result.error) == ("cancelled", "cancelled")
    assert seen[0] == "start"
    assert time.monotonic() - started < 60  # the torch import, not the 120 s timeout


def test_cancelling_the_async_task_kills_the_child(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = write(tmp_path, "sleeps.py", f"""
        import os, time
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        while True:
            time.sleep(0.05)
    """)

    async def scenario() -> None:
        started = asyncio.Event()
        task = asyncio.create_task(run_probe_async(
            str(script), timeout=120,
            on_event=lambda event: started.set() if event["event"] == "start" else None))
        await asyncio.wait_for(started.wait(), 120)
        while not pid_file.exists() or not pid_file.read_text():
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_without_torch_the_child_says_to_install_the_probe_extra(files: dict[str, Path]) -> None:
    python = getattr(sys, "_base_executable", sys.executable)
    check = subprocess.run([python, "-c", "import torch"], capture_output=True)
    if check.returncode == 0:
        pytest.skip(f"{python} has torch too")
    result = run_probe(str(files["raises"]), python=python, timeout=30)
    assert result.status == "fatal"
    assert "torch is not installed" in (result.error or "")
    assert "pip install 'gradguard[probe]'" in (result.error or "")


def test_the_gradguard_package_never_imports_torch() -> None:
    code = ("import sys, gradguard.cli.main, gradguard.probe, gradguard.probe.command, "
            "gradguard.probe.config; gradguard.cli.main.build_parser(); "
            "print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert done.stdout.strip() == "False"
