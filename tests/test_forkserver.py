"""tools/forkserver.py runs each script as ``python SCRIPT ARGS`` would, in a process
forked from one that has imported torch: the corpus's labels and the fixes' checks are
judged by what these runs return, so they must be what a fresh interpreter returns."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.forkserver import ForkServer

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    with ForkServer() as running:
        yield running


def script(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def both(server: ForkServer, path: Path, *args: str) -> tuple[
        subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    forked = server.run([str(path), *args], path.parent, timeout=120)
    fresh = subprocess.run([sys.executable, str(path), *args], capture_output=True,
                           text=True, cwd=path.parent, timeout=120)
    return forked, fresh


SCRIPTS = {
    "where.py": """
        import os, sys
        print(__name__, sys.argv[1:], os.getcwd() == os.path.dirname(os.path.abspath(__file__)))
        print(sys.path[0] == os.path.dirname(os.path.abspath(__file__)))
        print(sys.stdin.read() == "")
        import helper
        print(helper.VALUE)
    """,
    "exits_three.py": "import sys\nprint('before')\nsys.exit(3)\n",
    "exits_with_a_message.py": "raise SystemExit('stopped here')\n",
    "raises_in_backward.py": """
        import torch
        x = torch.ones(3, requires_grad=True)
        y = torch.sigmoid(x)
        y.mul_(2)
        y.sum().backward()
    """,
    "segfaults.py": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_ends_as_it_does_in_a_fresh_interpreter(
        server: ForkServer, tmp_path: Path, name: str) -> None:
    script(tmp_path, "helper.py", "VALUE = 'imported from the script folder'\n")
    forked, fresh = both(server, script(tmp_path, name, SCRIPTS[name]), "an argument")
    assert forked.returncode == fresh.returncode
    assert forked.stdout == fresh.stdout
    # the last line names the error; the traceback's frames above it differ (runpy's)
    assert forked.stderr.strip().splitlines()[-1:] == fresh.stderr.strip().splitlines()[-1:]


def test_each_script_starts_from_a_clean_interpreter(server: ForkServer,
                                                     tmp_path: Path) -> None:
    leaves = script(tmp_path, "leaves.py", """
        import torch
        torch.set_default_dtype(torch.float64)
        torch.Tensor.left_behind = True
    """)
    looks = script(tmp_path, "looks.py", """
        import torch
        print(torch.get_default_dtype(), hasattr(torch.Tensor, "left_behind"))
    """)
    server.run([str(leaves)], tmp_path, timeout=120)
    assert server.run([str(looks)], tmp_path, timeout=120).stdout == "torch.float32 False\n"


def test_a_script_that_hangs_is_killed_with_what_it_started(server: ForkServer,
                                                            tmp_path: Path) -> None:
    pid_file = tmp_path / "started.pid"
    hangs = script(tmp_path, "hangs.py", f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(600)
    """)
    with pytest.raises(subprocess.TimeoutExpired):
        server.run([str(hangs)], tmp_path, timeout=5)
    started = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        for _ in range(100):  # killed, then reaped by init
            os.kill(started, 0)
            __import__("time").sleep(0.05)
