"""The accuracy judge: the corpus of real reports in tests/corpus, judged by torch.

Shared by the corpus test (tests/test_corpus.py) and its command line,
``bench/accuracy.py``, so that both score the same way.

Two steps, both driven by tests/corpus/manifest.csv (one row a case):

1. Labels. Every script runs under torch in a subprocess, with a timeout. A positive
   must raise the in-place RuntimeError of its ``error`` kind (saved-modified, leaf or
   view); a fixed or negative script must exit 0. A positive of kind ``silent-grad`` (a
   write through ``.data`` into a saved tensor: autograd raises nothing, the gradients
   are wrong) must exit 0 and print a ``GRADS:`` line whose numbers differ from the
   ``GRADS:`` line its fixed counterpart prints (see ``judge_silent``). A case that does
   not behave as labelled fails loudly: the judge exits 1 and says which one and why.
2. Scores. ``gradguard check --format json`` runs on every file and is scored against
   the labels, per pattern. A positive is *found* when a finding's range covers one of
   its ``inplace_line`` numbers (the line of the in-place op; for an ``inplace=True``
   layer, the line that builds it and the line that calls it; for
   optimizer-step-before-second-backward, the ``optimizer.step()`` line). A fixed or
   negative file with any error-severity finding is a *false positive*. The slot for
   ``gradguard probe`` is scored the same way once the command exists.

Multi-file cases are small projects: ``file`` is the entry script of a folder
(``positive/srgan_split/train.py``), the one that is run and the one ``check`` and
``probe`` are given (``check`` follows the project's imports from it; each multi-file
case is checked on its own, as its own project). Their ``inplace_line`` and
``saving_line`` entries may name another file of the folder, relative to the entry
script's folder (``model.py:58``, ``models/layers.py:19``; a bare number is a line of the
entry script). A positive is found when a finding in the named file covers the named
line; a fixed or negative case is a false positive when an error-severity finding lands
in any file of its folder.

Scores are also given per family (the manifest's ``family`` column, a key of
``FAMILIES``: the issue-16 mechanism, or from 10 on the issue-28 mechanism, a positive and
its fixed twin belong to), so that the recall of each mechanism can be followed on its own.
The manifest's ``query`` column records the search query that found the thread a case was
rebuilt from (issue 28's procedure); it is not scored.

The manifest's line numbers are also checked against the ``# [inplace]`` and
``# [saves]`` markers in the scripts, so that an edit that moves a line cannot leave
the manifest pointing at the wrong one.
"""

from __future__ import annotations

import atexit
import csv
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.forkserver import ForkServer

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
MANIFEST = CORPUS / "manifest.csv"
SCORES = CORPUS / "scores.json"

KINDS = ("positive", "fixed", "negative")
COLUMNS = ("file", "kind", "pattern", "source", "inplace_line", "saving_line", "error",
           "family", "query")

# The families of hazards of issue 16 ("Static recall 90%"), by the manifest's ``family``
# number: the mechanism a positive (and its fixed twin) belongs to, where one applies.
FAMILIES: dict[str, str] = {
    "1": "multi-output views",
    "2": "leaves that require grad",
    "3": "training-loop order",
    "4": "savers not yet known",
    "5": "aliases",
    "6": "flag- and config-dependent paths",
    "7": "sibling and shared-input savers",
    "8": "contexts that change the rules",
    "9": "writes through .data",
    # The mechanisms issue 28 ("Recall that generalises") found the corpus barely covers; their
    # cases come from the search procedure of tests/corpus/README.md (the manifest's `query`).
    "10": "backward hooks",
    "11": "custom autograd Functions",
    "12": "several networks and optimizers",
    "13": "layers of installed libraries",
    "14": "savers of their own outputs",
}
# The search corpora a manifest `query` names first: GitHub issue and pull-request threads,
# or stored web pages (forums, Q&A, blogs).
QUERY_CORPORA = ("issues: ", "pages: ")
LABEL_TIMEOUT = 180.0  # seconds per script; they take a few seconds, torch import included
CHECK_TIMEOUT = 300.0

