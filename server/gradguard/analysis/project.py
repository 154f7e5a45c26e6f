"""The files of one project: import names resolved to files, each file parsed once.

``from .models import Net`` or ``from utils.loss import ComputeLoss`` in one file reach
the class or function in another file of the same project, so that a hazard whose
saving op and in-place op sit in different files is seen. Names are resolved as Python
would for a script or package in the project: relative imports against the importing
file's package, absolute ones against the importing file's folder, the folders of its
enclosing packages, and the project's root folders. An absolute import that is none of
these is looked for among the installed packages the analysis follows (``libraries.py``:
read-only, from the interpreter's search path; a library's functions are parsed and
summarised only when a call reaches them, through the same lookups). Anything else
(torch, the standard library, numpy) is not followed and is left to the facts tables.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from gradguard.analysis.libraries import Libraries, Package
from gradguard.analysis.program import ClassInfo, Definition, FunctionInfo, Program, Reads

# Packages whose names are left to the facts tables even when their source is in reach
# (a project checked inside site-packages sits beside torch's own files).
FACTS_PACKAGES = frozenset({"torch"})
# How deep re-exports are followed (``__init__.py`` importing from a submodule...).
MAX_HOPS = 8
# ``from .models import *``, also inside ``if TYPE_CHECKING:`` (a library's lazy
# ``__init__`` re-exports its classes that way: transformers' do).
_STAR_IMPORT = re.compile(r"^[ \t]*from[ \t]+([.\w]+)[ \t]+import[ \t]+\*", re.MULTILINE)
# How many star-imported modules one name is looked for in (a miss in a large
# library's ``__init__`` reads each module it re-exports: bounded).
MAX_STAR_MODULES = 400


def read_file(path: str) -> str | None:
    try:
        return Path(path).read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None


class Project:
    """Programs of a project's files, parsed on first use and kept.

    Every question about files (a file's text, its program, the definitions the
    pre-filter finds in it, which file an import names) goes through a project and is
    recorded in the ``Reads`` it is given, misses included: a result holds while each
    file it depended on has the same text, or is still missing (``Reads.files``).
    """

    def __init__(self, roots: list[str] | None = None,
                 read: Callable[[str], str | None] = read_file,
                 parse: Callable[[str, str], Program | None] | None = None,
                 candidates: Callable[[str, bool], set[str]] | None = None,
                 libraries: Libraries | None = None) -> None:
        self.roots = [os.path.abspath(root) for root in roots or []]
        # Where installed packages are found (None: only the project's files are).
        self.libraries = libraries
        self._in_library: dict[str, bool] = {}
        self.read = read
        self._parse = parse
        self._find_candidates = candidates
        self.programs: dict[str, Program | None] = {}
        # Each file's text, as read (or as given for the files parsed elsewhere); a file
        # that could not be read has "" here and is in ``missing``.
        self.texts: dict[str, str] = {}
        self.missing: set[str] = set()
        # (folder, module) -> the file, and every name it was looked for under first.
        self._files: dict[tuple[str, str], tuple[str | None, tuple[str, ...]]] = {}
        # The names an import was looked for under that were not there: known missing for
        # as long as ``_files`` holds (a miss is recorded in the reads of every analysis
        # that imports the module, and ``text_seen`` is asked about each, for each file).
        self._absent: set[str] = set()
        self._candidates: dict[tuple[str, bool], set[str]] = {}
        # (importer, name) -> what it resolved to, what that read, and the programs it
        # read them in (an answer holds while those are the same programs).
        self._resolved: dict[tuple[str, str],
                             tuple[Definition | None, Reads,
                                   tuple[tuple[str, Program | None], ...]]] = {}
        # The files parsed on demand, in the order they were last used (those given
        # with ``add`` are the caller's to keep or drop).
        self._parsed: dict[str, None] = {}
        self._resolved_by_path: dict[str, set[tuple[str, str]]] = {}

    def add(self, program: Program, text: str) -> None:
        """A file parsed elsewhere (the one being analysed, an open document)."""
        program.project = self
        if program.path in self._parsed:
            self._unparse(program.path)
        self.programs[program.path] = program
        self.texts[program.path] = text
        self.missing.discard(program.path)
        self._absent.discard(program.path)

    def unpin(self, path: str) -> None:
        """A file given with ``add`` becomes the project's to keep or drop, as if it had
        been parsed on demand."""
        if path in self.programs and path not in self._parsed:
            self._parsed[path] = None

    def program(self, path: str, reads: Reads | None = None) -> Program | None:
        if reads is not None:
            reads.files.add(path)
        if path not in self.programs:
            text = self.text_of(path)
            program = self._parse(path, text) if self._parse is not None else None
            if program is not None:
                program.project = self
            self.programs[path] = program
            self._parsed[path] = None
        elif path in self._parsed:
            self._used(path)
        return self.programs[path]

    def _used(self, path: str) -> None:
        del self._parsed[path]
        self._parsed[path] = None

    def trim(self, fraction: float) -> list[str]:
        """Drop that fraction of the files parsed on demand, those used least recently
        first (read and parsed again when asked for); returns their paths. Called between
        analyses: none of their programs is in use then."""
        dropped = list(self._parsed)[:int(len(self._parsed) * fraction)]
        for path in dropped:
            self._unparse(path)
        # The texts only the pre-filter read (a dict keeps the order they were read in).
        read_only = [path for path in self.texts if path not in self.programs]
        for path in read_only[:int(len(read_only) * fraction)]:
            del self.texts[path]
            self.missing.discard(path)
            for strong in (False, True):
                self._candidates.pop((path, strong), None)
        return dropped

    def discard(self, path: str) -> None:
        """Forget a file given with ``add`` (it was analysed and nothing imports it)."""
        self._parsed[path] = None
        self._unparse(path)

    def _unparse(self, path: str) -> None:
        del self._parsed[path]
        self.programs.pop(path, None)
        self.texts.pop(path, None)
        for strong in (False, True):
            self._candidates.pop((path, strong), None)
        for key in self._resolved_by_path.pop(path, ()):
            self._resolved.pop(key, None)

    def candidates(self, path: str, strong: bool = False,
                 reads: Reads | None = None) -> set[str]:
        """The definitions of a file that can meet a write, a step or a backward (with
        ``strong``: that surely write a tensor, step or run a backward)."""
        key = (path, strong)
        if key not in self._candidates:
            text = self.text_of(path)
            found = self._find_candidates(text, strong) if self._find_candidates else set()
            self._candidates[key] = found
        if reads is not None:
            reads.files.add(path)
        return self._candidates[key]

    def forget(self, path: str, created_or_deleted: bool = False) -> None:
        """A file changed: read and parse it again when next asked (a file that appeared
        or went away may change where any import leads)."""
        if path in self._parsed:
            self._unparse(path)
        self.programs.pop(path, None)
        self.texts.pop(path, None)
        self.missing.discard(path)
        self._absent.discard(path)
        for strong in (False, True):
            self._candidates.pop((path, strong), None)
        if created_or_deleted:
            self._files.clear()
            self._absent.clear()
            self._resolved.clear()
            self._resolved_by_path.clear()

    def refresh_libraries(self) -> list[str]:
        """Forget what was read of the installed packages that changed since they were
        read (``pip install -U`` while an editor is open): the files of their new
        version are read when next asked. Returns the paths forgotten."""
        changed = self.libraries.refresh() if self.libraries is not None else set()
        if not changed or self.libraries is None:
            return []
        known = set(self.texts) | set(self.programs) | self.missing
        gone = sorted(path for path in known if self.libraries.top_of(path) in changed)
        for path in gone:
            self.forget(path, created_or_deleted=True)
        self._in_library.clear()
        return gone

    def text_of(self, path: str, reads: Reads | None = None) -> str:
        """A file's text as the project has it (read once; "" if it cannot be read)."""
        if reads is not None:
            reads.files.add(path)
        if path not in self.texts:
            text = self.read(path)
            if text is None:
                self.missing.add(path)
            else:
                self.missing.discard(path)  # read again after a trim, and there now
            self.texts[path] = text or ""
        return self.texts[path]

    def text_seen(self, path: str) -> str | None:
        """The text an analysis saw of a file it depended on (None: there was none)."""
        if path in self.missing:
            return None
        text = self.texts.get(path)
        if text is not None:
            return text
        return None if path in self._absent else self.read(path)

    # -- names to files -------------------------------------------------------------------

    def module_file(self, importer: str, module: str,
                    reads: Reads | None = None) -> str | None:
        """The file of module ``module`` (dotted, perhaps relative) imported from ``importer``."""
        if module.partition(".")[0] in FACTS_PACKAGES:
            return None  # what torch's functions do is in the facts, whatever is on disk
        key = (os.path.dirname(importer), module)
        if key not in self._files:
            probed: list[str] = []
            self._files[key] = (self._find(importer, module, probed), tuple(probed))
        found, probed_names = self._files[key]
        if reads is not None:
            reads.files.update(probed_names)
        return found

    def _find(self, importer: str, module: str, probed: list[str]) -> str | None:
        level = len(module) - len(module.lstrip("."))
        parts = [p for p in module[level:].split(".") if p]
        here = os.path.dirname(os.path.abspath(importer))
        if level:
            base = here
            for _ in range(level - 1):
                base = os.path.dirname(base)
            return self._module_in(base, parts, probed)
        if not parts:
            return None
        if self.library_package(importer) is not None:
            # A library's absolute imports name installed packages, never the project.
            return self._library_module(parts, probed)
        for folder in self._search_folders(here, probed):
            found = self._module_in(folder, parts, probed)
            if found is not None:
                return found
        if parts[0] == _top_package(here):
            return None  # the project's own package (transformers checked as a tree)
        return self._library_module(parts, probed)

    def _library_module(self, parts: list[str], probed: list[str]) -> str | None:
        """An installed package's module, if the analysis follows that package."""
        if self.libraries is None or self.libraries.followed(parts[0]) is None:
            return None
        for folder in self.libraries.folders:
            found = self._module_in(folder, parts, probed)
            if found is not None:
                return found
        return None

    def in_library(self, path: str) -> bool:
        """Whether a file is an installed library's (asked at every call: kept)."""
        known = self._in_library.get(path)
        if known is None:
            known = self._in_library[path] = self.library_package(path) is not None
        return known

    def library_package(self, path: str) -> Package | None:
        """The installed distribution a file belongs to (None: a file of the project,
        or of no package the analysis follows). A file inside a project root is the
        project's, wherever it is installed, unless it is in a site folder inside that
        root (a virtual environment kept in the project's folder, ``.venv``)."""
        if self.libraries is None:
            return None
        if any(_within(path, root) for root in self.roots) and not any(
                _within(path, folder) and self._inside_a_root(folder)
                for folder in self.libraries.folders):
            return None
        owner = self.libraries.owner(path)
        return None if owner is None else owner[1]

    def _inside_a_root(self, folder: str) -> bool:
        """Whether a site folder (site-packages, not a source folder on the path) lies
        inside a project root."""
        return os.path.basename(folder) in ("site-packages", "dist-packages") and any(
            folder != root and _within(folder, root) for root in self.roots)

    def _search_folders(self, here: str, probed: list[str]) -> list[str]:
        """The importing file's folder, then each folder above it up to a project root
        (a script's folder is on ``sys.path``, and packages need no ``__init__.py``),
        then the project's roots."""
        folders = [here]
        current = here
        inside = any(_within(here, root) for root in self.roots)
        for _ in range(MAX_HOPS):
            parent = os.path.dirname(current)
            if not inside:
                probed.append(os.path.join(current, "__init__.py"))
            if parent == current or (inside and current in self.roots and current != here) or (
                    not inside and not os.path.isfile(os.path.join(current, "__init__.py"))):
                break
            current = parent
            folders.append(current)
        return folders + [root for root in self.roots if root not in folders]

    def _module_in(self, folder: str, parts: list[str], probed: list[str]) -> str | None:
        names = [os.path.join(folder, "__init__.py")] if not parts else [
            os.path.join(folder, *parts) + ".py", os.path.join(folder, *parts, "__init__.py")]
        for name in names:
            probed.append(name)
            if self._exists(name):
                return name
        return None

    def _exists(self, path: str) -> bool:
        """A file of the project: on disk, or known only to the editor (not yet saved).
        Not a file an analysis asked for and found missing: asking again whether a
        missing import appeared parses it as empty, and that program is no module."""
        # Reading from disk what is not on disk fails: only another reader (an editor's
        # texts over the disk's) is asked.
        found = (path in self.programs and path not in self.missing) or \
            os.path.isfile(path) or (self.read is not read_file and self.read(path) is not None)
        if not found:
            self._absent.add(path)
        return found

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
            for path in programs | {importer.path}:
                self._resolved_by_path.setdefault(path, set()).add(key)
        else:
            for path, _ in known[2]:
                if path in self._parsed:
                    self._used(path)
        if reads is not None:
            reads.update_once(known[1])
        return known[0]

    def _resolve(self, importer: Program, qualified: str, reads: Reads,
                 hops: int = 0) -> Definition | None:
        module, _, name = qualified.rpartition(".")
        if hops > MAX_HOPS or not module.strip("."):
            return None
        path = self.module_file(importer.path, module, reads)
        reads.found[(importer.path, "module", module)] = path
        if path is None:
            return None
        program = self.program(path, reads)
        if program is None:
            return None
        found: Definition | None = program.classes.get(name) or program.functions.get(name)
        kind = "class" if name in program.classes else "function"
        reads.found[(path, kind, name)] = _identity(found)
        if found is None and name in program.aliases:
            return self._resolve(program, program.aliases[name], reads, hops + 1)
        if found is None and self.library_package(path) is not None:
            return self._star_exported(program, name, reads, hops)
        return found

    def _star_exported(self, program: Program, name: str, reads: Reads,
                       hops: int) -> Definition | None:
        """A name a library module re-exports with ``from .sub import *``: looked for in
        the modules whose text names it, those whose name is part of it first
        (``RemBertForQuestionAnswering`` in ``.rembert`` before ``.bert``)."""
        modules = _STAR_IMPORT.findall(self.text_of(program.path, reads))
        budget = [MAX_STAR_MODULES]
        return self._star_search(program, modules, name, reads, hops, budget)

    def _star_search(self, program: Program, modules: list[str], name: str, reads: Reads,
                     hops: int, budget: list[int]) -> Definition | None:
        lowered = name.lower()
        modules = sorted(modules, key=lambda module: -max(
            (len(part) for part in module.replace("_", ".").split(".")
             if part and part in lowered), default=0))
        for module in modules:
            if budget[0] <= 0 or hops > MAX_HOPS:
                return None
            budget[0] -= 1
            path = self.module_file(program.path, module, reads)
            if path is None:
                continue
            text = self.text_of(path, reads)
            if re.search(rf"\b{re.escape(name)}\b", text):
                found = self._resolve(program, f"{module}.{name}", reads, hops + 1)
                if found is not None:
                    return found
            inner = _STAR_IMPORT.findall(text)
            if inner:
                sub = self.program(path, reads)
                if sub is not None:
                    found = self._star_search(sub, inner, name, reads, hops + 1, budget)
                    if found is not None:
                        return found
        return None


def _identity(found: Definition | None) -> object:
    if isinstance(found, ClassInfo):
        return found.bases
    if isinstance(found, FunctionInfo):
        return found.node
    return None


def _top_package(folder: str) -> str | None:
    """The outermost package a folder is inside (None: it is no package's)."""
    top = None
    for _ in range(MAX_HOPS * 4):
        if not os.path.isfile(os.path.join(folder, "__init__.py")):
            break
        top = os.path.basename(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return top


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


