"""Hostile code under the probe: each case ends with a clear status, and leaves no process.

A script that ends its own process with ``os._exit`` is a script that ended (and the
targets after it still run), not a child that "could not start"; a segfault names its
line; an allocation without bound meets the memory limit and says so; megabytes of
prints are cut to their tail while they are written; an import that fails is an
exception at its line; processes the code starts are killed with the child, even
those that left its process group, whether the code ends, hangs or is cancelled; and
if the process that runs the probe dies, the child notices and ends itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gradguard.probe.runner import OUTPUT_LIMIT, ProbeResult, run_probes
from tests.probe.probekit import ROOT, line_of, torch_installed, write

pytestmark = [pytest.mark.torch, pytest.mark.slow,
              pytest.mark.skipif(not torch_installed(), reason="the probe runs under torch")]

TIMEOUT = 10.0  # the hang waits it out; an allocation loop must fit in it

# Each spawning script writes the pids of what it started next to itself.
SPAWN = """
        import os, subprocess, sys, time
        SLEEP = [sys.executable, "-c", "import time; time.sleep(600)"]
        def spawn(name):
            kept = subprocess.Popen(SLEEP)
            escaped = subprocess.Popen(SLEEP, start_new_session=True)  # leaves the group
            with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), name), "w") as f:
                f.write(f"{os.getpid()} {kept.pid} {escaped.pid}")
"""

SOURCES = {
    "prints_megabytes": """
        import sys
        for number in range(200_000):  # 20 MB of numbered lines
            sys.stdout.write(f"{number:099d}\\n")
        print("the end")
    """,
    "allocates_without_bound": """
        blocks = []
        while True:
            blocks.append(bytearray(50_000_000))
    """,
    "imports_what_is_missing": """
        import torch
        import no_such_package_here
    """,
    "raises_at_import": """
        import torch
        SETTINGS = {}
        WIDTH = SETTINGS["width"]


        def step():
            pass
    """,
    "spawns_and_ends": SPAWN + """
        spawn("spawns_and_ends.pids")
        print("spawned")
    """,
    "exits_zero": """
        import os
        print("done, skipping the cleanup")
        os._exit(0)
    """,
    "exits_three": """
        import os
        import torch
        os._exit(3)
    """,
    "clean": """
        import torch
        x = torch.randn(3, requires_grad=True)
        torch.sigmoid(x).sum().backward()
        print("clean")
    """,
    "segfaults": """
        import ctypes
        print("about to crash", flush=True)
        ctypes.string_at(0)
    """,
    "spawns_and_hangs": SPAWN + """
        spawn("spawns_and_hangs.pids")
        while True:
            time.sleep(0.05)
    """,
}
ORDER = ["prints_megabytes", "allocates_without_bound", "imports_what_is_missing",
         "raises_at_import::step", "spawns_and_ends", "exits_zero", "exits_three", "clean",
         "segfaults", "spawns_and_hangs", "clean"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("hostile")
    return {name: write(directory, f"{name}.py", text) for name, text in SOURCES.items()}


@pytest.fixture(scope="module")
def results(files: dict[str, Path]) -> list[ProbeResult]:
    targets = []
    for entry in ORDER:
        name, _, function = entry.partition("::")
        targets.append(f"{files[name]}::{function}" if function else str(files[name]))
    return run_probes(targets, timeout=TIMEOUT, memory_mb=2048)  # "clean" twice: a list


def result_of(results: list[ProbeResult], entry: str, occurrence: int = 0) -> ProbeResult:
    indexes = [i for i, name in enumerate(ORDER) if name == entry]
    return results[indexes[occurrence]]


def alive(pid: int) -> bool:
    """Running, or stopped: anything but gone or a zombie waiting for its reaper."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            state = file.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def pids(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()]


def test_megabytes_of_prints_come_back_as_their_tail_with_a_note(
        results: list[ProbeResult]) -> None:
    result = result_of(results, "prints_megabytes")
    assert (result.status, result.error) == ("ok", None)
    assert result.stdout.startswith("[... ") and " characters cut ...]\n" in result.stdout
    assert result.stdout.endswith("\nthe end\n")
    assert len(result.stdout) < OUTPUT_LIMIT + 100
    # Nothing lost while the file was cut as it grew: the whole lines kept count up
    # without a gap to the last one.
    numbers = [int(line) for line in result.stdout.splitlines()[2:-1]]
    assert numbers == list(range(200_000 - len(numbers), 200_000))


