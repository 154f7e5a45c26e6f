"""Workspace diagnostics over a real stdio session with ``gradguard serve``.

    .venv/bin/python -m bench.workspace_diagnostics [--files 200] [--keep DIR]

What it does (figures printed, not a timed test):

1. Builds a workspace of ``--files`` Python files in a temporary folder: 5 with hazards
   (positives of the accuracy corpus, tests/corpus/positive) and the rest clean real
   model code (the corpus negatives, copied into packages of their own), none opened.
2. Starts the server with ``initializationOptions: {"diagnosticMode": "workspace"}``,
   sends ``initialized`` and at once ``workspace/diagnostic``: the seconds from
   ``initialized`` to an answer listing all 5, with no cache (cold: the server's worker
   processes start and analyse every file).
3. The same with a new server over the same folder, whose ``.gradguard_cache/`` the
   first one left (cached), and a second request in that session with the result ids
   of the first (all ``unchanged``).

Targets (issue 29): cold <= 5 s, cached <= 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from harness import lsp

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus"
HAZARDS = ("exp_output_write.py", "sigmoid_index_write.py", "dropout_after_leakyrelu.py",
           "resnet_relu_before_add.py", "data_zero_sigmoid_output.py")
TARGETS = {"cold_s": 5.0, "cached_s": 1.0}
PACKAGE_SIZE = 20


def build_workspace(root: Path, files: int) -> list[Path]:
    """``files`` Python files under ``root``; returns the 5 with hazards."""
    hazards = []
    for name in HAZARDS:
        target = root / "train" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / "positive" / name, target)
        hazards.append(target)
    clean = sorted((CORPUS / "negative").glob("*.py"))
    for index in range(files - len(hazards)):
        source = clean[index % len(clean)]
        package = root / f"pkg_{index // PACKAGE_SIZE:02}"
        package.mkdir(exist_ok=True)
        shutil.copy(source, package / f"m{index:03}_{source.name}")
    return hazards


def capabilities() -> types.ClientCapabilities:
    return types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            diagnostic=types.DiagnosticClientCapabilities()),
        window=types.WindowClientCapabilities(work_done_progress=True))


class Session:
    """One ``gradguard serve`` process, a client that accepts its progress."""

    def __init__(self) -> None:
        self.client = LanguageClient("gradguard-bench", "1")
        self.progress: list[str] = []

        @self.client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @self.client.feature(types.PROGRESS)
        def progress(params: types.ProgressParams) -> None:
            self.progress.append(str(params.value))

    async def start(self, root: Path) -> float:
        """Initializes the session; returns the moment ``initialized`` was sent."""
        await lsp.serve(self.client, capabilities(), root,
                        options={"diagnosticMode": "workspace"})
        return time.perf_counter()

    async def workspace_report(self, previous: list[types.PreviousResultId] | None = None
                               ) -> types.WorkspaceDiagnosticReport:
        return await asyncio.wait_for(self.client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(previous_result_ids=previous or [])), 600)

    async def stop(self) -> None:
        await lsp.stop(self.client)


def flagged(report: types.WorkspaceDiagnosticReport) -> set[str]:
    """The URIs whose full report lists a hazard (any GG0xx)."""
    return {item.uri for item in report.items
            if isinstance(item, types.WorkspaceFullDocumentDiagnosticReport)
            and any(str(d.code).startswith("GG0") for d in item.items)}


async def timed_session(root: Path, wanted: set[str]) -> dict[str, float | int]:
    session = Session()
    initialized = await session.start(root)
    report = await session.workspace_report()
    seconds = time.perf_counter() - initialized
    found = flagged(report)
    held = [types.PreviousResultId(item.uri, item.result_id) for item in report.items
            if item.result_id is not None]
    started = time.perf_counter()
    again = await session.workspace_report(held)
    again_seconds = time.perf_counter() - started
    unchanged = sum(isinstance(item, types.WorkspaceUnchangedDocumentDiagnosticReport)
                    for item in again.items)
    await session.stop()
    return {"seconds": seconds, "files": len(report.items), "listed": len(found & wanted),
            "others_flagged": len(found - wanted), "progress_messages": len(session.progress),
            "again_seconds": again_seconds, "unchanged": unchanged}


async def run(args: argparse.Namespace) -> dict[str, dict[str, float | int]]:
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="gg-workspace-"))
    try:
        shutil.rmtree(root / ".gradguard_cache", ignore_errors=True)
        hazards = build_workspace(root, args.files)
        wanted = {path.as_uri() for path in hazards}
        cold = await timed_session(root, wanted)
        cached = await timed_session(root, wanted)
        return {"cold": cold, "cached": cached}
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def report(results: dict[str, dict[str, float | int]]) -> str:
    lines = []
    for name, target in (("cold", "cold_s"), ("cached", "cached_s")):
        figures = results[name]
        ok = figures["seconds"] <= TARGETS[target] and figures["listed"] == len(HAZARDS)
        lines.append(
            f"{name}: {figures['seconds']:.2f} s from initialized to a workspace/diagnostic "
            f"answer listing {figures['listed']} of {len(HAZARDS)} hazard files "
            f"({figures['files']} files reported, {figures['others_flagged']} others "
            f"flagged, {figures['progress_messages']} progress messages) "
            f"[target <= {TARGETS[target]:g} s: {'ok' if ok else 'MISSED'}]; "
            f"asked again with the result ids: {figures['again_seconds']:.3f} s, "
            f"{figures['unchanged']} unchanged")
    lines.append(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}, "
                 f"{os.cpu_count()} cores")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--keep", help="build the workspace in this folder and keep it")
    args = parser.parse_args()
    print(report(asyncio.run(run(args))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
