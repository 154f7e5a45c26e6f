"""The programs the transformations are applied to, and what each is expected to do.

Every case of the accuracy corpus (tests/corpus: positives, negatives, fixed files), every
rule case (tests/rules) and every family case (tests/families) becomes a ``Subject``: its
files parsed once with libcst (transformations share the parse), whether it is a positive
(torch must raise) or clean (torch must run it), and how its hazard lines are marked.

The lines a positive is found at are found again in the transformed text by their marker
comments (``# [inplace]`` in the corpus, ``# expect: GG00N`` in the case files): libcst
keeps a statement's trailing comment with it wherever a transformation moves it, so a
transformed file needs no line bookkeeping.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path

import libcst as cst

from tools.corpus import SILENT, load_manifest

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent

CORPUS_MARK = re.compile(r"#.*\[inplace\]")
CASE_MARK = re.compile(r"#\s*expect:\s*GG\d{3}")

POSITIVE, CLEAN = "positive", "clean"


@dataclass(frozen=True)
class Program:
    """A program's Python files by path relative to its folder; ``entry`` is the one run
    and given to ``gradguard check`` (it follows the imports to the others)."""

    entry: str
    modules: dict[str, cst.Module]

    @cached_property
    def texts(self) -> dict[str, str]:
        return {name: module.code for name, module in self.modules.items()}


def write(texts: dict[str, str], entry: str, folder: Path) -> Path:
    """Write a program's files below ``folder``; its entry script's path."""
    for name, text in texts.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder / entry


@dataclass(frozen=True)
class Subject:
    name: str  # unique: "corpus/positive/x.py", "rule/<case name>", "family/<case name>"
    origin: str  # "corpus", "rule" or "family"
    kind: str  # POSITIVE or CLEAN
    program: Program
    mark: re.Pattern[str] = field(compare=False)
    # A write through .data: torch raises nothing, so it is judged with .data read as
    # .detach() (the same storage under autograd's version counter), which must raise.
    silent: bool = False
    # What the analysis gets wrong on the original already (a family case marked missed).
    known_wrong: bool = False

    def marked_lines(self, texts: dict[str, str]) -> set[tuple[str, int]]:
        """(file, line) of every marked hazard line of a program's texts (this subject's
        original or a transformation of it)."""
        return {(name, number) for name, text in texts.items()
                for number, line in enumerate(text.splitlines(), 1) if self.mark.search(line)}


def _parse(text: str) -> cst.Module:
    return cst.parse_module(text)


def _corpus_subjects() -> Iterator[Subject]:
    for case in load_manifest():
        modules = {path.relative_to(case.folder).as_posix(): _parse(path.read_text("utf-8"))
                   for path in case.files}
        program = Program(case.path.relative_to(case.folder).as_posix(), modules)
        kind = POSITIVE if case.kind == "positive" else CLEAN
        yield Subject(f"corpus/{case.file}", "corpus", kind, program, CORPUS_MARK,
                      silent=case.error == SILENT)


def _case_subjects() -> Iterator[Subject]:
    from tests import families, rules

    for origin, module in (("rule", rules), ("family", families)):
        groups = [(POSITIVE, module.INVALID), (CLEAN, module.VALID),
                  (CLEAN, getattr(module, "QUIET", []))]
        for kind, cases in groups:
            for case in cases:
                silent = case.silent or {code for _, code in case.expected} == {"GG005"}
                program = Program("case.py", {"case.py": _parse(case.source)})
                yield Subject(f"{origin}/{case.name}", origin, kind, program, CASE_MARK,
                              silent=silent, known_wrong=case.missed)


@cache
def subjects() -> tuple[Subject, ...]:
    """Every corpus case, rule case and family case, parsed (once a process)."""
    return (*_corpus_subjects(), *_case_subjects())
