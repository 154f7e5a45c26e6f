"""Hover on a finding over a real ``gradguard serve`` session: the chain from the save
to the write, the text ``gradguard explain`` prints; a torch call elsewhere still gets
its op facts.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from tests.server.conftest import (
    BOTH_PROFILES,
    PULL,
    PUSH,
    TIMEOUT,
    RecordingClient,
    lines_of,
    start,
)

pytestmark = pytest.mark.asyncio

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
REPO = CORPUS.parents[1]

SOURCE = """\
import torch

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
z = y.view(-1)
z.mul_(2)
s = torch.tanh(x)
"""


async def hover(client: RecordingClient, uri: str, line: int, character: int
                ) -> types.Hover | None:
    return await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(line, character))), TIMEOUT)


def text_of(answer: types.Hover | None) -> str:
    assert answer is not None
    assert isinstance(answer.contents, types.MarkupContent)
    return answer.contents.value


def explained(place: str, cwd: Path) -> str:
    result = subprocess.run([sys.executable, "-m", "gradguard", "explain", place],
                            capture_output=True, text=True, cwd=cwd, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize("profile", BOTH_PROFILES)
async def test_hovering_a_finding_shows_its_chain_and_a_torch_call_its_facts(
        client: RecordingClient, tmp_path: Path, profile: str) -> None:
    session = await start(client, profile, tmp_path)
    path = tmp_path / "main.py"
    uri = session.open(path, SOURCE)
    assert 6 in lines_of(await session.diagnostics(uri), "GG001")

    # On the write, away from the torch call's name: the chain alone.
    chain = text_of(await hover(client, uri, 5, 0))
    path.write_text(SOURCE, encoding="utf-8")
    assert chain == explained("main.py:6", tmp_path)
    assert chain.splitlines()[2].startswith("1. main.py:4 (save): `torch.sigmoid(x)`")
    assert "2. main.py:5 (view): `z = y.view(-1)`" in chain
    assert chain.splitlines()[-1].startswith("3. main.py:6 (write): `z.mul_()`")

    # On the in-place method's name: the chain, then what autograd keeps of the call.
    both = text_of(await hover(client, uri, 5, SOURCE.splitlines()[5].index("mul_")))
    assert both.startswith(chain)
    assert "**`Tensor.mul_`**" in both

    # On a torch call that is no finding: its facts, as before.
    facts = text_of(await hover(client, uri, 6, SOURCE.splitlines()[6].index("tanh")))
    assert facts.startswith("**`torch.tanh`** runs `aten::tanh`")
    assert "(save)" not in facts


async def test_hovering_a_finding_across_files_shows_the_steps_in_the_other_file(
        client: RecordingClient, tmp_path: Path) -> None:
    root = tmp_path / "unet3plus_split"
    shutil.copytree(CORPUS / "positive" / "unet3plus_split", root)
    session = await start(client, PUSH, root)
    uri = session.open(root / "models" / "UNet_3Plus.py")
    assert 96 in lines_of(await session.diagnostics(uri), "GG001")

    line = (root / "models" / "UNet_3Plus.py").read_text("utf-8").splitlines()[95]
    chain = text_of(await hover(client, uri, 95, line.index("Dropout")))
    steps = [s for s in chain.splitlines() if s[:1].isdigit()]
    assert steps[0].startswith("1. layers.py:19 (save): `nn.ReLU(inplace=True)` saves its "
                               "output")
    assert "the gradient of `self` reads `result`" in steps[0]
    assert steps[-1].startswith("5. UNet_3Plus.py:96 (write)")
    assert chain.split("\n\n---\n\n")[0] == explained("models/UNet_3Plus.py:96", root)


def _corpus_files() -> list[tuple[Path, set[int]]]:
    """Each positive's file with its in-place lines (of the saving rules' cases)."""
    from tools import corpus

    files: dict[Path, set[int]] = {}
    for case in corpus.load_manifest():
        if case.kind == "positive" and case.saving_lines:
            for site in case.inplace_lines:
                files.setdefault(case.site_path(site), set()).add(site[1])
    return sorted(files.items())


def _numbered(chain: str) -> list[str]:
    return [line for line in chain.splitlines() if line[:1].isdigit()]


async def test_every_finding_at_a_corpus_positive_hovers_with_its_chain(
        client: RecordingClient) -> None:
    """Each diagnostic of a saving rule at a positive's in-place line: its hover's chain
    starts at the saving line the diagnostic relates and ends at the diagnostic's line."""
    session = await start(client, PULL, CORPUS / "positive")
    wrong, hovered = [], 0
    for path, inplace in _corpus_files():
        uri = session.open(path)
        for diagnostic in await session.diagnostics(uri):
            line = diagnostic.range.start.line + 1
            if line not in inplace or diagnostic.code not in ("GG001", "GG004", "GG005"):
                continue
            # As the chain names another file: relative to the positive's folder (an
            # installed library's file too, family 13).
            saves = {f"{os.path.relpath(r.location.uri[len('file://'):], path.parent)}"
                     f":{r.location.range.start.line + 1}"
                     for r in diagnostic.related_information or []
                     if "for backward" in r.message}
            start_at = diagnostic.range.start
            text = text_of(await hover(client, uri, start_at.line, start_at.character))
            chains = [_numbered(chain) for chain in text.split("\n\n---\n\n")
                      if chain.startswith("**GG")]
            firsts = {steps[0].split(" ")[1] for steps in chains}
            lasts = {steps[-1].split(" ")[1] for steps in chains}
            hovered += 1
            if not saves & firsts or lasts != {f"{path.name}:{line}"}:
                wrong.append(f"{path.name}:{line}: saves {saves}, chains start {firsts} "
                             f"and end {lasts}")
        session.close(uri)
    assert wrong == []
    assert hovered >= 35