# The RuntimeError kinds, by the text autograd puts in their messages (torch 2.x).
ERROR_TEXTS: dict[str, tuple[str, ...]] = {
    "saved-modified": (
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation",
    ),
    # also matches "a view of a leaf Variable that requires grad is being used ..."
    "leaf": ("leaf Variable that requires grad is being used in an in-place operation",),
    "view": (
        "is a view and is being modified inplace",
        "is a view and its base or another view of its base has been modified inplace",
        "A view was created in no_grad mode and is being modified inplace",
    ),
}

# A positive whose in-place write raises nothing but silently corrupts the gradients
# (``x.data.mul_()`` on a tensor backward saved). Judged by comparing gradients with the
# fixed counterpart: both scripts print one line ``GRADS: [numbers...]`` (JSON).
SILENT = "silent-grad"
GRADS_PREFIX = "GRADS:"
GRADS_RTOL, GRADS_ATOL = 1e-4, 1e-6

MARKERS = {"inplace": re.compile(r"#.*\[inplace\]"), "saves": re.compile(r"#.*\[saves\]")}


# A marked line: (file relative to the case's folder, line number).
Site = tuple[str, int]


@dataclass(frozen=True)
class Case:
    file: str  # relative to tests/corpus; for a multi-file case, its entry script
    kind: str
    pattern: str
    source: str
    inplace_lines: tuple[Site, ...]
    saving_lines: tuple[Site, ...]
    error: str
    family: str = ""  # a key of FAMILIES, or "" when none applies
    # The search query (``issues: ...`` or ``pages: ...``) whose results listed the thread the
    # case was rebuilt from; "" for the cases added before issue 28's procedure.
    query: str = ""

    @property
    def path(self) -> Path:
        return (CORPUS / self.file).resolve()

    @property
    def id(self) -> str:
        return self.file

    @property
    def multifile(self) -> bool:
        """A project folder (``positive/NAME/entry.py``) rather than one script."""
        return len(Path(self.file).parts) > 2

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def files(self) -> list[Path]:
        """The case's Python files: the script, or every .py file of the folder."""
        if not self.multifile:
            return [self.path]
        return sorted(p.resolve() for p in self.folder.rglob("*.py")
                      if "__pycache__" not in p.parts)

    def site_path(self, site: Site) -> Path:
        return (self.folder / site[0]).resolve()


class ManifestError(Exception):
    pass


def _lines(text: str, entry: str) -> tuple[Site, ...]:
    """``33|model.py:58`` -> ((entry, 33), ("model.py", 58)): a bare number is a line of
    the entry script, ``path:line`` a line of another file of the case's folder."""
    sites = []
    for item in text.split("|"):
        item = item.strip()
        if not item:
            continue
        where, _, line = item.rpartition(":")
        sites.append((where or entry, int(line)))
    return tuple(sites)


def _show(sites: Sequence[Site], entry: str) -> str:
    return "|".join(str(n) if f == entry else f"{f}:{n}" for f, n in sites) or "none"


