"""The torch probe in the server: ``workspace/executeCommand`` ``gradguard.probe``.

Real probes (a child process importing torch) started by a real ``gradguard serve``
over stdio. Every wait is bounded: a probe that never answers fails its test.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from gradguard.analysis.analyze import analyze_source
from tests.server.conftest import PULL, PUSH, RecordingClient, Session, lines_of, start

pytestmark = [pytest.mark.asyncio, pytest.mark.torch, pytest.mark.slow]

PROBE_SECONDS = 180.0  # a cold torch import on a loaded two-core machine, then the run

# Sigmoid saves its output in another file; the in-place ReLU here overwrites it. The
# static analysis reads one file at a time and does not know what `gate` returns.
# The static analysis follows imports, but not an op looked up by a name built at run
# time: only the torch probe sees that gate() saves its output.
HELPERS = '''import torch


def gate(t):
    op = getattr(torch, "sig" + "moid")
    return op(t)
'''

ONLY_THE_PROBE_SEES = '''import torch

from helpers import gate


def main():
    x = torch.randn(4, requires_grad=True)
    y = gate(x * 2)
    y.relu_()
    y.sum().backward()


if __name__ == "__main__":
    main()
'''


def probe_only_case(folder: Path) -> Path:
    (folder / "helpers.py").write_text(HELPERS, "utf-8")
    path = folder / "gated.py"
    path.write_text(ONLY_THE_PROBE_SEES, "utf-8")
    return path


HANGS = '''import time

if __name__ == "__main__":
    while True:
        time.sleep(0.1)
'''


async def run_probe(session: Session, uri: str, *arguments: Any,
                    token: str | None = None, msg_id: str | None = None) -> Any:
    params = types.ExecuteCommandParams("gradguard.probe", [uri, *arguments],
                                        work_done_token=token)
    return await asyncio.wait_for(session.client.protocol.send_request_async(
        types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id), PROBE_SECONDS)


def hanging_case(folder: Path) -> Path:
    path = folder / "hangs.py"
    path.write_text(HANGS, "utf-8")
    return path


async def until(check: Callable[[], object], timeout: float = 30.0) -> None:
    """Wait until ``check()`` holds; fail after ``timeout`` seconds."""
    async def holds() -> None:
        while not check():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(holds(), timeout)


async def probe_diagnostics(session: Session, uri: str,
                            timeout: float = 30.0) -> list[types.Diagnostic]:
    """The diagnostics of ``uri`` once the probe's findings are in them."""
    async def arrived() -> list[types.Diagnostic]:
        while True:
            if session.pull:
                diagnostics = await session.diagnostics(uri)
            else:
                params = await session.pushed_for(uri, None)
                diagnostics = list(params.diagnostics)
            if any(d.source == "gradguard-probe" or "confirmed" in d.message
                   for d in diagnostics):
                return diagnostics
            await asyncio.sleep(0.1)

    return await asyncio.wait_for(arrived(), timeout)


async def test_the_server_offers_the_probe_command_and_lenses_on_modules_and_the_script(
        client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PUSH, workspace, {"trusted": True})
    provider = session.server_capabilities.execute_command_provider
    assert provider is not None and "gradguard.probe" in provider.commands
    uri = session.open(workspace / "unet3plus_seed.py")

    lenses = await asyncio.wait_for(client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(uri))), 10.0)

    assert lenses is not None
    offered = {(lens.range.start.line + 1, lens.command.arguments[1])  # type: ignore[union-attr, index]
               for lens in lenses}
    assert offered == {(29, "Encoder"), (50, "Decoder"), (70, "UNet3Plus"), (172, "__main__")}
    assert all(lens.command is not None and lens.command.command == "gradguard.probe"
               and lens.command.arguments and lens.command.arguments[0] == uri
               for lens in lenses)


async def test_in_a_workspace_not_said_to_be_trusted_the_probe_refuses_and_says_why(
        client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PUSH, workspace)
    uri = session.open(workspace / "unet3plus_seed.py")
    await session.diagnostics(uri)

    result = await run_probe(session, uri)

    assert result["status"] == "refused"
    assert "trusted" in result["message"]
    assert any("trusted" in m.message for m in client.messages)


async def test_trust_granted_later_lets_the_probe_run_and_withdrawn_refuses_it(
        client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PUSH, workspace)
    uri = session.open(workspace / "unet3plus_seed.py")
    client.protocol.notify("gradguard/trustChanged", {"trusted": True})

    granted = await run_probe(session, uri)
    client.protocol.notify("gradguard/trustChanged", {"trusted": False})
    withdrawn = await run_probe(session, uri)

    assert granted["status"] == "ok" and granted["findings"]
    assert withdrawn["status"] == "refused"


