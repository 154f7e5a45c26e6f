"""End to end: a real ``gradguard serve`` over stdio, as an editor would use it.

Each test starts the server, initializes it with the capabilities of a real client
(pytest-lsp's profiles: VS Code 1.65 pushes diagnostics in UTF-16, Neovim 0.11 pulls
them in UTF-8) and says in its name what the user sees.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from gradguard.analysis.analyze import analyze_source
from gradguard.server.positions import units
from tests.server.conftest import (
    BOTH_PROFILES,
    PULL,
    PUSH,
    TIMEOUT,
    RecordingClient,
    Session,
    capabilities,
    lines_of,
    start,
)

pytestmark = pytest.mark.asyncio

HAZARD_AFTER_CJK = '''import torch

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
s = "模型😀"; y.relu_()
y.sum().backward()
'''


def analysed_lines(path: Path) -> list[int]:
    """The lines ``gradguard check`` reports for a file: what the server must show."""
    return sorted(h.span.line for h in analyze_source(path.read_text("utf-8")))


def _insert(line: int, character: int, text: str) -> types.TextDocumentContentChangePartial:
    at = types.Position(line, character)
    return types.TextDocumentContentChangePartial(types.Range(at, at), text)


@pytest.mark.parametrize("profile", BOTH_PROFILES)
async def test_the_unet3plus_seed_is_flagged_at_the_inplace_dropout_not_at_the_relus(
        client: RecordingClient, workspace: Path, profile: str) -> None:
    session = await start(client, profile, workspace)
    uri = session.open(workspace / "unet3plus_seed.py")

    diagnostics = await session.diagnostics(uri)

    assert lines_of(diagnostics, "GG001") == [117]  # nn.Dropout(p=0.5, inplace=True)
    (dropout,) = diagnostics
    assert dropout.source == "gradguard"
    assert dropout.code_description is not None
    assert dropout.code_description.href.endswith("/GG001.md")
    assert dropout.severity == types.DiagnosticSeverity.Error
    # The saving op is the Encoder's last ReLU (line 46), where the saved output comes from.
    related = dropout.related_information or []
    assert 46 in [r.location.range.start.line + 1 for r in related]
    assert all(r.location.uri == uri for r in related)
    assert dropout.data["version"] == 1


@pytest.mark.parametrize("profile", BOTH_PROFILES)
async def test_the_yolov5_seed_is_flagged_at_both_writes_into_the_predictions(
        client: RecordingClient, workspace: Path, profile: str) -> None:
    session = await start(client, profile, workspace)
    uri = session.open(workspace / "yolov5_loss_seed.py")

    lines = lines_of(await session.diagnostics(uri), "GG001")
    assert 143 in lines  # preds[..., 2:4] = ... after self.BCE_obj saved preds
    assert lines == analysed_lines(workspace / "yolov5_loss_seed.py")


async def test_a_push_client_gets_diagnostics_with_the_document_version(
        client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PUSH, workspace)
    uri = session.open(workspace / "unet3plus_seed.py")
    await session.diagnostics(uri)

    version = session.change(uri, _insert(0, 0, "# a comment\n"))
    pushed = await session.pushed_for(uri, version)

    assert lines_of(pushed.diagnostics) == [118]  # moved down with the inserted line


async def test_a_pull_client_is_never_pushed_to_and_gets_unchanged_reports(
        client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PULL, workspace)
    uri = session.open(workspace / "unet3plus_seed.py")
    identifier = types.TextDocumentIdentifier(uri)

    first = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(identifier))
    again = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(identifier, previous_result_id=first.result_id))
    session.change(uri, _insert(0, 0, "\n"))
    after_edit = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(identifier, previous_result_id=first.result_id))

    assert isinstance(first, types.RelatedFullDocumentDiagnosticReport)
    assert first.result_id
    assert isinstance(again, types.RelatedUnchangedDocumentDiagnosticReport)
    assert again.result_id == first.result_id
    assert isinstance(after_edit, types.RelatedFullDocumentDiagnosticReport)
    assert after_edit.result_id != first.result_id
    assert lines_of(after_edit.items) == [118]
    assert client.published == []


async def test_the_ignore_action_adds_a_suppression_comment_that_silences_the_finding(
        client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PUSH, workspace)
    uri = session.open(workspace / "unet3plus_seed.py")
    diagnostics = await session.diagnostics(uri)

    actions = await session.code_actions(uri, diagnostics)
    (ignore,) = [a for a in actions if a.title == "Ignore GG001 on this line"]
    assert ignore.kind == types.CodeActionKind.QuickFix
    assert ignore.edit is not None
    version = await session.apply(uri, ignore.edit)

    assert session.texts[uri].splitlines()[116] == \
        "            nn.Dropout(p=0.5, inplace=True),  # gradguard: ignore[GG001]"
    assert await session.diagnostics(uri, version) == []


async def test_a_code_action_asked_with_diagnostics_of_an_older_version_returns_nothing(
        client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PUSH, workspace)
    uri = session.open(workspace / "unet3plus_seed.py")
    old = await session.diagnostics(uri)

    version = session.change(uri, _insert(0, 0, "# shifts every line\n"))
    actions = await session.code_actions(uri, old)

    # No quick fix or suppression for the old diagnostics; fix-all, if offered, is built
    # from the analysis of the current version and says so.
    assert [a for a in actions if a.kind == types.CodeActionKind.QuickFix] == []
    for action in actions:
        assert action.edit is not None and action.edit.document_changes is not None
        assert all(change.text_document.version == version  # type: ignore[union-attr]
                   for change in action.edit.document_changes)


@pytest.mark.parametrize("seed", ["unet3plus_seed.py", "yolov5_loss_seed.py"])
async def test_applying_the_preferred_quick_fix_removes_the_finding(
        client: RecordingClient, workspace: Path, seed: str) -> None:
    session = await start(client, PUSH, workspace)
    uri = session.open(workspace / seed)
    diagnostics = await session.diagnostics(uri)
    fixable = next(d for d in diagnostics if "fix" in d.data)

    actions = await session.code_actions(uri, [fixable])
    (preferred,) = [a for a in actions if a.is_preferred]
    assert preferred.kind == types.CodeActionKind.QuickFix
    assert preferred.title == fixable.data["fix"]["title"]
    assert preferred.edit is not None
    version = await session.apply(uri, preferred.edit)
    after = await session.diagnostics(uri, version)

    assert fixable.message not in [d.message for d in after]
    assert len(after) == len(diagnostics) - 1
    assert [d for d in after if d.code == "syntax"] == []


async def test_fix_all_applies_every_fix_in_one_versioned_edit(
        client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PUSH, workspace)
    uri = session.open(workspace / "yolov5_loss_seed.py")
    diagnostics = await session.diagnostics(uri)
    assert any("fix" in d.data for d in diagnostics)

    (fix_all,) = await session.code_actions(uri, [], only=["source.fixAll"])
    assert fix_all.kind == "source.fixAll.gradguard"
    assert fix_all.edit is not None
    version = await session.apply(uri, fix_all.edit)

    assert [d for d in await session.diagnostics(uri, version)
            if "fix" in d.data or d.code == "syntax"] == []


async def test_a_configuration_change_re_publishes_open_documents(
        client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PUSH, workspace)
    uri = session.open(workspace / "unet3plus_seed.py")
    assert lines_of(await session.diagnostics(uri)) == [117]
    pushed_before = len(session.pushed(uri))

    client.set_configuration({"ignore": ["GG001"]}, section="gradguard")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    republished = await _next_push(session, uri, pushed_before)

    assert republished.version == 1
    assert list(republished.diagnostics) == []

    client.set_configuration({"severity": {"GG001": "hint"}}, section="gradguard")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    hinted = await _next_push(session, uri, pushed_before + 1)
    assert [d.severity for d in hinted.diagnostics] == [types.DiagnosticSeverity.Hint]


async def test_a_pull_client_with_refresh_support_is_asked_to_pull_after_a_setting_change(
        client: RecordingClient, workspace: Path) -> None:
    caps = capabilities(PULL)
    assert caps.workspace is not None
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(
        refresh_support=True)
    session = await start(client, PULL, workspace, caps=caps)
    uri = session.open(workspace / "unet3plus_seed.py")
    assert lines_of(await session.diagnostics(uri)) == [117]

    client.set_configuration({"select": ["GG002"]}, section="gradguard")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    async def refreshed() -> None:
        while client.diagnostic_refresh_count == 0:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(refreshed(), TIMEOUT)

    assert await session.diagnostics(uri) == []


async def test_pyproject_settings_apply_and_initialization_options_override_them(
        client: RecordingClient, workspace: Path) -> None:
    (workspace / "pyproject.toml").write_text(
        '[tool.gradguard]\nexclude = ["yolov5_*.py"]\n'
        '[tool.gradguard.severity]\nGG001 = "hint"\n', "utf-8")
    session = await start(client, PUSH, workspace,
                          initialization_options={"severity": {"GG001": "warning"}})
    unet = session.open(workspace / "unet3plus_seed.py")
    yolo = session.open(workspace / "yolov5_loss_seed.py")

    (dropout,) = await session.diagnostics(unet)
    assert dropout.severity == types.DiagnosticSeverity.Warning
    assert await session.diagnostics(yolo) == []


async def test_the_nearest_pyproject_decides_for_a_sub_project(
        client: RecordingClient, workspace: Path) -> None:
    (workspace / "pyproject.toml").write_text('[tool.gradguard]\nignore = ["GG001"]\n')
    sub = workspace / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[tool.gradguard]\nselect = ["GG001"]\n')
    (sub / "unet3plus_seed.py").write_text((workspace / "unet3plus_seed.py").read_text())
    session = await start(client, PUSH, workspace)

    top = session.open(workspace / "unet3plus_seed.py")
    nested = session.open(sub / "unet3plus_seed.py")

    assert await session.diagnostics(top) == []
    assert lines_of(await session.diagnostics(nested)) == [117]


@pytest.mark.parametrize(("profile", "encoding"), [(PUSH, "utf-16"), (PULL, "utf-8")])
async def test_columns_are_right_after_cjk_text_and_emoji(
        client: RecordingClient, workspace: Path, profile: str, encoding: str) -> None:
    session = await start(client, profile, workspace)
    assert session.encoding == encoding
    uri = session.open(workspace / "cjk.py", HAZARD_AFTER_CJK)
    line = HAZARD_AFTER_CJK.splitlines()[4]
    before = line[:line.index("y.relu_")]

    (hazard,) = await session.diagnostics(uri)

    assert hazard.range.start == types.Position(4, units(before, encoding))
    assert hazard.range.end == types.Position(4, units(before + "y.relu_()", encoding))
    # An edit after the emoji, in client units, lands where the client meant it.
    after_emoji = units(line[:line.index("😀") + 1], encoding)
    version = session.change(uri, _insert(4, after_emoji, "好"))
    (moved,) = await session.diagnostics(uri, version)
    assert moved.range.start.character == units(before.replace("😀", "😀好"), encoding)


async def test_tabs_count_as_one_column(client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PUSH, workspace)
    source = ("import torch\n\n\ndef f():\n\tx = torch.randn(4, requires_grad=True)\n"
              "\ty = torch.sigmoid(x)\n\t\ty.relu_()\n\treturn y\n")
    uri = session.open(workspace / "tabs.py", source.replace("\t\ty", "\ty"))

    (hazard,) = await session.diagnostics(uri)

    assert (hazard.range.start.line, hazard.range.start.character) == (6, 1)


async def test_crlf_documents_keep_lines_and_edits_keep_the_line_ends(
        client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PUSH, workspace)
    path = workspace / "unet3plus_seed.py"
    crlf = path.read_text("utf-8").replace("\n", "\r\n")
    uri = session.open(path, crlf)

    diagnostics = await session.diagnostics(uri)
    assert lines_of(diagnostics) == [117]
    (ignore,) = [a for a in await session.code_actions(uri, diagnostics)
                 if a.title.startswith("Ignore")]
    assert ignore.edit is not None
    version = await session.apply(uri, ignore.edit)

    assert "inplace=True),  # gradguard: ignore[GG001]\r\n" in session.texts[uri]
    assert "\n" not in session.texts[uri].replace("\r\n", "")
    assert await session.diagnostics(uri, version) == []


async def test_a_syntax_error_in_one_block_keeps_the_other_blocks_findings(
        client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PUSH, workspace)
    uri = session.open(workspace / "yolov5_loss_seed.py")
    expected = analysed_lines(workspace / "yolov5_loss_seed.py")
    assert lines_of(await session.diagnostics(uri)) == expected
    lines = session.texts[uri].splitlines()
    batches = lines.index("def random_batches(n_batches, batch_size=2, num_classes=2, size=640):")

    # Half-typed line in another top-level function.
    version = session.change(uri, _insert(batches + 1, 0, "    x = (\n"))
    diagnostics = await session.diagnostics(uri, version)
    assert lines_of(diagnostics, "GG001") == expected
    (syntax,) = [d for d in diagnostics if d.code == "syntax"]
    assert syntax.source == "gradguard"
    assert syntax.range.start.line == batches + 1
    assert "never closed" in syntax.message

    # Half-typed line inside the class that holds the findings: the class keeps the
    # findings of its last version that parsed.
    obj = lines.index("        obj = targets[..., 0] == 1")
    version = session.change(uri, _insert(obj, 0, "        if obj\n"))
    diagnostics = await session.diagnostics(uri, version)
    assert len([d for d in diagnostics if d.code == "GG001"]) == len(expected)
    assert sorted(d.range.start.line for d in diagnostics if d.code == "syntax") == \
        [obj, batches + 2]

    # Once it parses again, the findings are those of the new text.
    version = session.change(uri, types.TextDocumentContentChangePartial(
        types.Range(types.Position(obj, 0), types.Position(obj + 1, 0)), ""))
    assert lines_of(await session.diagnostics(uri, version), "GG001") == expected


async def test_closing_a_document_clears_its_diagnostics(
        client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PUSH, workspace)
    uri = session.open(workspace / "unet3plus_seed.py")
    assert await session.diagnostics(uri) != []
    pushed_before = len(session.pushed(uri))

    session.close(uri)
    cleared = await _next_push(session, uri, pushed_before)

    assert list(cleared.diagnostics) == []


NOTEBOOK_CELLS = [
    ("%matplotlib inline\nimport torch\n\nx = torch.randn(4, requires_grad=True)\n"
     "y = torch.sigmoid(x)", types.NotebookCellKind.Code),
    ("Then `y` is rectified *in place*.", types.NotebookCellKind.Markup),
    ("!nvidia-smi\nz = y * 2\ny.relu_()", types.NotebookCellKind.Code),
]


def _open_notebook(client: RecordingClient, workspace: Path) -> list[str]:
    notebook = (workspace / "train.ipynb").as_uri()
    cell_uris = [f"vscode-notebook-cell:{notebook[5:]}#cell{i}"
                 for i in range(len(NOTEBOOK_CELLS))]
    opened = list(zip(NOTEBOOK_CELLS, cell_uris, strict=True))
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        types.NotebookDocument(notebook, "jupyter-notebook", 1, [
            types.NotebookCell(kind, uri) for (_, kind), uri in opened]),
        [types.TextDocumentItem(uri, "python" if kind == types.NotebookCellKind.Code
                                else "markdown", 1, text)
         for (text, kind), uri in opened]))
    return [notebook, *cell_uris]


def _with_notebooks(profile: str) -> types.ClientCapabilities:
    caps = capabilities(profile)
    caps.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities())
    return caps


async def test_notebook_cells_are_analysed_as_one_program_in_order(
        client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PUSH, workspace, caps=_with_notebooks(PUSH))
    notebook, *cell_uris = _open_notebook(client, workspace)

    (hazard,) = (await session.pushed_for(cell_uris[2], 1)).diagnostics
    assert (hazard.range.start.line, hazard.code) == (2, "GG001")
    (saved,) = hazard.related_information or []
    assert saved.location.uri == cell_uris[0]
    assert saved.location.range.start.line == 4
    assert list((await session.pushed_for(cell_uris[0], 1)).diagnostics) == []

    # Editing the later cell re-publishes it with the cell's version.
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        types.VersionedNotebookDocumentIdentifier(uri=notebook, version=2),
        types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
            text_content=[types.NotebookDocumentCellContentChanges(
                types.VersionedTextDocumentIdentifier(uri=cell_uris[2], version=2),
                [_insert(0, 0, "\n")])]))))
    (moved,) = (await session.pushed_for(cell_uris[2], 2)).diagnostics
    assert moved.range.start.line == 3


async def test_a_pulling_notebook_client_pulls_each_cell_and_is_told_cells_depend(
        client: RecordingClient, workspace: Path) -> None:
    result = await client.initialize_session(types.InitializeParams(
        capabilities=_with_notebooks(PULL), root_uri=workspace.as_uri()))
    _, *cell_uris = _open_notebook(client, workspace)
    session = Session(client, client.recorder, pull=True, encoding="utf-8")
    session.versions.update({uri: 1 for uri in cell_uris})

    assert result.capabilities.diagnostic_provider is not None
    assert result.capabilities.diagnostic_provider.inter_file_dependencies is True
    assert [d.code for d in await session.diagnostics(cell_uris[2])] == ["GG001"]
    assert await session.diagnostics(cell_uris[0]) == []
    assert client.published == []


async def _next_push(session: Session, uri: str, seen: int) -> types.PublishDiagnosticsParams:
    """The push after the first ``seen`` ones for ``uri``."""
    async def arrived() -> None:
        while len(session.pushed(uri)) <= seen:
            session.client.arrived.clear()
            await session.client.arrived.wait()

    await asyncio.wait_for(arrived(), TIMEOUT)
    return session.pushed(uri)[seen]