def load_manifest(path: Path = MANIFEST) -> list[Case]:
    """The manifest's cases, after checking that every row is well formed."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ManifestError(f"{path}: columns {reader.fieldnames}, expected {COLUMNS}")
        rows = list(reader)
    cases: list[Case] = []
    problems: list[str] = []
    for number, row in enumerate(rows, start=2):
        where = f"{path.name}:{number} ({row['file']})"
        entry = Path(row["file"]).name
        try:
            case = Case(row["file"], row["kind"], row["pattern"], row["source"],
                        _lines(row["inplace_line"], entry), _lines(row["saving_line"], entry),
                        row["error"], row["family"], row["query"])
        except ValueError as exc:
            problems.append(f"{where}: bad line number: {exc}")
            continue
        if case.kind not in KINDS:
            problems.append(f"{where}: kind {case.kind!r} is not one of {KINDS}")
        if not case.path.is_file():
            problems.append(f"{where}: no such file {case.path}")
        for site in case.inplace_lines + case.saving_lines:
            target = case.site_path(site)
            if not target.is_file() or case.folder not in target.parents:
                problems.append(f"{where}: line {site[0]}:{site[1]} names no file of the case")
        if not case.pattern or not case.source:
            problems.append(f"{where}: pattern and source are required")
        if case.kind == "positive":
            if case.error not in ERROR_TEXTS and case.error != SILENT:
                problems.append(f"{where}: error {case.error!r} is not one of "
                                f"{[*ERROR_TEXTS, SILENT]}")
            if not case.inplace_lines:
                problems.append(f"{where}: a positive needs its inplace_line")
        elif case.error or case.inplace_lines or case.saving_lines:
            problems.append(f"{where}: only positives have error/inplace_line/saving_line")
        if case.query and not case.query.startswith(QUERY_CORPORA):
            problems.append(f"{where}: query {case.query!r} does not name its corpus "
                            f"({' or '.join(QUERY_CORPORA)})")
        if case.family and (case.family not in FAMILIES or case.kind == "negative"):
            problems.append(f"{where}: family {case.family!r}: positives and fixed files take "
                            f"one of {list(FAMILIES)}, negatives none")
        cases.append(case)
    families = {c.file.partition("/")[2]: c.family for c in cases if c.kind == "positive"}
    problems += [f"{c.file}: family {c.family!r}, its positive's is "
                 f"{families.get(c.file.partition('/')[2])!r}"
                 for c in cases if c.kind == "fixed"
                 and c.family != families.get(c.file.partition("/")[2], c.family)]
    files = [c.file for c in cases]
    problems += [f"{f}: listed twice" for f in sorted({f for f in files if files.count(f) > 1})]
    if problems:
        raise ManifestError("\n".join(problems))
    return cases


def select(cases: Iterable[Case], only: str | None) -> list[Case]:
    """The cases ``--only`` names: ``family=N`` selects a family (its positives and fixed
    files); other text selects the cases whose file or pattern contains it."""
    if not only:
        return list(cases)
    key, equals, value = only.partition("=")
    if equals and key == "family":
        return [c for c in cases if c.family == value]
    return [c for c in cases if only in c.file or only in c.pattern]


def markers(case: Case) -> dict[str, set[Site]]:
    """The ``# [inplace]`` and ``# [saves]`` lines of every Python file of the case."""
    found: dict[str, set[Site]] = {tag: set() for tag in MARKERS}
    for path in case.files:
        name = path.relative_to(case.folder).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for tag, rx in MARKERS.items():
                if rx.search(line):
                    found[tag].add((name, number))
    return found


def marker_problems(case: Case) -> list[str]:
    """Where the manifest's line numbers disagree with the markers in the case's files."""
    if case.kind != "positive":
        return []
    found = markers(case)
    entry = case.path.name
    problems = []
    for tag, column, lines in (("inplace", "inplace_line", case.inplace_lines),
                               ("saves", "saving_line", case.saving_lines)):
        if found[tag] != set(lines):
            problems.append(f"{case.file}: manifest {column} {_show(lines, entry)}, "
                            f"# [{tag}] markers on {_show(sorted(found[tag]), entry)}")
    return problems


# --------------------------------------------------------------------------- labels

@dataclass(frozen=True)
class LabelResult:
    case: Case
    ok: bool
    detail: str
    seconds: float


def error_kind(stderr: str) -> str | None:
    """The in-place RuntimeError kind a traceback ends with, if it is one."""
    lines = [line for line in stderr.splitlines() if line.startswith("RuntimeError")]
    if not lines:
        return None
    message = lines[-1]
    for kind, texts in ERROR_TEXTS.items():
        if any(text in message for text in texts):
            return kind
    return None


def _last_error(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no output on stderr)"


def script_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")  # scripts run side by side on few cores
    env["PYTHONWARNINGS"] = "ignore"
    return env


def fixed_counterpart(case: Case) -> Path:
    """The fixed script paired with a positive (same path below fixed/)."""
    return (CORPUS / "fixed" / Path(case.file).relative_to("positive")).resolve()


def grads_line(stdout: str) -> list[float] | None:
    """The numbers of the last ``GRADS:`` line a script printed, if any."""
    lines = [line for line in stdout.splitlines() if line.startswith(GRADS_PREFIX)]
    if not lines:
        return None
    try:
        values = json.loads(lines[-1][len(GRADS_PREFIX):])
        return [float(v) for v in values]
    except (ValueError, TypeError):
        return None


