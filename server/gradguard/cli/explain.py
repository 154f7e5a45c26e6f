"""``gradguard explain PATH:LINE``: the chain from the save to the write of each finding
at a line, as the editor's hover on it shows it.

The file is analysed as ``check`` analyses it, its imports followed. A write in an
imported file that only an importer reveals (a loss module writing into what the model
saved) is looked for in the importers too: the other Python files under the folder the
command runs in (or the file's own folder, when it is not below it), those that name
the file's module first.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

from gradguard.analysis.findings import Finding
from gradguard.analysis.syntax import SourceError
from gradguard.checking.discovery import discover, load_discovery
from gradguard.checking.files import read
from gradguard.cli.check import project_roots
from gradguard.config import Selection, load
from gradguard.explain.chain import chain_of, render
from gradguard.explain.findings import findings_of_file, shown_at
from gradguard.text import source_lines

EXIT_FOUND, EXIT_NOTHING, EXIT_USAGE = 0, 1, 2


def parse_place(text: str) -> tuple[str, int] | None:
    """``train.py:42`` -> ("train.py", 42); None when it is not PATH:LINE."""
    path, colon, line = text.rpartition(":")
    if not colon or not path or not line.isdigit() or int(line) < 1:
        return None
    return path, int(line)


def run_explain(place: str, uncertain: bool = False) -> int:
    parsed = parse_place(place)
    if parsed is None:
        return _usage(f"{place}: expected PATH:LINE (a file and a 1-based line number, "
                      "e.g. train.py:42)")
    path, line = parsed
    if not os.path.isfile(path):
        return _usage(f"{path}: no such file")
    if not path.endswith(".py"):
        return _usage(f"{path}: explain reads Python files (.py)")
    config = load(os.getcwd())
    for problem in config.problems:
        print(f"gradguard: {problem}", file=sys.stderr)
    if config.problems:
        return EXIT_USAGE
    source = read(path)
    if source.text is None:
        return _usage(f"{path}: {source.error}")
    lines = source_lines(source.text)
    if line > len(lines):
        return _usage(f"{path}:{line}: the file has {len(lines)} lines")
    selection = config.selection(None, frozenset(), uncertain)
    target = os.path.abspath(path)
    try:
        found = _findings_at(target, source.text, line, lines, selection)
    except SourceError as error:
        where = f"{path}:{error.line}:{error.column}" if error.line else path
        return _usage(f"{where}: cannot be analysed: {error}")
    except RecursionError:
        return _usage(f"{path}: cannot be analysed: nested deeper than Python accepts")
    chains = [chain for finding in found if (chain := chain_of(finding)) is not None]
    if not chains:
        codes = ", ".join(sorted({finding.code for finding in found}))
        what = f"{codes} there has no saving op to start a chain from" if found else \
            "no finding there"
        print(f"gradguard: {path}:{line}: {what} (GG001, GG004 and GG005 findings have a "
              "chain; `gradguard check` lists the findings)", file=sys.stderr)
        return EXIT_NOTHING
    print("\n\n".join(render(chain) for chain in chains))
    return EXIT_FOUND


def _usage(message: str) -> int:
    print(f"gradguard: {message}", file=sys.stderr)
    return EXIT_USAGE


def _findings_at(target: str, text: str, line: int, lines: list[str],
                 selection: Selection) -> list[Finding]:
    """The chained findings at the line: from the file itself, else from the first
    importer that reveals one."""
    from gradguard.analysis.analyze import project_for
    from gradguard.analysis.interpreter import SummaryCache

    search = _search_root(target)
    project = project_for(list(project_roots([target, search])))
    cache = SummaryCache()
    own = findings_of_file(target, text, project, cache)
    found = _chained(own, target, line, lines, selection)
    if found:
        return found
    for other in _importers(target, search):
        source = read(other).text
        if source is None:
            continue
        try:
            findings = findings_of_file(other, source, project, cache)
        except (SourceError, RecursionError):
            continue  # an importer that cannot be analysed reveals nothing
        found = _chained(findings, target, line, lines, selection)
        if found:
            return found
    return shown_at(own, target, line, lines, selection)  # none with a chain


def _chained(findings: list[Finding], target: str, line: int, lines: list[str],
             selection: Selection) -> list[Finding]:
    """The findings shown at the line, when one of them has a chain (else none: an
    importer may reveal one)."""
    shown = shown_at(findings, target, line, lines, selection)
    return shown if any(chain_of(f) is not None for f in shown) else []


def _search_root(target: str) -> str:
    here = os.getcwd()
    return here if Path(target).is_relative_to(here) else os.path.dirname(target)


def _importers(target: str, root: str) -> Iterator[str]:
    """The other Python files under ``root``, those naming the file's module first."""
    module = Path(target).stem
    files = [os.path.abspath(p) for p in discover([root], load_discovery(Path(root)))
             if p.endswith(".py")]
    files = [f for f in files if f != target]
    naming = []
    for path in files:
        text = read(path).text or ""
        if module in text:
            naming.append(path)
    yield from naming
    yield from (f for f in files if f not in naming)

