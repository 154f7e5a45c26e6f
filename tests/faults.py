"""Fault injection for the tests of what survives a crash: run as

    python tests/faults.py segfault-on NAME -- check ...
    python tests/faults.py raise-in-check-on NAME -- check ...
    python tests/faults.py raise-on MARKER -- serve

it starts the real ``gradguard`` command after making its analysis crash for real on one
input: a file whose name is NAME dies by a genuine invalid memory access (SIGSEGV) in
whichever process analyses it (with raise-in-check-on: its analysis raises); a document
whose text holds MARKER raises in the server's analysis. Nothing else is changed; no
input is known that crashes the analysis itself (those found were fixed), so the tests
that the rest survives need one made on purpose.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any


def segfault_on(name: str) -> None:
    from gradguard.analysis.analyze import ProjectRun

    analyze = ProjectRun.file

    def crashing(run: ProjectRun, path: str, *args: Any, **kwargs: Any) -> Any:
        if path.endswith(name):
            ctypes.string_at(0)  # reads address 0: the process dies by SIGSEGV
        return analyze(run, path, *args, **kwargs)

    ProjectRun.file = crashing  # type: ignore[method-assign]


def raise_in_check_on(name: str) -> None:
    from gradguard.analysis.analyze import ProjectRun

    analyze = ProjectRun.file

    def failing(run: ProjectRun, path: str, *args: Any, **kwargs: Any) -> Any:
        if path.endswith(name):
            raise RuntimeError("injected fault")
        return analyze(run, path, *args, **kwargs)

    ProjectRun.file = failing  # type: ignore[method-assign]


def raise_on(marker: str) -> None:
    from gradguard.analysis.incremental import IncrementalDocument

    update = IncrementalDocument.update

    def failing(self: IncrementalDocument, text: str, *args: Any, **kwargs: Any) -> Any:
        if marker in text:
            raise RuntimeError("injected fault")
        return update(self, text, *args, **kwargs)

    IncrementalDocument.update = failing  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    fault, argument, separator, *command = argv
    assert separator == "--", "usage: faults.py FAULT ARGUMENT -- COMMAND..."
    {"segfault-on": segfault_on, "raise-in-check-on": raise_in_check_on,
     "raise-on": raise_on}[fault](argument)
    from gradguard.cli.main import main as gradguard

    return gradguard(command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
