"""Workspace diagnostics (``gradguard.diagnosticMode: workspace``): ``workspace/diagnostic``
answers with the hazards of every Python file of the workspace, opened or not, as
``gradguard check`` finds them, over real stdio sessions.

The client is Neovim 0.11's profile (it pulls diagnostics and shows progress), started
with ``initializationOptions: {"diagnosticMode": "workspace"}`` unless a test says
otherwise.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcMethodNotFound

from tests.server.conftest import (
    EXAMPLES,
    PULL,
    TIMEOUT,
    RecordingClient,
    Session,
    capabilities,
    lines_of,
    start,
)

pytestmark = pytest.mark.asyncio

WORKSPACE_MODE = {"diagnosticMode": "workspace"}

CLEAN = '''import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))
'''

# A hazard in model.py's importer: `out += 1` writes what the sigmoid in model.py saved.
MODEL = '''import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))
'''

TRAIN = '''import torch
from model import Head

head = Head()
out = head(torch.randn(2, 4))
out += 1
out.sum().backward()
'''

# A hazard in loss.py only train.py reveals: it passes a tensor that requires grad.
LOSS = '''import torch


def loss_of(out):
    probs = torch.sigmoid(out)
    loss = probs.sum()
    probs[:, 0] = 0
    return loss
'''

TRAIN_WITH_LOSS = '''import torch
from loss import loss_of

x = torch.randn(2, 4, requires_grad=True)
loss = loss_of(x * 2)
loss.backward()
'''


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return root


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    """The two seed examples, a clean module, and a virtualenv check would skip."""
    for name in ("unet3plus_seed.py", "yolov5_loss_seed.py"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    write(tmp_path, {"nets/block.py": CLEAN, "venv/pyvenv.cfg": "",
                     "venv/lib/hazard.py": (EXAMPLES / "unet3plus_seed.py").read_text("utf-8")})
    return tmp_path


async def report(session: Session, previous: list[types.PreviousResultId] | None = None
                 ) -> dict[str, types.WorkspaceDocumentDiagnosticReport]:
    answer = await asyncio.wait_for(session.client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=previous or [])), TIMEOUT)
    return {item.uri: item for item in answer.items}


def items(reports: dict[str, types.WorkspaceDocumentDiagnosticReport],
          path: Path) -> list[types.Diagnostic]:
    found = reports[path.as_uri()]
    assert isinstance(found, types.WorkspaceFullDocumentDiagnosticReport)
    return list(found.items)


async def test_workspace_mode_lists_the_hazards_of_files_never_opened(
        client: RecordingClient, seeds: Path) -> None:
    session = await start(client, PULL, seeds, WORKSPACE_MODE)

    reports = await report(session)

    provider = session.server_capabilities.diagnostic_provider
    assert isinstance(provider, types.DiagnosticOptions) and provider.workspace_diagnostics
    assert lines_of(items(reports, seeds / "unet3plus_seed.py"), "GG001") == [117]
    assert lines_of(items(reports, seeds / "yolov5_loss_seed.py"), "GG001") == [143]
    assert items(reports, seeds / "nets" / "block.py") == []
    # Files are chosen as `gradguard check` chooses them: a virtualenv is skipped.
    assert (seeds / "venv" / "lib" / "hazard.py").as_uri() not in reports
    # The pass that analysed them said so with work-done progress, begin to end.
    kinds = [type(value).__name__ for values in client.progress_reports.values()
             for value in values]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"


async def test_open_files_only_neither_advertises_nor_answers_workspace_diagnostics(
        client: RecordingClient, seeds: Path) -> None:
    session = await start(client, PULL, seeds)

    provider = session.server_capabilities.diagnostic_provider
    assert isinstance(provider, types.DiagnosticOptions)
    assert not provider.workspace_diagnostics
    with pytest.raises(JsonRpcMethodNotFound):
        await report(session)
    assert not (seeds / ".gradguard_cache").exists()


async def test_a_hazard_only_an_importer_reveals_is_listed_in_the_imported_file(
        client: RecordingClient, tmp_path: Path) -> None:
    root = write(tmp_path, {"loss.py": LOSS, "train.py": TRAIN_WITH_LOSS})
    session = await start(client, PULL, root, WORKSPACE_MODE)

    reports = await report(session)

    (hazard,) = items(reports, root / "loss.py")
    assert (hazard.code, hazard.range.start.line + 1) == ("GG001", 7)
    assert items(reports, root / "train.py") == []


async def test_a_hazard_only_an_importer_reveals_stays_in_the_imported_file_once_opened(
        client: RecordingClient, tmp_path: Path) -> None:
    root = write(tmp_path, {"loss.py": LOSS, "train.py": TRAIN_WITH_LOSS})
    session = await start(client, PULL, root, WORKSPACE_MODE)
    (closed,) = items(await report(session), root / "loss.py")

    # Opened alone, loss.py's own analysis cannot tell that `out` requires grad.
    uri = session.open(root / "loss.py")

    (shown,) = await session.diagnostics(uri)
    reports = await report(session)
    (listed,) = items(reports, root / "loss.py")
    assert (shown.code, shown.range.start.line + 1) == ("GG001", 7)
    assert listed == shown
    assert (shown.message, shown.range) == (closed.message, closed.range)
    assert items(reports, root / "train.py") == []


async def test_an_edit_of_the_opened_imported_file_moves_the_hazard_its_importer_reveals(
        client: RecordingClient, tmp_path: Path) -> None:
    root = write(tmp_path, {"loss.py": LOSS, "train.py": TRAIN_WITH_LOSS})
    session = await start(client, PULL, root, WORKSPACE_MODE)
    await report(session)
    uri = session.open(root / "loss.py")
    assert lines_of(await session.diagnostics(uri), "GG001") == [7]

    # Unsaved: a line above the write. The next pass finds the hazard in the new text.
    session.replace_all(uri, "# the loss\n" + LOSS)
    await report(session)

    assert lines_of(await session.diagnostics(uri), "GG001") == [8]
    # Unsaved: the write goes; so does the hazard.
    session.replace_all(uri, LOSS.replace("    probs[:, 0] = 0\n", ""))
    await report(session)

    assert await session.diagnostics(uri) == []


async def test_editing_an_imported_file_updates_the_report_of_its_importer(
        client: RecordingClient, tmp_path: Path) -> None:
    root = write(tmp_path, {"model.py": MODEL, "train.py": TRAIN})
    session = await start(client, PULL, root, WORKSPACE_MODE)
    assert lines_of(items(await report(session), root / "train.py"), "GG001") == [6]
    uri = session.open(root / "model.py")

    # Unsaved: the sigmoid, which saved its output, becomes a scale, which saves nothing.
    session.replace_all(uri, MODEL.replace("torch.sigmoid(self.fc(x))", "self.fc(x) * 2"))

    assert items(await report(session), root / "train.py") == []


async def test_saving_an_imported_file_updates_the_report_of_its_importer(
        client: RecordingClient, tmp_path: Path) -> None:
    root = write(tmp_path, {"model.py": MODEL.replace("torch.sigmoid(", "torch.abs("),
                            "train.py": TRAIN})
    session = await start(client, PULL, root, WORKSPACE_MODE)
    assert items(await report(session), root / "train.py") == []
    uri = session.open(root / "model.py")
    session.replace_all(uri, MODEL)

    (root / "model.py").write_text(MODEL, "utf-8")
    session.client.text_document_did_save(types.DidSaveTextDocumentParams(
        types.TextDocumentIdentifier(uri)))

    assert lines_of(items(await report(session), root / "train.py"), "GG001") == [6]


async def test_unchanged_files_come_back_as_unchanged_with_their_result_id(
        client: RecordingClient, seeds: Path) -> None:
    session = await start(client, PULL, seeds, WORKSPACE_MODE)
    first = await report(session)
    held = [types.PreviousResultId(uri, item.result_id) for uri, item in first.items()
            if item.result_id is not None]
    assert len(held) == len(first) == 3

    again = await report(session, held)

    assert all(isinstance(item, types.WorkspaceUnchangedDocumentDiagnosticReport)
               for item in again.values())
    assert {uri: item.result_id for uri, item in again.items()} == \
        {item.uri: item.value for item in held}


async def test_a_file_the_client_holds_that_is_gone_is_cleared(
        client: RecordingClient, seeds: Path) -> None:
    session = await start(client, PULL, seeds, WORKSPACE_MODE)
    first = await report(session)
    gone = seeds / "yolov5_loss_seed.py"
    held = [types.PreviousResultId(uri, item.result_id or "") for uri, item in first.items()]

    gone.unlink()
    session.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent(gone.as_uri(), types.FileChangeType.Deleted)]))

    assert items(await report(session, held), gone) == []


async def test_a_file_that_does_not_parse_or_is_not_utf8_gets_a_diagnostic_saying_so(
        client: RecordingClient, seeds: Path) -> None:
    (seeds / "broken.py").write_text("def f(:\n    pass\n", "utf-8")
    (seeds / "latin1.py").write_bytes(b"import torch\nname = '\xe9t\xe9'\n")
    session = await start(client, PULL, seeds, WORKSPACE_MODE)

    reports = await report(session)

    (broken,) = items(reports, seeds / "broken.py")
    assert broken.code == "GG900" and broken.range.start.line == 0
    assert "syntax" in broken.message.lower()
    (latin1,) = items(reports, seeds / "latin1.py")
    assert latin1.code == "GG900" and latin1.range.start.line == 1
    assert "UTF-8" in latin1.message
    # The other files are reported as ever.
    assert lines_of(items(reports, seeds / "unet3plus_seed.py"), "GG001") == [117]


async def test_a_second_session_reuses_the_results_check_cached_in_the_folder(
        client: RecordingClient, seeds: Path) -> None:
    done = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gradguard", "check", ".", cwd=seeds,
        stdout=asyncio.subprocess.DEVNULL)
    assert await done.wait() == 1  # hazards found, and cached in .gradguard_cache
    session = await start(client, PULL, seeds, WORKSPACE_MODE)

    reports = await report(session)

    assert lines_of(items(reports, seeds / "unet3plus_seed.py"), "GG001") == [117]
    assert client.progress_reports == {}  # nothing was left to analyse


async def test_an_open_document_is_reported_as_its_own_analysis_has_it_with_its_version(
        client: RecordingClient, seeds: Path) -> None:
    session = await start(client, PULL, seeds, WORKSPACE_MODE)
    uri = session.open(seeds / "unet3plus_seed.py")
    text = session.texts[uri]
    # Unsaved: the Dropout that overwrote the saved ReLU output no longer works in place.
    version = session.replace_all(uri, text.replace("p=0.5, inplace=True", "p=0.5"))
    own = await session.diagnostics(uri)

    reports = await report(session)

    opened = reports[uri]
    assert isinstance(opened, types.WorkspaceFullDocumentDiagnosticReport)
    assert opened.version == version
    assert list(opened.items) == own and lines_of(own, "GG001") == []
    assert lines_of(items(reports, seeds / "yolov5_loss_seed.py"), "GG001") == [143]


async def test_a_client_that_can_refresh_is_asked_to_pull_again_when_an_edit_changes_the_report(
        client: RecordingClient, tmp_path: Path) -> None:
    root = write(tmp_path, {"model.py": MODEL, "train.py": TRAIN})
    caps = capabilities(PULL)
    assert caps.workspace is not None
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(
        refresh_support=True)
    session = await start(client, PULL, root, WORKSPACE_MODE, caps)
    assert lines_of(items(await report(session), root / "train.py"), "GG001") == [6]
    uri = session.open(root / "model.py")
    before = client.diagnostic_refresh_count

    session.replace_all(uri, MODEL.replace("torch.sigmoid(self.fc(x))", "self.fc(x) * 2"))

    async def refreshed() -> None:
        while client.diagnostic_refresh_count == before:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(refreshed(), TIMEOUT)
    assert items(await report(session), root / "train.py") == []
