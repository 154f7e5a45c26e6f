"""An installed package upgraded while the editor is open: what the server learnt of the
old version no longer holds, and the next analysis reads the new one.

The server follows calls into installed packages that use torch and keeps what it read
of them from one keystroke to the next. ``pip install -U`` replaces the package's files
and its ``dist-info`` folder (a new version). The server notices at its next analysis
(the site folder's modification time, one stat) and reads the package again, here a
real ``gradguard serve`` whose interpreter finds the package through ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig

from tests.server.conftest import (
    PUSH,
    RecordingClient,
    end_session,
    lines_of,
    make_client,
    start,
)
from tests.test_installed_libraries import install

pytestmark = pytest.mark.asyncio

# The server's search path holds this folder from its start; each test lays the package
# out in it afresh.
SITE = Path(tempfile.mkdtemp(prefix="gradguard-site-"))

SAFE = "import torch\n\n\ndef scale(t):\n    return t * 2\n"
WRITES = "import torch\n\n\ndef scale(t):\n    return t.mul_(2)\n"

TRAIN = """\
import torch
from scalelib import scale

x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
scale(y)
y.sum().backward()
"""


def lay_out(version: str, layers: str) -> None:
    """``scalelib`` at ``version`` in the site folder, as pip leaves it after an install
    (the old version's files and ``dist-info`` gone)."""
    for old in SITE.glob("scalelib*"):
        shutil.rmtree(old)
    install(SITE, "scalelib", {"__init__.py": "from .layers import *\n",
                               "layers.py": layers}, version=version)
    # A second apart: the folder's new time differs on any file system's resolution.
    stamp = SITE.stat().st_mtime_ns + 1_000_000_000
    os.utime(SITE, ns=(stamp, stamp))


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[sys.executable, "-m", "gradguard", "serve"],
    client_factory=make_client,
    server_env={**os.environ, "PYTHONPATH": str(SITE)}))
async def client(lsp_client: RecordingClient) -> Any:
    yield
    await end_session(lsp_client)


async def test_an_upgrade_that_makes_the_library_write_is_seen_at_the_next_edit(
        client: RecordingClient, tmp_path: Path) -> None:
    lay_out("1.0", SAFE)
    session = await start(client, PUSH, tmp_path)
    uri = session.open(tmp_path / "train.py", TRAIN)
    assert lines_of(await session.diagnostics(uri)) == []

    lay_out("1.1", WRITES)
    version = session.replace_all(uri, TRAIN + "# after the upgrade\n")

    diagnostics = await session.diagnostics(uri, version)
    assert lines_of(diagnostics, "GG001") == [6]  # scale(y): 1.1 writes into y in place
    (hazard,) = diagnostics
    assert any(r.location.uri.endswith("scalelib/layers.py")
               for r in hazard.related_information or [])


async def test_a_downgrade_back_to_the_safe_version_clears_the_report(
        client: RecordingClient, tmp_path: Path) -> None:
    lay_out("1.1", WRITES)
    session = await start(client, PUSH, tmp_path)
    uri = session.open(tmp_path / "train.py", TRAIN)
    assert lines_of(await session.diagnostics(uri), "GG001") == [6]

    lay_out("1.0", SAFE)
    version = session.replace_all(uri, TRAIN + "# after the downgrade\n")

    assert lines_of(await session.diagnostics(uri, version)) == []
