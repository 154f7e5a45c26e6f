"""A crash in the analysis costs the server one document's diagnostics, never itself:
the user sees that the document was not analysed, and everything else goes on.

The server runs under ``tests/faults.py``, which makes its real analysis raise on the
documents holding a marker (no input is known that crashes it on its own).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig

from tests.server.conftest import PUSH, RecordingClient, end_session, lines_of, make_client, start

pytestmark = pytest.mark.asyncio

FAULTS = Path(__file__).resolve().parents[1] / "faults.py"
MARKER = "# crash the analysis here"
HAZARD = """import torch
a = torch.randn(3, requires_grad=True)
b = a.exp()
b += 1
b.sum().backward()
"""


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[sys.executable, str(FAULTS), "raise-on", MARKER, "--", "serve"],
    client_factory=make_client))
async def faulty(lsp_client: RecordingClient) -> Any:
    yield
    await end_session(lsp_client)


async def test_a_failed_analysis_is_a_diagnostic_and_the_server_goes_on(
        faulty: RecordingClient, tmp_path: Path) -> None:
    session = await start(faulty, PUSH, tmp_path)
    broken = session.open(tmp_path / "broken.py", HAZARD + MARKER + "\n")
    [status] = await session.diagnostics(broken)
    assert status.code == "GG900" and status.range.start.line == 0
    assert "GradGuard's analysis failed (RuntimeError: injected fault)" in status.message

    other = session.open(tmp_path / "other.py", HAZARD)
    assert lines_of(await session.diagnostics(other)) == [4]

    # The broken document recovers once the text no longer crashes the analysis.
    session.replace_all(broken, HAZARD)
    assert lines_of(await session.diagnostics(broken)) == [4]