@pytest.mark.parametrize("profile", [PUSH, PULL])
async def test_a_finding_both_report_appears_once_marked_confirmed_by_the_probe(
        client: RecordingClient, workspace: Path, profile: str) -> None:
    session = await start(client, profile, workspace, {"trusted": True})
    uri = session.open(workspace / "unet3plus_seed.py")
    await session.diagnostics(uri)

    result = await run_probe(session, uri)
    diagnostics = await probe_diagnostics(session, uri)

    assert [(f["code"], f["line"]) for f in result["findings"]] == [("GG001", 117)]
    assert "1 finding" in result["message"]
    (dropout,) = diagnostics
    assert dropout.range.start.line + 1 == 117
    assert dropout.source == "gradguard"
    assert dropout.message.endswith("(confirmed by the torch probe)")
    # Still the static diagnostic: its quick fix is still offered.
    actions = await session.code_actions(uri, [dropout], only=[types.CodeActionKind.QuickFix])
    assert any(a.is_preferred for a in actions)


async def test_what_only_the_probe_sees_is_published_with_both_lines_and_torchs_error(
        client: RecordingClient, tmp_path: Path) -> None:
    path = probe_only_case(tmp_path)
    assert analyze_source(ONLY_THE_PROBE_SEES) == []  # what makes this the probe's case
    session = await start(client, PUSH, tmp_path, {"trusted": True})
    uri = session.open(path)
    await session.diagnostics(uri)

    await run_probe(session, uri)
    (finding,) = await probe_diagnostics(session, uri)

    assert finding.source == "gradguard-probe"
    assert finding.code == "GG001"
    assert finding.range.start.line + 1 == 9  # y.relu_()
    assert "relu_" in finding.message and "sigmoid" in finding.message
    assert "torch then raised" in finding.message
    assert finding.code_description is not None
    (saved,) = finding.related_information or []
    assert saved.location.uri == (tmp_path / "helpers.py").as_uri()
    assert saved.location.range.start.line + 1 == 6  # return op(t): the sigmoid


async def test_a_pulling_client_that_cannot_be_told_to_pull_gets_the_probes_findings_pushed(
        client: RecordingClient, tmp_path: Path) -> None:
    path = probe_only_case(tmp_path)
    session = await start(client, PULL, tmp_path, {"trusted": True})  # Neovim 0.11
    uri = session.open(path)
    await session.diagnostics(uri)

    await run_probe(session, uri)
    pushed = await session.pushed_for(uri, None, timeout=30.0)

    assert [(d.source, d.range.start.line + 1) for d in pushed.diagnostics] == [
        ("gradguard-probe", 9)]
    assert await session.diagnostics(uri) == []  # not pulled as well: shown once
    # Deleting its line drops it, by push too.
    version = session.replace_all(uri, ONLY_THE_PROBE_SEES.replace("    y.relu_()\n", ""))
    assert list((await session.pushed_for(uri, version)).diagnostics) == []


# Only the probe sees this one (the op is looked up at run time), and the save and the
# write are in one file: the message quotes the saving line's number.
LOOKED_UP = '''import torch


def main():
    x = torch.randn(4, requires_grad=True)
    squash = getattr(torch, "sig" + "moid")  # built at run time: opaque to static analysis
    y = squash(x * 2)
    y.relu_()
    y.sum().backward()


if __name__ == "__main__":
    main()
'''


async def test_probe_findings_follow_edits_and_go_stale_when_their_line_is_edited(
        client: RecordingClient, tmp_path: Path) -> None:
    assert analyze_source(LOOKED_UP) == []
    path = tmp_path / "looked_up.py"
    path.write_text(LOOKED_UP, "utf-8")
    session = await start(client, PUSH, tmp_path, {"trusted": True})
    uri = session.open(path)
    await run_probe(session, uri)
    (finding,) = await probe_diagnostics(session, uri)
    assert finding.range.start.line + 1 == 8  # y.relu_()
    assert "saved for backward at line 7 " in finding.message

    # Two lines above main(), and one inside it above the save: the finding, its
    # related location and the line its message quotes all move down by three.
    moved = LOOKED_UP.replace("\n\ndef main", "\nSCALE = 2\n\n\ndef main").replace(
        "    y = squash", "    # squash it\n    y = squash")
    version = session.replace_all(uri, moved)
    (finding,) = await session.diagnostics(uri, version)
    assert finding.range.start.line + 1 == 11
    assert "saved for backward at line 10 " in finding.message
    assert [r.location.range.start.line + 1 for r in finding.related_information or []] == [10]
    assert finding.severity == types.DiagnosticSeverity.Error

    # The user edits the flagged line itself: kept where it is, marked stale.
    edited = moved.replace("    y.relu_()", "    y.relu_()  # TODO clone first?")
    version = session.replace_all(uri, edited)
    (finding,) = await session.diagnostics(uri, version)
    assert finding.range.start.line + 1 == 11
    assert finding.message.startswith("[stale: this line changed since the probe ran")
    assert finding.severity == types.DiagnosticSeverity.Information

    # ... and deletes it: the finding goes with it.
    version = session.replace_all(uri, edited.replace("    y.relu_()  # TODO clone first?\n", ""))
    assert await session.diagnostics(uri, version) == []


