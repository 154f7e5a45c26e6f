"""Hover over a real ``gradguard serve`` session: on a torch call, the editor shows what
its backward keeps, in derivatives.yaml's own words.

The expected formulas are not written here: each case names the derivatives.yaml entry
its call runs, and the test reads that entry from the installed torch's torchgen and
checks every backward line of it is shown, key and formula, as the yaml writes them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from gradguard.server.positions import units
from tests.derivatives_yaml import backward_lines
from tests.server.conftest import BOTH_PROFILES, PUSH, TIMEOUT, RecordingClient, capabilities, start

pytestmark = pytest.mark.asyncio

# (statement, the name or operator hovered, the derivatives.yaml entry it runs)
CASES = [
    ("s = torch.sigmoid(x)", "sigmoid", "sigmoid"),
    ("s = torch.tanh(x)", "tanh", "tanh"),
    ("s = x.exp()", "exp", "exp"),
    ("s = torch.log(x)", "log", "log"),
    ("s = x.sqrt()", "sqrt", "sqrt"),
    ("s = torch.relu(x)", "relu", "relu"),
    ("s = F.softmax(x, -1)", "softmax", "_softmax"),
    ("s = F.log_softmax(x, -1)", "log_softmax", "_log_softmax"),
    ("s = a * b", "*", "mul.Tensor"),
    ("s = a / b", "/", "div.Tensor"),
    ("s = a + b", "+", "add.Tensor"),
    ("s = a - b", "-", "sub.Tensor"),
    ("s = a @ b", "@", "mm"),
    ("s = x.pow(3)", "pow", "pow.Tensor_Scalar"),
    ("s = torch.bmm(a, b)", "bmm", "bmm"),
    ("s = F.conv2d(x, w)", "conv2d", "convolution"),
    ("conv = nn.Conv2d(3, 3, 3)", "Conv2d", "convolution"),
    ("s = F.gelu(x)", "gelu", "gelu"),
    ("s = F.silu(x)", "silu", "silu"),
    ("s = F.leaky_relu(x)", "leaky_relu", "leaky_relu"),
    ("s = F.elu(x)", "elu", "elu"),
    ("s = torch.abs(x)", "abs", "abs"),
    ("s = x.sin()", "sin", "sin"),
    ("s = x.cos()", "cos", "cos"),
    ("s = torch.sum(x)", "sum", "sum"),
    ("s = x.mean()", "mean", "mean"),
    ("s = torch.split(x, 2)", "split", "split.Tensor"),
    ("s = x.unbind(0)", "unbind", "unbind.int"),
    ("s = torch.max(x, 1)", "max", "max.dim"),
    ("s = x.clamp(0, 1)", "clamp", "clamp"),
    ("s = torch.cat([a, b])", "cat", "cat"),
    ("s = x.transpose(0, 1)", "transpose", "transpose.int"),
    ("s = F.hardtanh(x)", "hardtanh", "hardtanh"),
    ("s = torch.erf(x)", "erf", "erf"),
    ("s = x.reciprocal()", "reciprocal", "reciprocal"),
    ("s = F.mse_loss(a, b)", "mse_loss", "mse_loss"),
    ("s = torch.addmm(c, a, b)", "addmm", "addmm"),
    ("s = torch.where(m, a, b)", "where", "where.self"),
    ("s = F.layer_norm(x, (3,))", "layer_norm", "native_layer_norm"),
    ("bn = nn.BatchNorm2d(3)", "BatchNorm2d", "native_batch_norm"),
    ("s = x.view(-1)", "view", "view"),
    ("s = -x", "-", "neg"),
    ("x += y", "+=", "add.Tensor"),
    ("s = torch.atan(x)", "atan", "atan"),
    ("s = x.log1p()", "log1p", "log1p"),
]
# Every statement follows a string with an emoji (two UTF-16 units, one code point) on
# its line, so a column in the wrong units lands on the wrong name.
PREFIX = '    t = "😀"; '
HEADER = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
          "def f(x, y, a, b, c, w, m):\n")
SOURCE = HEADER + "".join(f"{PREFIX}{statement}\n" for statement, _, _ in CASES)
FIRST_LINE = HEADER.count("\n")


def where(line: str, word: str, encoding: str) -> tuple[int, int]:
    """The client columns of the start and end of ``word`` in the statement on ``line``."""
    column = line.index(word, len(PREFIX))
    end = column + len(word)
    return units(line[:column], encoding), units(line[:end], encoding)  # type: ignore[arg-type]


async def hover(client: RecordingClient, uri: str, line: int, character: int
                ) -> types.Hover | None:
    return await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(line, character))), TIMEOUT)


def markdown_of(answer: types.Hover | None) -> str:
    assert answer is not None
    assert isinstance(answer.contents, types.MarkupContent)
    assert answer.contents.kind == types.MarkupKind.Markdown
    return answer.contents.value


@pytest.mark.parametrize("profile", BOTH_PROFILES)
async def test_hovering_a_torch_call_shows_the_derivatives_yaml_formulas_it_keeps(
        client: RecordingClient, tmp_path: Path, profile: str) -> None:
    assert len({entry for _, _, entry in CASES}) >= 30
    session = await start(client, profile, tmp_path)
    assert session.server_capabilities.hover_provider
    path = tmp_path / "ops.py"
    uri = session.open(path, SOURCE)
    lines = SOURCE.splitlines()
    wrong = []
    for number, (statement, word, entry) in enumerate(CASES):
        line = FIRST_LINE + number
        start_column, end_column = where(lines[line], word, session.encoding)
        answer = await hover(client, uri, line, start_column)
        text = markdown_of(answer)
        assert answer is not None
        if answer.range != types.Range(types.Position(line, start_column),
                                       types.Position(line, end_column)):
            wrong.append(f"{statement}: hover range {answer.range}")
        for key, formula in backward_lines(entry).items():
            if f"\n  {key}: {formula}\n" not in text:
                wrong.append(f"{statement}: {entry}'s `{key}: {formula}` not shown")
    assert wrong == []


async def test_a_hover_on_anything_but_a_torch_call_is_empty(
        client: RecordingClient, tmp_path: Path) -> None:
    await start(client, PUSH, tmp_path)
    text = "import numpy as np\n\ndef f(x):\n    return np.exp(x) + 1\n"
    uri = (tmp_path / "plain.py").as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri, "python", 1, text)))
    assert await hover(client, uri, 3, text.splitlines()[3].index("exp")) is None
    assert await hover(client, uri, 2, 0) is None  # `def`
    # A document the server does not have open.
    assert await hover(client, (tmp_path / "closed.py").as_uri(), 0, 0) is None


NOTEBOOK_CELLS = [
    ("%matplotlib inline\nimport torch\nimport torch.nn.functional as G",
     types.NotebookCellKind.Code),
    ("Then `x` is normalised.", types.NotebookCellKind.Markup),
    ("x = torch.randn(3, requires_grad=True)\ny = G.softmax(x, -1)",
     types.NotebookCellKind.Code),
]


async def test_a_notebook_cell_is_explained_with_the_imports_of_earlier_cells(
        client: RecordingClient, tmp_path: Path) -> None:
    caps = capabilities(PUSH)
    caps.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities())
    await start(client, PUSH, tmp_path, caps=caps)
    notebook = (tmp_path / "train.ipynb").as_uri()
    cells = [f"vscode-notebook-cell:{notebook[5:]}#cell{i}" for i in range(len(NOTEBOOK_CELLS))]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        types.NotebookDocument(notebook, "jupyter-notebook", 1, [
            types.NotebookCell(kind, uri) for (_, kind), uri in zip(NOTEBOOK_CELLS, cells,
                                                                    strict=True)]),
        [types.TextDocumentItem(uri, "python" if kind == types.NotebookCellKind.Code
                                else "markdown", 1, text)
         for (text, kind), uri in zip(NOTEBOOK_CELLS, cells, strict=True)]))

    column = NOTEBOOK_CELLS[2][0].splitlines()[1].index("softmax")
    answer = await hover(client, cells[2], 1, column)
    text = markdown_of(answer)
    assert answer is not None and answer.range == types.Range(
        types.Position(1, column), types.Position(1, column + len("softmax")))
    assert "**`torch.nn.functional.softmax`** runs `aten::_softmax`" in text
    for key, formula in backward_lines("_softmax").items():
        assert f"\n  {key}: {formula}\n" in text
