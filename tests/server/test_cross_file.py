"""Hazards across files, in the editor: the in-place file alone is open, and the files it
imports are read from the workspace (or from the editor, when they are open too).

The projects are the multi-file cases of the accuracy corpus (tests/corpus), each a real
report in its repository's own layout, judged by torch.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from lsprotocol import types

from tests.server.conftest import (
    BOTH_PROFILES,
    PUSH,
    TIMEOUT,
    RecordingClient,
    Session,
    lines_of,
    start,
)

pytestmark = pytest.mark.asyncio

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

# (case, the file with the in-place op, its line, the other file with the saving op)
CASES = [
    ("srgan_split", "train.py", 65, "model.py"),
    ("unet3plus_split", "models/UNet_3Plus.py", 96, "models/layers.py"),
    ("maddpg_split", "maddpg/maddpg.py", 71, "maddpg/actor_critic.py"),
]


def _project(tmp_path: Path, kind: str, case: str) -> Path:
    root = tmp_path / case
    shutil.copytree(CORPUS / kind / case, root)
    return root


@pytest.mark.parametrize("profile", BOTH_PROFILES)
@pytest.mark.parametrize(("case", "inplace", "line", "saver"), CASES)
async def test_a_hazard_whose_saving_op_is_in_an_imported_file_is_flagged_at_the_write(
        client: RecordingClient, tmp_path: Path, profile: str, case: str, inplace: str,
        line: int, saver: str) -> None:
    root = _project(tmp_path, "positive", case)
    session = await start(client, profile, root)
    uri = session.open(root / inplace)

    diagnostics = await session.diagnostics(uri)

    assert line in lines_of(diagnostics)
    (hazard,) = [d for d in diagnostics if d.range.start.line + 1 == line]
    saving = [r.location.uri for r in hazard.related_information or []]
    assert (root / saver).as_uri() in saving  # related information in the other file


@pytest.mark.parametrize(("case", "inplace", "line", "saver"), CASES)
async def test_the_fixed_projects_show_nothing(
        client: RecordingClient, tmp_path: Path, case: str, inplace: str, line: int,
        saver: str) -> None:
    root = _project(tmp_path, "fixed", case)
    session = await start(client, PUSH, root)
    uri = session.open(root / inplace)

    assert await session.diagnostics(uri) == []


async def _until_gone(session: Session, client: RecordingClient, uri: str,
                      line: int) -> None:
    """Wait until the diagnostics pushed last for ``uri`` no longer flag ``line``."""
    async def gone() -> None:
        while line in lines_of(session.pushed(uri)[-1].diagnostics):
            client.arrived.clear()
            await client.arrived.wait()

    await asyncio.wait_for(gone(), TIMEOUT)


# unetConv2's ReLU, which saved the output the cls branch's Dropout then overwrites.
SAVING_RELU = "nn.ReLU(inplace=True), )  # [saves]"


async def test_an_edit_to_an_open_imported_file_changes_the_importers_diagnostics(
        client: RecordingClient, tmp_path: Path) -> None:
    root = _project(tmp_path, "positive", "unet3plus_split")
    session = await start(client, PUSH, root)
    model = session.open(root / "models/UNet_3Plus.py")
    assert 96 in lines_of(await session.diagnostics(model))
    layers_path = root / "models/layers.py"
    layers = session.open(layers_path)
    await session.diagnostics(layers)
    text = layers_path.read_text("utf-8")
    assert text.count(SAVING_RELU) == 1

    # With the ReLU replaced by an identity, nothing saves the encoder's output.
    session.replace_all(layers, text.replace(SAVING_RELU, "nn.Identity(), )"))

    await _until_gone(session, client, model, 96)


async def test_a_file_saved_by_another_program_is_read_again(
        client: RecordingClient, tmp_path: Path) -> None:
    root = _project(tmp_path, "positive", "unet3plus_split")
    session = await start(client, PUSH, root)
    model = session.open(root / "models/UNet_3Plus.py")
    assert 96 in lines_of(await session.diagnostics(model))

    layers = root / "models/layers.py"
    layers.write_text(layers.read_text("utf-8").replace(SAVING_RELU, "nn.Identity(), )"),
                      "utf-8")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent(layers.as_uri(), types.FileChangeType.Changed)]))

    await _until_gone(session, client, model, 96)
