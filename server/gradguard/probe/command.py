"""``gradguard probe``: its arguments and entry point (torch is imported only when run).

    gradguard probe TARGET [--format text|json] [--timeout S] [--memory-mb MB]
                    [--device cpu|cuda] [--auto] [--show-output] [-- SCRIPT ARGS]
    gradguard probe TARGET TARGET...  # several, in one child process (one torch import)
    gradguard probe            # every entry of [tool.gradguard.probe] in pyproject.toml

Findings go to stdout (``path:line:col: CODE message``, or JSON); notes, errors and,
with ``--show-output``, what the user's code printed go to stderr. Exit status: 1 if
anything was found, else 2 if a target could not be probed to its end (timeout,
crash, exception, bad target, no torch), else 0.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from typing import Any

from gradguard.config import load
from gradguard.probe.arguments import add_options
from gradguard.probe.config import ConfigError, load_config, probe_options
from gradguard.probe.runner import ProbeResult, run_probes
from gradguard.probe.target import ProbeTarget, TargetError, parse_target
from gradguard.progress import Progress

NO_TORCH = ("the probe runs your code under torch, which is not installed here; "
            "install the probe extra: pip install 'gradguard[probe]'")


def _split(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The TARGETs, and the script's arguments; options among the targets land in
    ``args``. Several targets share one child process (one torch import)."""
    words: list[str] = list(args.words)
    if words and words[0] == "--":
        words = words[1:]
    script: list[str] = []
    if "--" in words:
        cut = words.index("--")
        words, script = words[:cut], words[cut + 1:]
    late = argparse.ArgumentParser(prog="gradguard probe", add_help=False)
    add_options(late)
    late.add_argument("targets", nargs="*")
    known, unknown = late.parse_known_intermixed_args(words)
    if unknown:
        raise TargetError(f"unexpected {' '.join(unknown)} (arguments for the script go "
                          "after --)")
    targets: list[str] = known.targets
    del known.targets
    for name, value in vars(known).items():
        if value not in (None, False):
            setattr(args, name, value)
    if script and len(targets) != 1:
        raise TargetError("arguments after -- are for one script target")
    return targets, script


def _targets(args: argparse.Namespace, cwd: str) -> tuple[list[ProbeTarget], str, Any]:
    targets, script = _split(args)
    config = load_config(cwd)
    if targets:
        return [parse_target(t, auto=args.auto, argv=tuple(script)) for t in targets], cwd, \
            config
    if config is None or not config.entries:
        raise TargetError("no TARGET given, and no entries in [tool.gradguard.probe] of a "
                          "pyproject.toml here or above")
    return list(config.entries), config.root, config


def run(args: argparse.Namespace) -> int:
    if not _torch_installed():
        print(f"gradguard probe: {NO_TORCH}", file=sys.stderr)
        return 2
    cwd = os.getcwd()
    try:
        targets, root, config = _targets(args, cwd)
    except (TargetError, ConfigError) as error:
        print(f"gradguard probe: {error}", file=sys.stderr)
        return 2
    options = probe_options(config, args.timeout, args.memory_mb, args.device)
    # Each target named as it runs (a step under torch takes seconds), on a terminal.
    with Progress(sys.stderr, len(targets), "targets", name_after=0.0) as shown:
        results = run_probes(targets, timeout=options.timeout, cwd=root,
                             memory_mb=options.memory_mb, device=options.device,
                             on_event=lambda event: _tell(shown, event))
    # [tool.gradguard] select/ignore/severity, as check and the server apply them.
    project = load(root)
    selection = project.selection()
    for result in results:
        result.findings = [f for f in result.findings if selection.wants(f["code"])]
        for finding in result.findings:
            finding["severity"] = project.severity_of(finding["code"], finding["severity"])
            _relativize(finding, cwd)
    if (args.format or "text") == "json":
        print(json.dumps([r.to_json() for r in results], indent=2, ensure_ascii=False))
    else:
        for result in results:
            _print_text(result, args.show_output)
    if any(r.findings for r in results):
        return 1
    return 2 if any(r.error for r in results) else 0


def _tell(progress: Progress, event: dict[str, Any]) -> None:
    if event.get("event") == "start":
        progress.started(str(event["target"]))
    elif event.get("event") == "end":
        progress.finished(str(event["target"]))


def _torch_installed() -> bool:
    """Without importing it: the static checker's process never loads torch."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def _relativize(finding: dict[str, Any], cwd: str) -> None:
    finding["path"] = _relative(finding["path"], cwd)
    for related in finding.get("related", []):
        related["path"] = _relative(related["path"], cwd)


def _relative(path: str, cwd: str) -> str:
    if path.startswith(os.path.join(cwd, "")):
        return os.path.relpath(path, cwd)
    return path


def _print_text(result: ProbeResult, show_output: bool) -> None:
    for finding in result.findings:
        print(f"{finding['path']}:{finding['line']}:{finding['column']}: "
              f"{finding['code']} {finding['message']}")
        for related in finding["related"]:
            print(f"    {related['path']}:{related['line']}:{related['column']}: "
                  f"{related['message']}")
        if finding.get("torch_error"):
            print(f"    torch then raised: {finding['torch_error'].splitlines()[0]}")
    for ran in result.ran:
        print(f"gradguard probe: ran {ran['what']}: {ran['detail']}", file=sys.stderr)
    for skipped in result.skipped:
        print(f"gradguard probe: skipped {skipped['what']}: {skipped['reason']}",
              file=sys.stderr)
    if result.error:
        print(f"gradguard probe: {result.error}", file=sys.stderr)
    if show_output or (result.error and result.status in ("raised", "crashed", "fatal")):
        for name, text in (("stdout", result.stdout), ("stderr", result.stderr)):
            if not text:
                continue
            lines = text.rstrip("\n").splitlines()
            if not show_output:
                lines = lines[-15:]
            print(f"--- {name} of {result.target} ---", file=sys.stderr)
            print("\n".join(lines), file=sys.stderr)