_forkserver: ForkServer | None = None
_forkserver_lock = threading.Lock()


def run_python(argv: Sequence[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """``python *argv`` in ``cwd`` with script_env(), in a process forked from one that has
    imported torch (tools/forkserver.py): the scripts' own work, without a torch import
    each. Raises subprocess.TimeoutExpired as subprocess.run does."""
    global _forkserver
    with _forkserver_lock:
        if _forkserver is None:
            _forkserver = ForkServer(script_env())
            atexit.register(_forkserver.close)
    return _forkserver.run(argv, cwd, timeout)


def _run_script(path: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return run_python([str(path)], path.parent, timeout)


def judge_silent(case: Case, timeout: float = LABEL_TIMEOUT) -> LabelResult:
    """A silent-grad positive: it runs cleanly, and the gradients it prints differ from
    those of its fixed counterpart (same seed, same data, the write made safe)."""
    start = time.monotonic()
    fixed = fixed_counterpart(case)
    try:
        runs = [_run_script(path, timeout) for path in (case.path, fixed)]
    except subprocess.TimeoutExpired:
        return LabelResult(case, False, f"timed out after {timeout:.0f} s",
                           time.monotonic() - start)
    seconds = time.monotonic() - start
    for path, proc in zip((case.path, fixed), runs, strict=True):
        if proc.returncode != 0:
            return LabelResult(case, False, f"{path.name} ({path.parent.name}) failed (exit "
                               f"{proc.returncode}): {_last_error(proc.stderr)}", seconds)
    bad, good = (grads_line(proc.stdout) for proc in runs)
    if bad is None or good is None:
        return LabelResult(case, False, f"a silent-grad case and its fix must each print "
                           f"one {GRADS_PREFIX} line", seconds)
    same = len(bad) == len(good) and all(
        abs(b - g) <= GRADS_ATOL + GRADS_RTOL * abs(g) for b, g in zip(bad, good, strict=True))
    if same:
        return LabelResult(case, False, "ran cleanly with the same gradients as its fix: "
                           "the write does not corrupt them", seconds)
    return LabelResult(case, True, "ran cleanly, with gradients that differ from its fix",
                       seconds)


def judge_label(case: Case, timeout: float = LABEL_TIMEOUT) -> LabelResult:
    """Run one script under torch and say whether it behaves as labelled."""
    if case.kind == "positive" and case.error == SILENT:
        return judge_silent(case, timeout)
    start = time.monotonic()
    try:
        proc = _run_script(case.path, timeout)
    except subprocess.TimeoutExpired:
        return LabelResult(case, False, f"timed out after {timeout:.0f} s",
                           time.monotonic() - start)
    seconds = time.monotonic() - start
    if case.kind == "positive":
        kind = error_kind(proc.stderr)
        if proc.returncode != 0 and kind == case.error:
            return LabelResult(case, True, f"raised the {kind} error", seconds)
        if proc.returncode == 0:
            return LabelResult(case, False, "ran cleanly, but it is labelled positive "
                               f"(expected the {case.error} error)", seconds)
        return LabelResult(case, False, f"expected the {case.error} error, got "
                           f"{kind or 'another failure'}: {_last_error(proc.stderr)}", seconds)
    if proc.returncode == 0:
        return LabelResult(case, True, "ran cleanly", seconds)
    return LabelResult(case, False, f"labelled {case.kind} but failed (exit "
                       f"{proc.returncode}): {_last_error(proc.stderr)}", seconds)


def judge_labels(cases: Sequence[Case], jobs: int | None = None,
                 timeout: float = LABEL_TIMEOUT) -> list[LabelResult]:
    jobs = jobs or max(1, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda c: judge_label(c, timeout), cases))


# --------------------------------------------------------------------------- scores

def gradguard_env() -> dict[str, str]:
    """The environment to run ``python -m gradguard`` in, installed or from server/."""
    env = dict(os.environ)
    server = str(ROOT / "server")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (server, env.get("PYTHONPATH")) if p)
    return env


Findings = dict[Path, list[dict[str, Any]]]


def _run_tool(command: str, files: Sequence[Path], timeout: float) -> tuple[Findings, str | None]:
    """One run of ``gradguard <command> --format json`` over files: findings or an error.

    ``check`` prints a list of findings; ``probe`` prints a list of target reports, each
    with its own ``findings`` (and an ``error`` when the target could not be run).
    """
    cmd = [sys.executable, "-m", "gradguard", command, "--format", "json", *map(str, files)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              cwd=ROOT, env=gradguard_env())
    except subprocess.TimeoutExpired:
        return {}, f"timed out after {timeout:.0f} s"
    if proc.returncode not in (0, 1):
        return {}, f"exit {proc.returncode}: {_last_error(proc.stderr)}"
    try:
        items = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError as exc:
        return {}, f"output is not JSON ({exc}): {proc.stdout[:200]!r}"
    findings: Findings = {Path(f).resolve(): [] for f in files}
    flat: list[dict[str, Any]] = []
    for item in items:
        if "findings" in item and "line" not in item:  # a probe target report
            if item.get("error") and len(files) == 1:
                return {}, f"{item.get('status', 'error')}: {str(item['error'])[:300]}"
            flat.extend(item["findings"])
        else:
            flat.append(item)
    for finding in flat:
        path = Path(finding.get("path") or files[0])
        path = (path if path.is_absolute() else ROOT / path).resolve()
        findings.setdefault(path, []).append(finding)
    return findings, None


def run_tool(command: str, files: Sequence[Path], timeout: float = CHECK_TIMEOUT,
             batch: bool = True, jobs: int | None = None) -> tuple[Findings, dict[Path, str]]:
    """Findings per file; a file the tool fails on gets an error instead.

    With batch, the files go in one run first; if that run fails (or without batch),
    each file runs alone, ``jobs`` at a time, so that one failure does not hide the
    results of the others.
    """
    if not files:
        return {}, {}
    if batch:
        findings, error = _run_tool(command, files, timeout)
        if error is None:
            return findings, {}
    first, error = _run_tool(command, files[:1], timeout)
    if error is not None and error.startswith("exit 2:"):
        # a usage error: the tool's interface, not the file
        return {}, {p.resolve(): error for p in files}
    jobs = jobs or max(1, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        rest = list(pool.map(lambda p: _run_tool(command, [p], timeout), files[1:]))
    runs = [(files[0], (first, error)), *zip(files[1:], rest, strict=True)]
    findings, errors = {}, {}
    for path, (one, err) in runs:
        if err is None:
            findings.update(one)
        else:
            errors[path.resolve()] = err
    return findings, errors


def _covers(finding: dict[str, Any], line: int) -> bool:
    return int(finding["line"]) <= line <= int(finding.get("end_line") or finding["line"])


def _describe(finding: dict[str, Any]) -> str:
    return f"{finding['code']}@{finding['line']} {finding['severity']}"


def _describe_in(case: Case, finding: dict[str, Any], path: Path) -> str:
    """A finding, with its file when it is not the entry script of the case."""
    if path == case.path:
        return _describe(finding)
    return f"{finding['code']}@{_relative(case, path)}:{finding['line']} {finding['severity']}"


def _relative(case: Case, path: Path) -> str:
    try:
        return path.relative_to(case.folder).as_posix()
    except ValueError:
        return str(path)


COUNTS = ("positives", "found", "missed", "clean_files", "false_positives")


def _totals(rows: Iterable[dict[str, int]]) -> dict[str, Any]:
    rows = list(rows)
    totals: dict[str, Any] = {key: sum(r[key] for r in rows) for key in COUNTS}
    positives = totals["positives"]
    totals["recall"] = round(totals["found"] / positives, 4) if positives else 0.0
    flagged = totals["found"] + totals["false_positives"]
    totals["precision"] = round(totals["found"] / flagged, 4) if flagged else 0.0
    return totals


def score(cases: Sequence[Case], findings: Findings, errors: dict[Path, str]) -> dict[str, Any]:
    """Found / missed / false positives, per pattern, per family, per layout and in total.

    A multi-file case's findings are those in any file of its folder: a positive is found
    when a finding in the file an ``inplace_line`` names covers that line; a fixed or
    negative case is a false positive when an error-severity finding lands in any of its
    files.
    """
    patterns: dict[str, dict[str, int]] = {}
    families: dict[str, dict[str, int]] = {}
    layouts: dict[str, dict[str, int]] = {}
    missed: list[dict[str, Any]] = []
    false_positives: list[dict[str, Any]] = []
    tool_errors: list[dict[str, str]] = []

    def bucket(table: dict[str, dict[str, int]], name: str) -> dict[str, int]:
        return table.setdefault(name, dict.fromkeys(COUNTS, 0))

    for case in cases:
        rows = (bucket(patterns, case.pattern),
                bucket(layouts, "multi-file" if case.multifile else "single-file"))
        if case.family:
            rows += (bucket(families, case.family),)
        if case.path in errors:
            tool_errors.append({"file": case.file, "error": errors[case.path]})
        found_here = [(path, f) for path in case.files for f in findings.get(path, [])]
        if case.kind == "positive":
            hit = any(path == case.site_path(site) and _covers(f, site[1])
                      for path, f in found_here for site in case.inplace_lines)
            for row in rows:
                row["positives"] += 1
                row["found" if hit else "missed"] += 1
            if not hit:
                missed.append({"file": case.file,
                               "inplace_line": _show(case.inplace_lines, case.path.name),
                               "findings": [_describe_in(case, f, p) for p, f in found_here],
                               "tool_error": errors.get(case.path)})
        else:
            bad = [(p, f) for p, f in found_here if f.get("severity") == "error"]
            for row in rows:
                row["clean_files"] += 1
                row["false_positives"] += bool(bad)
            if bad:
                false_positives.append({"file": case.file, "findings": [
                    f"{_describe_in(case, f, p)}: {f.get('message', '')}" for p, f in bad]})
    return {"patterns": dict(sorted(patterns.items())), "totals": _totals(patterns.values()),
            "families": {number: _totals([families[number]])
                         for number in FAMILIES if number in families},
            "layouts": {name: _totals([row]) for name, row in sorted(layouts.items())},
            "missed": missed, "false_positives": false_positives, "tool_errors": tool_errors}


def probe_status() -> str | None:
    """None when ``gradguard probe`` can be scored, else why it cannot be yet."""
    try:
        proc = subprocess.run([sys.executable, "-m", "gradguard", "probe", "--help"],
                              capture_output=True, text=True, timeout=60, cwd=ROOT,
                              env=gradguard_env())
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`python -m gradguard probe --help` did not run ({exc})"
    if proc.returncode != 0:
        return "`python -m gradguard probe --help` fails: the probe does not exist yet"
    if "--format" not in proc.stdout:
        return "`gradguard probe` has no `--format json` option yet"
    return None


def case_findings(command: str, cases: Sequence[Case],
                  batch: bool) -> tuple[Findings, dict[Path, str]]:
    """Findings per file of the cases: single-file cases in one run (with batch); each
    multi-file case in a run of its own, given its entry script, so that its imports
    resolve in its own folder only."""
    singles = [c.path for c in cases if not c.multifile]
    findings, errors = run_tool(command, singles, batch=batch)
    projects = [c.path for c in cases if c.multifile]
    more, more_errors = run_tool(command, projects, batch=False)
    for path, found in more.items():
        findings.setdefault(path, []).extend(found)
    errors.update(more_errors)
    return findings, errors


def score_tool(command: str, cases: Sequence[Case], batch: bool) -> dict[str, Any]:
    return score(cases, *case_findings(command, cases, batch))


def score_check(cases: Sequence[Case]) -> dict[str, Any]:
    return score_tool("check", cases, batch=True)


def score_probe(cases: Sequence[Case]) -> dict[str, Any] | None:
    """Probe scores, or None when ``gradguard probe`` cannot be scored yet."""
    if probe_status() is not None:
        return None
    return score_tool("probe", cases, batch=False)  # the probe runs user code: one at a time
