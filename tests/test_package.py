"""The package as a user gets it: built clean, accepted by twine, working from a fresh venv.

The sdist and the wheel are built from a copy of the checkout's files (as pip would from
a published sdist); the wheel is installed with its dependencies from the package index
into a new virtualenv that has neither torch nor this checkout on its path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent


def run(*args: str | Path, cwd: Path | None = None, stdin: bytes | None = None,
        timeout: int = 600) -> subprocess.CompletedProcess[bytes]:
    # PYTHONDONTWRITEBYTECODE (set on some machines) makes setuptools warn that it skips
    # byte-compiling: a fact of the machine, not of the package.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return subprocess.run([str(a) for a in args], cwd=cwd, input=stdin, capture_output=True,
                          timeout=timeout, env=env)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(the folder with the sdist and the wheel, what building them printed)."""
    root = tmp_path_factory.mktemp("package")
    source = root / "src"
    tracked = run("git", "ls-files", "-z", cwd=REPO).stdout.decode().split("\0")
    for name in filter(None, tracked):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    built = run(sys.executable, "-m", "build", "--outdir", root / "dist", source)
    output = (built.stdout + built.stderr).decode()
    assert built.returncode == 0, output
    return root / "dist", output


@pytest.fixture(scope="module")
def venv(dist: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with only the wheel (and its dependencies) installed."""
    folder = tmp_path_factory.mktemp("venv") / "env"
    assert run(sys.executable, "-m", "venv", folder).returncode == 0
    [wheel] = dist[0].glob("gradguard-*.whl")
    installed = run(folder / "bin" / "python", "-m", "pip", "install", "--quiet", wheel)
    assert installed.returncode == 0, installed.stderr.decode()
    return folder


def test_sdist_and_wheel_build_without_warnings(dist: tuple[Path, str]) -> None:
    folder, output = dist
    assert sorted(p.name for p in folder.iterdir()) == [
        "gradguard-0.1.0-py3-none-any.whl", "gradguard-0.1.0.tar.gz"]
    warnings = [line for line in output.splitlines() if "warning" in line.lower()]
    assert warnings == []


def test_twine_accepts_both_files(dist: tuple[Path, str]) -> None:
    checked = run(sys.executable, "-m", "twine", "check", "--strict", *dist[0].iterdir())
    assert checked.returncode == 0, checked.stdout.decode()
    assert checked.stdout.decode().count("PASSED") == 2


def test_the_wheel_carries_an_spdx_license_and_no_torch_requirement(venv: Path) -> None:
    read = ("import importlib.metadata as m; "
            "print(m.distribution('gradguard').read_text('METADATA'))")
    shown = run(venv / "bin" / "python", "-c", read)
    metadata = shown.stdout.decode().splitlines()
    assert "License-Expression: MIT" in metadata
    assert not any(line.startswith("Requires-Dist: torch") and "extra" not in line
                   for line in metadata)
    assert "torch" not in run(venv / "bin" / "python", "-m", "pip", "freeze").stdout.decode()


def test_the_installed_command_checks_the_examples(venv: Path) -> None:
    done = run(venv / "bin" / "gradguard", "check", "examples/", cwd=REPO)
    assert done.returncode == 1, done.stderr.decode()
    lines = done.stdout.decode().splitlines()
    assert [line.split(": ")[0] for line in lines] == [
        "examples/unet3plus_seed.py:117:13", "examples/yolov5_loss_seed.py:143:9"]


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def test_the_installed_server_answers_initialize(venv: Path, tmp_path: Path) -> None:
    session = (frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"processId": os.getpid(), "rootUri": None,
                                 "capabilities": {}}})
               + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
               + frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
               + frame({"jsonrpc": "2.0", "method": "exit"}))
    done = run(venv / "bin" / "gradguard", "serve", cwd=tmp_path, stdin=session, timeout=120)
    header, _, rest = done.stdout.partition(b"\r\n\r\n")
    fields = dict(line.split(b": ", 1) for line in header.split(b"\r\n"))
    length = int(fields[b"Content-Length"])
    answer = json.loads(rest[:length])
    assert answer["id"] == 1
    assert answer["result"]["serverInfo"]["name"] == "gradguard"
    assert "textDocumentSync" in answer["result"]["capabilities"]


def test_the_test_setup_imports_torch_without_a_warning() -> None:
    # torch warns "Failed to initialize NumPy" when NumPy is missing: the test extra has it.
    done = run(sys.executable, "-c", "import torch; torch.ones(2).numpy()")
    assert (done.returncode, done.stderr.decode()) == (0, "")
