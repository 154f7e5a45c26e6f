"""The probe's child process: ``python -m gradguard.probe.child SPEC.json``.

Started by ``gradguard.probe.runner`` and never imported by the server or the CLI.
It caps its own address space before importing anything big, arms ``faulthandler``
(a crash or the parent's SIGUSR1 on timeout writes every thread's stack to a file the
parent reads, which is how a hang is located), imports torch, and runs the targets in
order, each with its stdout/stderr redirected at the descriptor level to files of its
own, so the user's prints, torch's warnings and C-level output never mix with the
events (a JSON-lines file of their own, see ``gradguard.probe.events``).
"""

from __future__ import annotations

import faulthandler
import gc
import itertools
import json
import os
import signal
import site as site_module
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any, NoReturn

from gradguard.probe import reaper
from gradguard.probe.events import EventWriter
from gradguard.probe.target import ProbeTarget

CRASH_FILE = "crash.txt"
EVENTS_FILE = "events.jsonl"
EXIT_FATAL = 3


def output_paths(workdir: str, index: int) -> tuple[str, str]:
    return (os.path.join(workdir, f"{index}.stdout"), os.path.join(workdir, f"{index}.stderr"))


class TargetEvents:
    """The event writer, with the number of the target running now on every event."""

    def __init__(self, writer: EventWriter) -> None:
        self.writer = writer
        self.index = -1

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        self.writer(kind, {"target": self.index, **data})


def limit_memory(megabytes: int | None) -> None:
    """Cap the address space (RLIMIT_AS): a runaway allocation fails in the child with
    an error, instead of swapping the machine. Not on CUDA, whose driver maps far more
    virtual memory than it uses; not where ``resource`` is missing (Windows)."""
    if not megabytes:
        return
    try:
        import resource
    except ImportError:
        return
    limit = megabytes * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def arm_faulthandler(workdir: str) -> IO[str]:
    crash = open(os.path.join(workdir, CRASH_FILE), "w")  # noqa: SIM115 - lives as long as we do
    faulthandler.enable(file=crash, all_threads=True)
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, file=crash, all_threads=True, chain=False)
    return crash