def test_an_allocation_without_bound_meets_the_memory_limit_and_says_so(
        results: list[ProbeResult], files: dict[str, Path]) -> None:
    result = result_of(results, "allocates_without_bound")
    path = files["allocates_without_bound"]
    assert result.status == "raised"
    assert result.error == (f"{path} raised MemoryError at {path}:"
                            f"{line_of(path, 'blocks.append')} (the probe limits its memory "
                            "to 2048 MB; raise it with --memory-mb)")


@pytest.mark.parametrize(("entry", "raised", "snippet"), [
    ("imports_what_is_missing",
     "ModuleNotFoundError: No module named 'no_such_package_here'", "import no_such"),
    ("raises_at_import::step", "KeyError: 'width'", 'WIDTH = SETTINGS["width"]'),
])
def test_an_import_that_fails_is_an_exception_at_its_line(
        results: list[ProbeResult], files: dict[str, Path], entry: str, raised: str,
        snippet: str) -> None:
    result = result_of(results, entry)
    path = files[entry.partition("::")[0]]
    assert result.status == "raised"
    assert result.error is not None
    assert result.error.endswith(f" raised {raised} at {path}:{line_of(path, snippet)}")


def test_os_exit_ends_the_script_not_the_probe_and_later_targets_still_run(
        results: list[ProbeResult], files: dict[str, Path]) -> None:
    zero, three = result_of(results, "exits_zero"), result_of(results, "exits_three")
    path = files["exits_three"]
    assert (zero.status, zero.error, zero.stdout) == ("ok", None, "done, skipping the cleanup\n")
    assert three.status == "exit"
    assert three.error == (f"{path}: the script ended its process with os._exit(3) at "
                           f"{path}:{line_of(path, 'os._exit(3)')}")
    assert (result_of(results, "clean").status, result_of(results, "clean").stdout) == (
        "ok", "clean\n")


def test_a_segfault_is_a_crash_at_its_line(results: list[ProbeResult],
                                           files: dict[str, Path]) -> None:
    result = result_of(results, "segfaults")
    path = files["segfaults"]
    assert result.status == "crashed"
    assert result.error == (f"{path}: the probe's Python process crashed (signal SIGSEGV) in "
                            f"{path}:{line_of(path, 'ctypes.string_at(0)')} "
                            "(`ctypes.string_at(0)`)")
    assert result.stdout == "about to crash\n"


@pytest.mark.parametrize("entry", ["spawns_and_ends", "spawns_and_hangs"])
def test_processes_the_code_started_do_not_outlive_the_probe(
        results: list[ProbeResult], files: dict[str, Path], entry: str) -> None:
    result = result_of(results, entry)
    assert result.status == ("ok" if entry == "spawns_and_ends" else "timeout")
    child, kept, escaped = pids(files[entry].with_suffix(".pids"))
    assert [p for p in (child, kept, escaped) if alive(p)] == []
    # ... and the run after them was not disturbed.
    assert result_of(results, "clean", 1).status == "ok"


def test_the_child_ends_itself_when_the_process_running_the_probe_dies(
        tmp_path: Path) -> None:
    write(tmp_path, "spawner.py", SPAWN + """
        spawn("orphaned.pids")
        while True:
            time.sleep(0.05)
    """)
    runner = subprocess.Popen(
        [sys.executable, "-c", "from gradguard.probe.runner import run_probe; "
                               f"run_probe({str(tmp_path / 'spawner.py')!r}, timeout=600)"],
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    marker = tmp_path / "orphaned.pids"
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() or len(marker.read_text().split()) < 3:
            assert time.monotonic() < deadline, "the probed script never started"
            assert runner.poll() is None
            time.sleep(0.1)
        os.kill(runner.pid, signal.SIGKILL)  # no cleanup of its own: the child must notice
        runner.wait()
        started = pids(marker)
        deadline = time.monotonic() + 15
        while any(alive(p) for p in started) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [p for p in started if alive(p)] == []
    finally:
        runner.kill()
        if marker.exists():
            for pid in pids(marker):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
