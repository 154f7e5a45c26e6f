"""The torch probe, run by the server: ``workspace/executeCommand`` ``gradguard.probe``.

Arguments: ``[uri]`` (probe that file: see ``probe_targets``) or ``[uri, name]`` (one
function or module class of it, ``"__main__"`` for the script, ``"--auto"``). The probe
runs the file as saved on disk, in a child process (``gradguard.probe.runner``), while
the server goes on answering; its findings become diagnostics of the files they point
into (see ``probe_marks``). The command answers with a summary:
``{"target", "status", "message", "findings", "error"}``.

- Trust: the probe executes the workspace's code, so it runs only once the client has
  said the workspace is trusted (``initializationOptions.trusted``, then the
  ``gradguard/trustChanged`` notification). Otherwise it refuses and says why. (Over
  TCP only a client that presented the token gets to say anything: see ``tcp``.)
- Only the workspace: trust covers the workspace folders the client declared, so a
  file outside them (its path with symlinks resolved) is refused, whatever the client.
- Progress: reported on the request's ``workDoneToken`` if the client sent one, else on
  a token the server creates if the client can show work-done progress.
- Cancel: ``$/cancelRequest`` for the command, or the progress' cancel button, kills the
  child. A new probe of a file stops the one still running on it.
- ``probe.onSave``: each save of a Python file runs it in the background, the same way.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from collections.abc import Callable
from typing import Any, Protocol

from lsprotocol import types
from pygls.progress import Progress

from gradguard.probe.config import (
    ConfigError,
    ProbeConfig,
    load_config,
    probe_options,
)
from gradguard.probe.runner import ProbeResult, run_probe_async
from gradguard.probe.target import TargetError
from gradguard.server.documents import Unit
from gradguard.server.probe_marks import ProbeStore, marks_of
from gradguard.server.probe_targets import targets_for
from gradguard.server.settings import Settings
from gradguard.server.uris import path_of

logger = logging.getLogger(__name__)

COMMAND = "gradguard.probe"
UNTRUSTED = ("GradGuard: the autograd probe runs this workspace's code, and the editor has "
             "not said the workspace is trusted, so it did not run. Trust the workspace "
             "(or, in an editor without workspace trust, start the server with "
             "initializationOptions {\"trusted\": true}).")
NO_FOLDERS = ("GradGuard: the autograd probe runs only files inside the workspace folders "
              "the editor declared, and it declared none (no workspaceFolders, no rootUri)")
# How long to wait for the client to accept a progress token the server made.
CREATE_PROGRESS_SECONDS = 10.0


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError):
        return None


def within(path: str, folders: list[str]) -> bool:
    """Whether ``path`` is inside one of ``folders``, once symlinks are resolved (a link
    in the workspace to a file elsewhere is elsewhere)."""
    real = os.path.normcase(os.path.realpath(path))
    for folder in folders:
        root = os.path.normcase(os.path.realpath(folder))
        if os.path.commonpath([real, root]) == root:
            return True
    return False


def summary(results: list[ProbeResult]) -> str:
    """One sentence for the user: what was found, or what stopped the probe."""
    findings = [f for r in results for f in r.findings]
    errors = [r.error for r in results if r.error]
    parts = []
    if findings:
        where = ", ".join(f"{f.get('code')} at {os.path.basename(str(f.get('path')))}:"
                          f"{f.get('line')}" for f in findings[:5])
        more = f" and {len(findings) - 5} more" if len(findings) > 5 else ""
        parts.append(f"{len(findings)} finding{'s' if len(findings) != 1 else ''} "
                     f"({where}{more})")
    elif not errors:
        ran = [item["what"] for r in results for item in r.ran]
        parts.append("no in-place write clobbered a saved tensor"
                     + (f" (ran {', '.join(ran[:5])})" if ran else ""))
    skipped = [f"{item['what']}: {item['reason']}" for r in results for item in r.skipped]
    if skipped:
        parts.append("skipped " + "; ".join(skipped[:3]))
    parts.extend(errors)
    return "; ".join(parts)


class ProbeHost(Protocol):
    """What the probe jobs need of the server, and no more (the server is one)."""

    @property
    def work_done_progress(self) -> Progress: ...

    def unit_for(self, uri: str) -> Unit | None: ...

    def settings_for(self, path: str | None) -> Settings: ...

    def folder_of(self, path: str) -> str | None: ...

    def workspace_folders(self) -> list[str]: ...

    def on_cancel(self, msg_id: int | str, listener: Callable[[], None] | None) -> None: ...

    def shows_progress(self) -> bool: ...

    def warn(self, message: str) -> None: ...

    def probe_marks_changed(self, paths: set[str]) -> None: ...


class BadArguments(ValueError):
    """The command was called with arguments it does not take."""


class _Progress:
    """Work-done progress on one token, or nothing when there is none."""

    def __init__(self, server: ProbeHost, token: types.ProgressToken | None) -> None:
        self.server = server
        self.token = token

    def begin(self, title: str, message: str, on_cancel: Callable[[], None]) -> None:
        if self.token is None:
            return
        progress = self.server.work_done_progress
        progress.begin(self.token, types.WorkDoneProgressBegin(
            title=title, message=message, cancellable=True))
        # pygls cancels this future when the client sends window/workDoneProgress/cancel.
        cancelled = progress.tokens.get(self.token)
        if cancelled is not None:
            cancelled.add_done_callback(lambda future: on_cancel() if future.cancelled()
                                        else None)

    def report(self, message: str) -> None:
        if self.token is not None:
            self.server.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message))

    def end(self, message: str) -> None:
        if self.token is None:
            return
        self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        self.server.work_done_progress.tokens.pop(self.token, None)


class ProbeJobs:
    """The probes of one server: who may run them, which are running, what they found."""

    def __init__(self, server: ProbeHost) -> None:
        self.server = server
        self.trusted = False
        self.store = ProbeStore()
        self.running: dict[str, asyncio.Task[Any]] = {}  # by file path
        self.runs = 0  # probes started (tests read it)
        self._tokens = itertools.count(1)

    def set_trusted(self, trusted: bool) -> None:
        self.trusted = trusted
        if not trusted:
            self.stop_all()

    def stop_all(self) -> None:
        for task in list(self.running.values()):
            task.cancel()

    async def command(self, arguments: list[Any], token: types.ProgressToken | None,
                      msg_id: int | str | None) -> dict[str, Any]:
        """The ``gradguard.probe`` command, from the request's arguments to its answer;
        ``BadArguments`` if they are not ``[uri]`` or ``[uri, name]``."""
        uri, name = self._arguments(arguments)
        return await self.probe(uri, name, token, msg_id, announce=True)

    @staticmethod
    def _arguments(arguments: list[Any]) -> tuple[str, str | None]:
        if not arguments or not isinstance(arguments[0], str) or len(arguments) > 2 or (
                len(arguments) == 2 and not isinstance(arguments[1], (str, type(None)))):
            raise BadArguments("gradguard.probe takes [uri] or [uri, name]: the document "
                             "to probe and, optionally, a function or class in it, "
                             "'__main__' or '--auto'")
        return arguments[0], arguments[1] if len(arguments) == 2 else None

    def on_save(self, uri: str) -> None:
        """A document was saved: probe it if the user asked for that and may."""
        unit = self.server.unit_for(uri)
        if unit is None or not unit.settings.probe_on_save or not self.trusted:
            return
        if unit.path is None or not unit.path.endswith(".py"):
            return
        asyncio.get_running_loop().create_task(
            self.probe(uri, None, None, None, announce=False))

    async def probe(self, uri: str, name: str | None, token: types.ProgressToken | None,
                    msg_id: int | str | None, announce: bool) -> dict[str, Any]:
        path = path_of(uri)
        if not self.trusted:
            return self._refuse(uri, UNTRUSTED, announce)
        if path is None or not path.endswith(".py"):
            return self._refuse(uri, f"GradGuard: the probe runs Python files on disk; "
                                     f"{uri} is not one", announce)
        folders = self.server.workspace_folders()
        if not folders:
            return self._refuse(uri, NO_FOLDERS, announce)
        if not within(path, folders):
            return self._refuse(uri, f"GradGuard: the autograd probe runs only files inside "
                                     f"the workspace folders the editor declared "
                                     f"({', '.join(folders)}); {path} is outside them",
                                announce)
        text = _read(path)
        if text is None:
            return self._refuse(uri, f"GradGuard: cannot read {path} as UTF-8 text; the "
                                     "probe runs the file as saved on disk", announce)
        try:
            config = load_config(os.path.dirname(path))
            targets = targets_for(path, name, text, config)
        except (ConfigError, TargetError) as error:
            return self._refuse(uri, f"GradGuard: {error}", announce)
        previous = self.running.get(path)
        if previous is not None:
            previous.cancel()
        task = asyncio.current_task()
        assert task is not None
        self.running[path] = task
        loop = asyncio.get_running_loop()

        def stop() -> None:  # called from pygls' handlers, perhaps not on the loop
            loop.call_soon_threadsafe(task.cancel)

        label = ", ".join(str(t) for t in targets)
        results: list[ProbeResult] = []
        cancelled = False
        progress = _Progress(self.server, None)
        try:
            if msg_id is not None:
                self.server.on_cancel(msg_id, stop)
            progress = _Progress(self.server, token if token is not None
                                 else await self._server_token())
            progress.begin("GradGuard probe", f"starting {os.path.basename(path)}",
                           stop)
            self.runs += 1
            for target in targets:
                results.append(await self._run(target, path, config, progress))
        except asyncio.CancelledError:
            cancelled = True
        finally:
            if self.running.get(path) is task:
                del self.running[path]
            if msg_id is not None:
                self.server.on_cancel(msg_id, None)
        message = "cancelled" if cancelled else summary(results)
        progress.end(message)
        if not cancelled:
            self._record(label, results, path, text)
        findings = [f for r in results for f in r.findings]
        # "ok": every target ran to its end, or stopped only where a finding explains.
        return {"target": label, "status": "cancelled" if cancelled else
                next((r.status for r in results if r.error), "ok"),
                "message": message, "findings": findings,
                "error": next((r.error for r in results if r.error), None)}

    async def _run(self, target: Any, path: str, config: ProbeConfig | None,
                   progress: _Progress) -> ProbeResult:
        # The editor's timeout already lies over pyproject's (server/settings.py).
        options = probe_options(config, timeout=self.server.settings_for(path).probe_timeout)
        cwd = config.root if config else (self.server.folder_of(path)
                                          or os.path.dirname(path))
        found = 0

        def on_event(event: dict[str, Any]) -> None:
            nonlocal found
            kind = event.get("event")
            if kind == "start":
                progress.report(f"running {target}")
            elif kind == "finding":
                found += 1
                progress.report(f"running {target}: {found} finding"
                                f"{'s' if found != 1 else ''} so far")
            elif kind == "ran":
                progress.report(f"ran {event.get('what')}")

        return await run_probe_async(target, timeout=options.timeout, cwd=cwd,
                                     memory_mb=options.memory_mb, device=options.device,
                                     on_event=on_event)

    async def _server_token(self) -> types.ProgressToken | None:
        """A progress token of the server's own, if the client can show one."""
        if not self.server.shows_progress():
            return None
        token = f"gradguard-probe-{os.getpid()}-{next(self._tokens)}"
        try:
            await asyncio.wait_for(self.server.work_done_progress.create_async(token),
                                   CREATE_PROGRESS_SECONDS)
        except Exception as error:  # refused or unanswered: run without progress
            logger.warning("window/workDoneProgress/create failed: %r", error)
            return None
        return token

    def _record(self, label: str, results: list[ProbeResult], path: str, text: str) -> None:
        findings = [f for r in results for f in r.findings]
        texts = {path: text}
        for finding in findings:
            for where in [finding.get("path")] + [r.get("path") for r in
                                                  finding.get("related") or []]:
                absolute = os.path.abspath(str(where))
                if where and absolute not in texts and (other := _read(absolute)) is not None:
                    texts[absolute] = other
        changed = self.store.record(label, marks_of(label, findings, texts))
        self.server.probe_marks_changed(changed)

    def _refuse(self, uri: str, message: str, announce: bool) -> dict[str, Any]:
        if announce:
            self.server.warn(message)
        logger.info("probe of %s refused: %s", uri, message)
        return {"target": uri, "status": "refused", "message": message, "findings": [],
                "error": message}
