"""The parent side of the probe: run targets in a child process, never in this one.

This module imports no torch and never raises into its caller for anything the
user's code does: a hang (wall-clock timeout), a crash (``os.abort()``, a segfault),
an exception, an exhausted memory limit or a missing torch all come back as a
``ProbeResult`` with ``error`` saying what happened and where. It is what the CLI and
the language server call:

    result = run_probe("train.py::step", timeout=60, cwd=root, cancel_event=event)
    result = await run_probe_async("models.py --auto", cwd=root)  # cancel the task to stop

The child (``python -m gradguard.probe.child``) writes its events to a JSON-lines file
and the user's stdout/stderr to files of their own (see ``gradguard.probe.events``), so
the user's prints are returned apart from the findings, and no pipe can fill up.
Several targets can share one child (one torch import); one that hangs or crashes is
charged its error and the rest run in a fresh child.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gradguard.probe import holes, reaper
from gradguard.probe.config import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT
from gradguard.probe.events import Event, EventReader
from gradguard.probe.target import ProbeTarget, TargetError, parse_target

# Importing torch in the child is not the user's code: it gets its own allowance, so
# that a short --timeout limits the target, not a cold start on a loaded machine.
STARTUP_TIMEOUT = 180.0
OUTPUT_LIMIT = 1_000_000  # characters of the user's stdout/stderr kept per target
# An output file past this size is cut down to its last OUTPUT_LIMIT bytes while the
# child runs: a print loop must not fill the disk before its timeout.
TRIM_BYTES = 8 * OUTPUT_LIMIT
_POLL = 0.05
_CHILD_EXIT_FATAL = 3
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PACKAGE_DIR = os.path.join(_PACKAGE_ROOT, "gradguard")

OnEvent = Callable[[Event], None]


@dataclass
class ProbeResult:
    """What one target did under the probe.

    ``findings``: dicts in the JSON schema of ``gradguard check`` (absolute paths) plus
    ``"source": "probe"`` and ``"torch_error"`` (the error torch raised because of the
    finding, e.g. backward's, or None). ``error``: None when the target ran to its end,
    or stopped only because of an error a finding explains; otherwise what went wrong,
    in a sentence. ``status``: ok, raised, exit, bad-target, timeout, crashed,
    cancelled, fatal (the child could not probe at all, e.g. no torch).
    """

    target: str
    findings: list[dict[str, Any]] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    error: str | None = None
    status: str = "ok"
    ran: list[dict[str, str]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    duration: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "status": self.status, "error": self.error,
                "findings": self.findings, "ran": self.ran, "skipped": self.skipped,
                "stdout": self.stdout, "stderr": self.stderr,
                "duration": round(self.duration, 3)}


@dataclass
class _Options:
    cwd: str
    timeout: float
    memory_mb: int | None
    device: str
    python: str
    cancel_event: threading.Event | None
    on_event: OnEvent | None


def run_probe(target: str | ProbeTarget, *, timeout: float = DEFAULT_TIMEOUT,
              cwd: str | os.PathLike[str] | None = None,
              cancel_event: threading.Event | None = None,
              memory_mb: int | None = DEFAULT_MEMORY_MB, device: str = "cpu",
              python: str | None = None, on_event: OnEvent | None = None) -> ProbeResult:
    """Probe one target in a fresh child process; blocks until it is done.

    Setting ``cancel_event`` (from any thread) kills the child and returns at once with
    status ``cancelled``. ``on_event`` is called, on this thread, with each event as
    it arrives (``start``, ``finding``, ``update``, ``retract``, ``ran``, ``skipped``, ``end``)."""
    return run_probes([target], timeout=timeout, cwd=cwd, cancel_event=cancel_event,
                      memory_mb=memory_mb, device=device, python=python,
                      on_event=on_event)[0]


def run_probes(targets: Sequence[str | ProbeTarget], *, timeout: float = DEFAULT_TIMEOUT,
               cwd: str | os.PathLike[str] | None = None,
               cancel_event: threading.Event | None = None,
               memory_mb: int | None = DEFAULT_MEMORY_MB, device: str = "cpu",
               python: str | None = None,
               on_event: OnEvent | None = None) -> list[ProbeResult]:
    """Probe several targets, sharing one torch import; the timeout is per target."""
    options = _Options(os.path.abspath(cwd or os.getcwd()), timeout, memory_mb, device,
                       python or sys.executable, cancel_event, on_event)
    results: list[ProbeResult] = []
    parsed: list[ProbeTarget] = []
    for target in targets:
        try:
            parsed.append(parse_target(target) if isinstance(target, str) else target)
        except TargetError as error:
            return [ProbeResult(str(t), error=str(error), status="bad-target")
                    for t in targets]
    results = [ProbeResult(str(t)) for t in parsed]
    if not parsed:
        return results
    with tempfile.TemporaryDirectory(prefix="gradguard-probe-") as workdir:
        first = 0
        while first < len(parsed):
            first = _run_child(parsed, first, options, workdir, results)
    return results


async def run_probe_async(target: str | ProbeTarget, *, timeout: float = DEFAULT_TIMEOUT,
                          cwd: str | os.PathLike[str] | None = None,
                          memory_mb: int | None = DEFAULT_MEMORY_MB, device: str = "cpu",
                          python: str | None = None,
                          on_event: OnEvent | None = None) -> ProbeResult:
    """``run_probe`` for an asyncio loop: runs in a worker thread, ``on_event`` is called
    on the loop, and cancelling the awaiting task kills the child before re-raising."""
    loop = asyncio.get_running_loop()
    cancel = threading.Event()

    def forward(event: Event) -> None:
        if on_event is not None:
            loop.call_soon_threadsafe(on_event, event)

    job = asyncio.ensure_future(asyncio.to_thread(
        run_probe, target, timeout=timeout, cwd=cwd, cancel_event=cancel,
        memory_mb=memory_mb, device=device, python=python, on_event=forward))
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:
        cancel.set()
        await job  # returns promptly: the child is killed
        raise


# -- one child ----------------------------------------------------------------------


@dataclass
class _Running:
    """What the parent knows of the child's progress."""

    current: int | None = None
    since: float = 0.0
    started_at: dict[int, float] = field(default_factory=dict)
    ended: set[int] = field(default_factory=set)
    fatal: str | None = None
    exited: int | None = None  # the target that ended the child with os._exit
    # Output cut while the child ran: per (target, "stdout"/"stderr"), the offset its
    # file is read from (the head before it freed), or where the file system cannot
    # free a head, the bytes cut and the tail kept from before the cut.
    start: dict[tuple[int, str], int] = field(default_factory=dict)
    cut: dict[tuple[int, str], int] = field(default_factory=dict)
    kept: dict[tuple[int, str], bytes] = field(default_factory=dict)
    # Per target, findings by id (events attach to and retract them by id).
    findings: dict[int, dict[int, dict[str, Any]]] = field(default_factory=dict)


def _run_child(targets: list[ProbeTarget], first: int, options: _Options, workdir: str,
               results: list[ProbeResult]) -> int:
    """Run targets[first:] in one child; return the index to resume from."""
    for name in os.listdir(workdir):  # a previous child's leftovers
        os.remove(os.path.join(workdir, name))
    spec = {"workdir": workdir, "cwd": options.cwd, "first": first,
            "targets": [t.to_json() for t in targets], "device": options.device,
            "memory_mb": options.memory_mb if options.device != "cuda" else None,
            "parent": os.getpid()}
    spec_path = os.path.join(workdir, "spec.json")
    with open(spec_path, "w", encoding="utf-8") as file:
        json.dump(spec, file)
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"  # prints reach the file before a crash
    env["TORCH_COMPILE_DISABLE"] = "1"  # the probe checks eager semantics, op by op
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
    token = env[reaper.TOKEN_VARIABLE] = reaper.new_token()  # inherited by all it starts
    child_out = os.path.join(workdir, "child.stdout")
    child_err = os.path.join(workdir, "child.stderr")
    running = _Running(since=time.monotonic())
    reader = EventReader(os.path.join(workdir, "events.jsonl"))
    with open(child_out, "wb") as out, open(child_err, "wb") as err:
        try:
            process = subprocess.Popen(
                [options.python, "-m", "gradguard.probe.child", spec_path],
                cwd=options.cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env,
                start_new_session=os.name == "posix")
        except OSError as error:
            for result in results[first:]:
                result.status, result.error = "fatal", f"cannot start {options.python}: {error}"
            return len(targets)
        reaper.track(process)
        stopped = ""
        try:
            while True:
                for event in reader.read():
                    _handle(event, running, results, targets, options)
                if process.poll() is not None:
                    break
                now = time.monotonic()
                if (options.cancel_event is not None and options.cancel_event.is_set()) \
                        or reaper.shutting_down.is_set():
                    reaper.kill_group(process)
                    stopped = "cancelled"
                    break
                allowance = options.timeout if running.current is not None \
                    else STARTUP_TIMEOUT
                if now - running.since > allowance:
                    _dump_stacks(process, workdir)
                    reaper.kill_group(process)
                    stopped = "timeout"
                    break
                _trim_outputs(workdir, running)
                time.sleep(_POLL)
            process.wait()
        finally:
            # Whatever the user's code started and left running (a subprocess, a
            # daemon that left the process group) goes with the child.
            reaper.kill_group(process)
            reaper.sweep(token)
            reaper.untrack(process)
    for event in reader.read():
        _handle(event, running, results, targets, options)
    return _settle(process.returncode, stopped, running, first, targets, options, workdir,
                   results)


def _handle(event: Event, running: _Running, results: list[ProbeResult],
            targets: list[ProbeTarget], options: _Options) -> None:
    kind = event.get("event")
    index = event.get("target", -1)
    if kind == "fatal":
        running.fatal = str(event.get("error"))
    if not isinstance(index, int) or not 0 <= index < len(results):
        return
    result = results[index]
    if kind == "start":
        running.current, running.since = index, time.monotonic()
        running.started_at[index] = running.since
    elif kind == "finding":
        running.findings.setdefault(index, {})[event["id"]] = event["finding"]
        result.findings = list(running.findings[index].values())
    elif kind == "update":
        known = running.findings.get(index, {})
        if event.get("id") in known:
            known[event["id"]] = event["finding"]
            result.findings = list(known.values())
    elif kind == "retract":
        running.findings.get(index, {}).pop(int(event.get("id", -1)), None)
        result.findings = list(running.findings.get(index, {}).values())
    elif kind == "ran":
        result.ran.append({"what": str(event.get("what")), "detail": str(event.get("detail"))})
    elif kind == "skipped":
        result.skipped.append({"what": str(event.get("what")),
                               "reason": str(event.get("reason"))})
    elif kind == "end":
        running.ended.add(index)
        if event.get("process_exit"):
            running.exited = index
        running.current, running.since = None, time.monotonic()
        # The child's own clock: the parent sees events only every _POLL seconds.
        seconds = event.get("seconds")
        result.duration = seconds if isinstance(seconds, (int, float)) else \
            running.since - running.started_at.get(index, running.since)
        result.status = str(event.get("status"))
        result.error = _end_error(event, result, targets[index], options)
    if options.on_event is not None:
        try:
            options.on_event({**event, "target": result.target})
        except Exception:  # a caller's callback must not stop the probe
            pass


def _end_error(event: Event, result: ProbeResult, target: ProbeTarget,
               options: _Options) -> str | None:
    status, error = event.get("status"), event.get("error")
    if status == "ok":
        return None
    if status == "raised":
        if event.get("explained"):
            return None
        where = ""
        if event.get("path"):
            where = f" at {_shown(str(event['path']), options.cwd)}:{event.get('line')}"
        text = f"{target} raised {error}{where}"
        if options.memory_mb and ("can't allocate memory" in str(error)
                                  or str(error).startswith("MemoryError")):
            text += (f" (the probe limits its memory to {options.memory_mb} MB; "
                     "raise it with --memory-mb)")
        return text
    return f"{target}: {error}"


def _settle(returncode: int, stopped: str, running: _Running, first: int,
            targets: list[ProbeTarget], options: _Options, workdir: str,
            results: list[ProbeResult]) -> int:
    """Charge what stopped the child to the target it was running; where to resume."""
    unfinished = [i for i in range(first, len(targets)) if i not in running.ended]
    _collect_output(workdir, first, len(targets), results, running)
    if not unfinished:
        return len(targets)
    if running.exited is not None and running.current is None:
        return running.exited + 1  # os._exit ended a target: the rest run in a new child
    if running.fatal is not None or (returncode == _CHILD_EXIT_FATAL
                                     and not running.started_at):
        message = running.fatal or "the probe's child process could not start"
        for index in unfinished:
            results[index].status, results[index].error = "fatal", message
        return len(targets)
    culprit = running.current
    dump = _read(os.path.join(workdir, "crash.txt"))
    if culprit is None:  # died before its first target or between two
        child_err = _read(os.path.join(workdir, "child.stderr"))
        message = _crash_message(returncode, stopped, dump, options, None)
        if stopped == "cancelled":
            message = "cancelled"
        elif child_err.strip():  # e.g. the interpreter could not import gradguard
            message += f": {child_err.strip().splitlines()[-1]}"
        for index in unfinished:
            results[index].status = stopped or "crashed"
            results[index].error = message
        results[unfinished[0]].stderr += child_err
        return len(targets)
    result = results[culprit]
    result.duration = time.monotonic() - running.started_at.get(culprit, time.monotonic())
    result.status = stopped or "crashed"
    result.error = _crash_message(returncode, stopped, dump, options, targets[culprit])
    if dump and stopped != "cancelled":
        result.stderr += ("\n" if result.stderr else "") + dump
    if stopped == "cancelled":
        for index in unfinished:
            results[index].status, results[index].error = "cancelled", "cancelled"
        return len(targets)
    return culprit + 1


def _crash_message(returncode: int, stopped: str, dump: str, options: _Options,
                   target: ProbeTarget | None) -> str:
    label = f"{target}: " if target is not None else ""
    where = _dump_location(dump, options.cwd, target)
    if stopped == "cancelled":
        return "cancelled"
    if stopped == "timeout":
        if target is None:
            return f"the probe's child did not start within {STARTUP_TIMEOUT:.0f} s"
        return (f"{label}timed out after {options.timeout:g} s and was stopped"
                f"{', while running ' + where if where else ''}")
    if returncode >= 0:  # exit() from C code, or a process ended from outside
        text = f"{label}the probe's Python process exited with status {returncode}"
        return text + (f" while running {where}" if where else "")
    try:
        how = f"signal {signal.Signals(-returncode).name}"
    except ValueError:
        how = f"signal {-returncode}"
    text = f"{label}the probe's Python process crashed ({how})"
    if where:
        text += f" in {where}"
    if returncode == -getattr(signal, "SIGKILL", 9) and options.memory_mb:
        text += " (killed: possibly out of memory)"
    return text


_FRAME = re.compile(r'^\s*File "(?P<path>.+)", line (?P<line>\d+) in (?P<function>.+)$')


def _dump_location(dump: str, cwd: str, target: ProbeTarget | None) -> str:
    """The innermost frame of the user's code in a faulthandler dump, as `path:line (src)`.

    The dump lists the current thread last, most recent call first."""
    if not dump:
        return ""
    blocks = re.split(r"\n(?=(?:Current thread|Thread) 0x)", dump)
    current = [b for b in blocks if b.lstrip().startswith("Current thread")]
    roots = [cwd] + ([os.path.dirname(os.path.abspath(os.path.join(cwd, target.path)))]
                     if target is not None else [])
    for block in current + blocks:
        for line in block.splitlines():
            match = _FRAME.match(line)
            if match is None:
                continue
            path = match["path"]
            if not _looks_like_users(path, roots):
                continue
            number = int(match["line"])
            code = _source_line(path, number)
            return f"{_shown(path, cwd)}:{number}" + (f" (`{code}`)" if code else "")
    return ""


def _looks_like_users(path: str, roots: list[str]) -> bool:
    absolute = os.path.abspath(path)
    if path.startswith("<") or absolute.startswith(_PACKAGE_DIR + os.sep):
        return False
    if any(part in absolute for part in ("site-packages", "dist-packages")):
        return False
    return any(absolute.startswith(os.path.join(root, "")) for root in roots)


def _source_line(path: str, number: int) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            for index, line in enumerate(file, 1):
                if index == number:
                    return line.strip()
    except OSError:
        pass
    return ""


def _collect_output(workdir: str, first: int, last: int, results: list[ProbeResult],
                    running: _Running) -> None:
    for index in range(first, last):
        if index not in running.started_at:
            continue
        for stream in ("stdout", "stderr"):
            path = os.path.join(workdir, f"{index}.{stream}")
            key = (index, stream)
            text = _read(path, running.kept.get(key, b""), running.cut.get(key, 0),
                         running.start.get(key, 0))
            setattr(results[index], stream, text)


def _trim_outputs(workdir: str, running: _Running) -> None:
    """Cut the running target's output files down to their tails once they are big
    (the child writes them in append mode, so it goes on at the new end)."""
    index = running.current
    if index is None:
        return
    for stream in ("stdout", "stderr"):
        path = os.path.join(workdir, f"{index}.{stream}")
        key = (index, stream)
        try:
            size = os.path.getsize(path)
            if size - running.start.get(key, 0) <= TRIM_BYTES:
                continue
            with open(path, "r+b") as file:
                if holes.free_head(file.fileno(), size - OUTPUT_LIMIT):
                    running.start[key] = size - OUTPUT_LIMIT
                    continue
                # Racy (what is written between the read and the truncate is lost),
                # but the disk must not fill.
                file.seek(-OUTPUT_LIMIT, os.SEEK_END)
                tail = file.read()
                size = file.tell()
                file.truncate(0)
        except OSError:
            continue
        running.cut[key] = running.cut.get(key, 0) + size - len(tail) + len(
            running.kept.get(key, b""))
        running.kept[key] = tail


def _read(path: str, kept: bytes = b"", cut: int = 0, start: int = 0) -> str:
    """A file's text from ``start`` (the head before it freed by ``_trim_outputs``),
    after ``kept`` (a tail it saved, having cut ``cut`` bytes before it), keeping at
    most OUTPUT_LIMIT characters with a note."""
    cut += start
    try:
        with open(path, "rb") as file:
            file.seek(start)
            data = kept + file.read()
    except OSError:
        data = kept
    text = data.decode("utf-8", errors="replace")
    if len(text) > OUTPUT_LIMIT:
        cut += len(text) - OUTPUT_LIMIT
        text = text[-OUTPUT_LIMIT:]
    if cut:
        text = f"[... {cut} characters cut ...]\n" + text
    return text


def _dump_stacks(process: subprocess.Popen[bytes], workdir: str) -> None:
    """Ask the child's faulthandler for every thread's stack: where it hangs."""
    usr1 = getattr(signal, "SIGUSR1", None)
    if usr1 is None:
        return
    crash = os.path.join(workdir, "crash.txt")
    try:
        os.kill(process.pid, usr1)
    except OSError:
        return
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and not _read(crash):
        time.sleep(_POLL)
    time.sleep(_POLL)  # let the dump finish


def _shown(path: str, cwd: str) -> str:
    absolute = os.path.abspath(os.path.join(cwd, path))
    if absolute.startswith(os.path.join(cwd, "")):
        return os.path.relpath(absolute, cwd)
    return absolute