async def test_progress_goes_to_the_clients_token_the_editor_stays_responsive_and_cancel_stops_it(
        client: RecordingClient, tmp_path: Path) -> None:
    session = await start(client, PUSH, tmp_path, {"trusted": True})
    uri = session.open(hanging_case(tmp_path))
    client.progress_reports["probe-token"] = []

    request = asyncio.ensure_future(run_probe(session, uri, token="probe-token",
                                              msg_id="probe-1"))
    await until(lambda: client.progress_reports["probe-token"])
    # While the probe runs, the server goes on analysing what the user types.
    version = session.replace_all(uri, HANGS + "# typed while the probe runs\n")
    assert await asyncio.wait_for(session.diagnostics(uri, version), 10.0) == []
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="probe-1"))

    with pytest.raises(Exception, match="cancel"):
        await request

    await until(lambda: any(isinstance(r, types.WorkDoneProgressEnd)
                            for r in client.progress_reports["probe-token"]))
    (begin, *_, end) = client.progress_reports["probe-token"]
    assert isinstance(begin, types.WorkDoneProgressBegin) and begin.cancellable
    assert isinstance(end, types.WorkDoneProgressEnd) and end.message == "cancelled"
    # The server still answers at once.
    assert lines_of(await session.diagnostics(uri)) == []


async def test_the_progress_cancel_button_stops_a_probe_on_a_token_the_server_made(
        client: RecordingClient, tmp_path: Path) -> None:
    session = await start(client, PUSH, tmp_path, {"trusted": True})
    uri = session.open(hanging_case(tmp_path))

    request = asyncio.ensure_future(run_probe(session, uri))
    await until(lambda: client.progress_reports)
    token = str(next(iter(client.progress_reports)))
    client.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL,
                           types.WorkDoneProgressCancelParams(token))

    result = await request
    assert result["status"] == "cancelled"


async def test_probe_on_save_runs_in_the_background_when_turned_on(
        client: RecordingClient, tmp_path: Path) -> None:
    path = probe_only_case(tmp_path)
    session = await start(client, PUSH, tmp_path,
                          {"trusted": True, "probe": {"onSave": True, "timeout": 120}})
    uri = session.open(path)
    await session.diagnostics(uri)

    client.text_document_did_save(types.DidSaveTextDocumentParams(
        types.TextDocumentIdentifier(uri)))

    (finding,) = await probe_diagnostics(session, uri, PROBE_SECONDS)
    assert finding.source == "gradguard-probe"


async def test_bad_arguments_get_an_error_that_says_how_to_call_the_command(
        client: RecordingClient, workspace: Path) -> None:
    session = await start(client, PUSH, workspace, {"trusted": True})
    session.open(workspace / "unet3plus_seed.py")

    with pytest.raises(Exception, match=r"\[uri\] or \[uri, name\]"):
        await asyncio.wait_for(client.workspace_execute_command_async(
            types.ExecuteCommandParams("gradguard.probe", [])), 10.0)
    assert client.protocol  # and the server is still there:
    result = await run_probe(session, (workspace / "nothing.txt").as_uri())
    assert result["status"] == "refused"


async def test_the_probe_refuses_a_file_outside_the_workspace_even_through_a_symlink(
        client: RecordingClient, tmp_path: Path) -> None:
    workspace, elsewhere = tmp_path / "workspace", tmp_path / "elsewhere"
    workspace.mkdir()
    elsewhere.mkdir()
    outside = probe_only_case(elsewhere)
    link = workspace / "linked.py"  # in the workspace by name, outside it in fact
    link.symlink_to(outside)
    session = await start(client, PUSH, workspace, {"trusted": True})

    for target in (outside, link):
        result = await run_probe(session, target.as_uri())

        assert result["status"] == "refused", target
        assert "outside" in result["message"] and str(workspace) in result["message"]
    assert any("outside" in m.message for m in client.messages)


async def test_the_probe_refuses_everything_when_the_editor_declared_no_workspace_folder(
        client: RecordingClient, tmp_path: Path) -> None:
    path = probe_only_case(tmp_path)
    await asyncio.wait_for(client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        initialization_options={"trusted": True})), 30.0)

    result = await asyncio.wait_for(client.workspace_execute_command_async(
        types.ExecuteCommandParams("gradguard.probe", [path.as_uri()])), 30.0)

    assert result["status"] == "refused"
    assert "declared none" in result["message"]


async def test_a_probed_script_that_raises_is_answered_with_what_it_raised_and_where(
        client: RecordingClient, tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text('if __name__ == "__main__":\n    raise ValueError("no data")\n', "utf-8")
    session = await start(client, PUSH, tmp_path, {"trusted": True})
    uri = session.open(path)

    result = await run_probe(session, uri)

    assert result["status"] == "raised"
    assert "ValueError: no data" in result["message"] and "broken.py:2" in result["message"]
    assert result["findings"] == []
