"""From a workspace's hazards to the reports of ``workspace/diagnostic``.

Each file's report has a result id made from its diagnostics themselves, so a client
that sends the id it holds gets an ``unchanged`` report as long as the file's
diagnostics are the same, in this server process or the next.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from lsprotocol import converters, types
from pygls.uris import from_fs_path

from gradguard.analysis.hazard import Hazard
from gradguard.rules import FILE_NOT_ANALYSED
from gradguard.server.diagnostics import build_outcome
from gradguard.server.documents import Snapshot, Target
from gradguard.server.positions import Encoding, LineIndex
from gradguard.server.settings import Settings

_converter = converters.get_converter()


@dataclass(frozen=True)
class FileReport:
    uri: str
    items: list[types.Diagnostic]
    result_id: str
    version: int | None = None  # an open document's


def file_uri(path: str) -> str:
    return from_fs_path(path) or path


def closed_file_report(path: str, text: str, hazards: Iterable[Hazard], settings: Settings,
                       encoding: Encoding, text_of: Callable[[str], str | None]) -> FileReport:
    """The report of a file as it is on disk (not open in the editor)."""
    uri = file_uri(path)
    # A file not analysed (GG900) says so whatever is selected: nothing in it was checked.
    wanted = [h for h in hazards
              if h.code == FILE_NOT_ANALYSED or settings.selection.wants(h.code)]
    snapshot = Snapshot(uri, 0, 0, text, (Target(uri, None, 0, LineIndex(text)),),
                        settings, path, encoding)
    items = build_outcome(snapshot, wanted, (), text_of=text_of).diagnostics[uri]
    return FileReport(uri, items, result_id_of(items))


def result_id_of(items: list[types.Diagnostic]) -> str:
    raw = json.dumps(_converter.unstructure(items), sort_keys=True)
    return "ws-" + hashlib.blake2b(raw.encode("utf-8"), digest_size=12).hexdigest()


def workspace_report(reports: Mapping[str, FileReport],
                     previous: Iterable[types.PreviousResultId]
                     ) -> types.WorkspaceDiagnosticReport:
    """Full reports for what changed since the ids the client holds, ``unchanged`` for
    the rest; a file the client holds that is no longer reported (deleted, excluded)
    gets an empty full report, which clears it."""
    held = {item.uri: item.value for item in previous}
    items: list[types.WorkspaceDocumentDiagnosticReport] = []
    for uri, report in reports.items():
        if held.get(uri) == report.result_id:
            items.append(types.WorkspaceUnchangedDocumentDiagnosticReport(
                uri=uri, version=report.version, result_id=report.result_id))
        else:
            items.append(types.WorkspaceFullDocumentDiagnosticReport(
                uri=uri, version=report.version, items=report.items,
                result_id=report.result_id))
    for uri in held.keys() - reports.keys():
        items.append(types.WorkspaceFullDocumentDiagnosticReport(uri=uri, version=None,
                                                                 items=[]))
    return types.WorkspaceDiagnosticReport(items=items)