@contextmanager
def captured_output(workdir: str, index: int) -> Iterator[None]:
    """Point fds 1 and 2 at this target's files (C extensions and subprocesses too)."""
    stdout_path, stderr_path = output_paths(workdir, index)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    for fd, path in ((1, stdout_path), (2, stderr_path)):
        # Append mode: the parent may cut the file to its tail while the code prints.
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        os.dup2(target, fd)
        os.close(target)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                pass
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__  # a user's redirect ends
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def watch_parent(parent: int | None) -> None:
    """End the child, and all it started, if the process that runs it goes away (a
    server killed outright): nobody would be left to enforce the timeout."""
    if not parent or os.name != "posix":
        return
    exit_now = os._exit  # the real one: targets run with a reporting os._exit

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        try:
            token = os.environ.get(reaper.TOKEN_VARIABLE)
            if token:  # what left the process group, which the parent would have swept
                reaper.sweep(token)
            os.killpg(0, signal.SIGKILL)  # its own group: the child and what it started
        finally:
            exit_now(EXIT_FATAL)

    threading.Thread(target=watch, name="gradguard-parent-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    with open(args[0], encoding="utf-8") as file:
        spec = json.load(file)
    workdir: str = spec["workdir"]
    events = TargetEvents(EventWriter(os.path.join(workdir, EVENTS_FILE)))
    limit_memory(spec.get("memory_mb"))
    crash = arm_faulthandler(workdir)
    watch_parent(spec.get("parent"))
    try:
        import torch
    except ImportError as error:
        events("fatal", {"error": f"torch is not installed in {sys.executable} ({error}); "
                                  "the probe needs the probe extra: "
                                  "pip install 'gradguard[probe]'"})
        return EXIT_FATAL
    device = torch.device(spec.get("device") or "cpu")
    if device.type == "cuda" and not torch.cuda.is_available():
        events("fatal", {"error": "--device cuda, but torch.cuda.is_available() is False"})
        return EXIT_FATAL
    try:
        run_targets(spec, events, device)
    finally:
        crash.close()
    return 0


def run_targets(spec: dict[str, Any], events: TargetEvents, device: Any) -> None:
    import torch

    from gradguard.probe.execute import Executor
    from gradguard.probe.findings import Reporter
    from gradguard.probe.sites import UserFiles, library_dirs, point, site
    from gradguard.probe.tracker import Tracker

    os.chdir(spec["cwd"])
    targets = [ProbeTarget.from_json(t) for t in spec["targets"]]
    excluded = [*library_dirs(), os.path.dirname(torch.__file__)]
    if site_module.ENABLE_USER_SITE and site_module.USER_SITE:
        excluded.append(site_module.USER_SITE)
    included = sorted({os.path.dirname(os.path.abspath(t.path)) for t in targets})
    user_files = UserFiles(excluded, included)
    reporter: Reporter | None = None

    def clobber(event: Any) -> None:
        if reporter is not None:
            reporter.clobber(event)

    def stale(event: Any) -> None:
        if reporter is not None:
            reporter.stale(event)

    def release(finding: int) -> None:
        if reporter is not None:
            reporter.release(finding)

    def silent(event: Any) -> None:
        if reporter is not None:
            reporter.silent(event)

    tracker = Tracker(user_files, clobber, stale, release, silent)
    ids = itertools.count()
    first = spec.get("first", 0)
    pristine = (list(sys.argv), list(sys.path), set(sys.modules), os.getcwd())
    started = time.perf_counter()

    def ending(status: int) -> None:
        """The target ends the process itself (``os._exit``): settle it and say so,
        so that its findings are kept or withdrawn as at a normal end, and the
        parent runs the next targets in a new child instead of calling it a crash."""
        frame = user_files.innermost(sys._getframe(2))
        at = site(point(frame)) if frame is not None else None
        tracker.flush()
        tracker.settle_silent()
        if reporter is not None:
            reporter.settle(completed=status == 0)
        where = f" at {at.path}:{at.line}" if at is not None else ""
        events("end", {"status": "ok" if status == 0 else "exit",
                       "error": None if status == 0 else
                       f"the script ended its process with os._exit({status}){where}",
                       "explained": False, "line": at.line if at else None,
                       "path": at.path if at else None,
                       "seconds": time.perf_counter() - started, "process_exit": True})

    # torch's import leaves a large object graph that every gc.collect() would walk
    # (a third of a second); freezing it keeps the collection between targets cheap.
    gc.freeze()
    with tracker.installed(), os_exit_reported(ending):
        for index, target in enumerate(targets[first:], start=first):
            events.index = index
            reporter = Reporter(tracker, user_files, events, ids)
            with captured_output(spec["workdir"], index):
                events("start", {"what": str(target)})
                started = time.perf_counter()
                outcome = Executor(reporter, user_files, events, device).run(target)
                tracker.flush()
                tracker.settle_silent()
                reporter.settle(completed=outcome.status == "ok")
                events("end", {"status": outcome.status, "error": outcome.error,
                               "explained": outcome.explained, "line": outcome.line,
                               "path": outcome.path,
                               "seconds": time.perf_counter() - started})
            _restore(pristine, user_files)
            tracker.reset()
            reporter = None
            torch.set_grad_enabled(True)
            torch.autograd.set_detect_anomaly(False)
            gc.collect()  # graphs in reference cycles would keep their saved tensors


@contextmanager
def os_exit_reported(report: Callable[[int], None]) -> Iterator[None]:
    """``os._exit`` in this process calls ``report(status)`` first. Not in processes
    forked from it (DataLoader workers end with os._exit): they are not the target."""
    real_exit = os._exit
    own = os.getpid()

    def _exit(status: int) -> NoReturn:
        if os.getpid() == own:
            try:
                report(status)
            except BaseException:  # noqa: S110 - exiting regardless is the point
                pass
        real_exit(status)

    os._exit = _exit
    try:
        yield
    finally:
        os._exit = real_exit


def _restore(pristine: tuple[list[str], list[str], set[str], str],
             user_files: Any) -> None:
    """Undo what one target did to the interpreter that the next would trip over."""
    argv, path, modules, cwd = pristine
    sys.argv[:] = argv
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        file = getattr(sys.modules[name], "__file__", None)
        if file is not None and file in user_files:
            del sys.modules[name]
    os.chdir(cwd)


if __name__ == "__main__":
    status = main()
    # Not sys.exit: threads the user's code left running must not keep the child alive
    # (the parent would wait for them until its timeout).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
