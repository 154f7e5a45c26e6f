"""The files of one project: import names resolved to files, each file parsed once.

``from .models import Net`` or ``from utils.loss import ComputeLoss`` in one file reach
the class or function in another file of the same project, so that a hazard whose
saving op and in-place op sit in different files is seen. Names are resolved as Python
would for a script or package in the project: relative imports against the importing
file's package, absolute ones against the importing file's folder, the folders of its
enclosing packages, and the project's root folders. Anything else (torch, the standard
library, installed packages) is not the project's and is left to the facts tables.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from gradguard.analysis.program import ClassInfo, Definition, FunctionInfo, Program, Reads

# How deep re-exports are followed (``__init__.py`` importing from a submodule...).
MAX_HOPS = 8


def read_file(path: str) -> str | None:
    try:
        return Path(path).read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None


class Project:
    """Programs of a project's files, parsed on first use and kept."""

    def __init__(self, roots: list[str] | None = None,
                 read: Callable[[str], str | None] = read_file,
                 parse: Callable[[str, str], Program | None] | None = None) -> None:
        self.roots = [os.path.abspath(root) for root in roots or []]
        self.read = read
        self._parse = parse
        self.programs: dict[str, Program | None] = {}
        # Each file's text, as read (or as given for the files parsed elsewhere).
        self.texts: dict[str, str] = {}
        self._files: dict[tuple[str, str], str | None] = {}
        self._reaching: dict[tuple[str, bool], set[str]] = {}
        # (importer, name) -> what it resolved to, what that read, and the programs it
        # read them in (an answer holds while those are the same programs).
        self._resolved: dict[tuple[str, str],
                             tuple[Definition | None, Reads,
                                   tuple[tuple[str, Program | None], ...]]] = {}

    def add(self, program: Program, text: str) -> None:
        """A file parsed elsewhere (the one being analysed, an open document)."""
        program.project = self
        self.programs[program.path] = program
        self.texts[program.path] = text

    def program(self, path: str) -> Program | None:
        if path not in self.programs:
            text = self.text_of(path)
            program = self._parse(path, text) if self._parse is not None else None
            if program is not None:
                program.project = self
            self.programs[path] = program
        return self.programs[path]

    def reaching(self, path: str, strong: bool = False) -> set[str]:
        """The definitions of a file that can meet a write, a step or a backward (with
        ``strong``: that surely write a tensor, step or run a backward)."""
        key = (path, strong)
        if key not in self._reaching:
            from gradguard.analysis.analyze import reaching
            from gradguard.analysis.signs import CANDIDATE, STRONG

            self._reaching[key] = reaching(self.text_of(path),
                                           candidate=STRONG if strong else CANDIDATE)
        return self._reaching[key]

    def forget(self, path: str, created_or_deleted: bool = False) -> None:
        """A file changed: read and parse it again when next asked (a file that appeared
        or went away may change where any import leads)."""
        self.programs.pop(path, None)
        self.texts.pop(path, None)
        for strong in (False, True):
            self._reaching.pop((path, strong), None)
        if created_or_deleted:
            self._files.clear()
            self._resolved.clear()

    def text_of(self, path: str) -> str:
        """A file's text as the project has it (read once)."""
        if path not in self.texts:
            self.texts[path] = self.read(path) or ""
        return self.texts[path]

    # -- names to files -------------------------------------------------------------------

    def module_file(self, importer: str, module: str) -> str | None:
        """The file of module ``module`` (dotted, perhaps relative) imported from ``importer``."""
        key = (os.path.dirname(importer), module)
        if key not in self._files:
            self._files[key] = self._find(importer, module)
        return self._files[key]

    def _find(self, importer: str, module: str) -> str | None:
        level = len(module) - len(module.lstrip("."))
        parts = [p for p in module[level:].split(".") if p]
        here = os.path.dirname(os.path.abspath(importer))
        if level:
            base = here
            for _ in range(level - 1):
                base = os.path.dirname(base)
            return self._module_in(base, parts)
        for folder in self._search_folders(here):
            found = self._module_in(folder, parts)
            if found is not None:
                return found
        return None

    def _search_folders(self, here: str) -> list[str]:
        """The importing file's folder, then each folder above it up to a project root
        (a script's folder is on ``sys.path``, and packages need no ``__init__.py``),
        then the project's roots."""
        folders = [here]
        current = here
        inside = any(_within(here, root) for root in self.roots)
        for _ in range(MAX_HOPS):
            parent = os.path.dirname(current)
            if parent == current or (inside and current in self.roots and current != here) or (
                    not inside and not os.path.isfile(os.path.join(current, "__init__.py"))):
                break
            current = parent
            folders.append(current)
        return folders + [root for root in self.roots if root not in folders]

    def _module_in(self, folder: str, parts: list[str]) -> str | None:
        names = [os.path.join(folder, "__init__.py")] if not parts else [
            os.path.join(folder, *parts) + ".py", os.path.join(folder, *parts, "__init__.py")]
        return next((name for name in names if self._exists(name)), None)

    def _exists(self, path: str) -> bool:
        """A file of the project: on disk, or known only to the editor (not yet saved)."""
        return path in self.programs or os.path.isfile(path) or self.read(path) is not None

    def resolve(self, importer: Program, qualified: str,
                reads: Reads | None = None) -> Definition | None:
        """The project's class or function a qualified name (``models.Net``) stands for."""
        key = (importer.path, qualified)
        known = self._resolved.get(key)
        if known is None or any(self.programs.get(p) is not program
                                for p, program in known[2]):
            looked = Reads()
            found = self._resolve(importer, qualified, looked)
            programs = {key[0] for key in looked.found} - {importer.path}
            known = self._resolved[key] = (found, looked, tuple((p, self.programs.get(p))
                                                                for p in programs))
        if reads is not None:
            reads.update(known[1])
        return known[0]

    def _resolve(self, importer: Program, qualified: str, reads: Reads,
                 hops: int = 0) -> Definition | None:
        module, _, name = qualified.rpartition(".")
        if hops > MAX_HOPS or not module.strip("."):
            return None
        path = self.module_file(importer.path, module)
        reads.found[(importer.path, "module", module)] = path
        if path is None:
            return None
        program = self.program(path)
        if program is None:
            return None
        found: Definition | None = program.classes.get(name) or program.functions.get(name)
        kind = "class" if name in program.classes else "function"
        reads.found[(path, kind, name)] = _identity(found)
        if found is None and name in program.aliases:
            return self._resolve(program, program.aliases[name], reads, hops + 1)
        return found


def _identity(found: Definition | None) -> object:
    if isinstance(found, ClassInfo):
        return found.bases
    if isinstance(found, FunctionInfo):
        return found.node
    return None


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


