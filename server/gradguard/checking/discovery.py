"""Which files ``gradguard check`` reads: the project's own code, found as ruff finds it.

Walking a directory skips:

- what ``.gitignore`` and ``.ignore`` files say (each applies below its own folder, a
  deeper file overriding a shallower one, ``!`` patterns included: pathspec's gitignore
  semantics, not hand-written globs);
- any directory holding a ``pyvenv.cfg`` (a virtualenv, whatever its name);
- ``exclude`` (default: ruff's list, ``.venv``, ``build``, ``node_modules``...) and
  ``extend-exclude`` of ``[tool.gradguard]``, gitignore-style patterns relative to the
  ``pyproject.toml`` that holds them;

and keeps the files whose name matches ``include`` (default ``*.py`` and ``*.ipynb``).
A file named on the command line is always checked, as the user asked for it, unless
``--force-exclude`` is given (as a pre-commit hook does, which names every staged file).
The language server asks ``passed_over`` of each document, so the editor and ``check``
leave out the same files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec

from gradguard.config import ProjectConfig, load
from gradguard.settings_schema import default

# ruff's default exclude, which users of both tools already know.
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
    ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache",
    ".svn", ".tox", ".venv", ".vscode", "__pypackages__", "_build", "buck-out", "build",
    "dist", "node_modules", "site-packages", "venv",
)
DEFAULT_INCLUDE: tuple[str, ...] = default("include")
IGNORE_FILES = (".gitignore", ".ignore")


@dataclass(frozen=True)
class Patterns:
    """Gitignore-style patterns and the folder they are relative to."""

    root: Path
    spec: GitIgnoreSpec

    @classmethod
    def of(cls, root: Path, lines: Iterable[str]) -> Patterns:
        return cls(root.absolute(), GitIgnoreSpec.from_lines(lines))

    def matches(self, path: Path, is_dir: bool) -> bool:
        return self.spec.match_file(_relative(path, self.root, is_dir))

    def cover(self, path: Path) -> bool:
        """Whether they match the file or a folder above it, below their root (a walk
        of the root would not reach it). Nothing outside their root."""
        path = path.absolute()
        if self.root not in path.parents:
            return False
        return self.matches(path, False) or any(
            self.matches(folder, True) for folder in path.parents
            if self.root in folder.parents)


@dataclass(frozen=True)
class Discovery:
    """The discovery settings of one run."""

    exclude: Patterns
    include: GitIgnoreSpec
    force_exclude: bool = False

    @property
    def root(self) -> Path:
        """The folder exclude patterns are relative to."""
        return self.exclude.root

    def excluded(self, path: Path, is_dir: bool) -> bool:
        return self.exclude.matches(path, is_dir)


def _relative(path: Path, root: Path, is_dir: bool) -> str:
    absolute = path.absolute()
    try:
        text = absolute.relative_to(root).as_posix()
    except ValueError:  # outside the project: bare-name patterns still apply
        text = absolute.as_posix().lstrip("/")
    return text + "/" if is_dir else text


def load_discovery(start: Path, force_exclude: bool = False,
                   config: ProjectConfig | None = None) -> Discovery:
    """The discovery settings of the ``[tool.gradguard]`` that holds ``start``."""
    config = config or load(str(start))
    root = Path(config.root) if config.root is not None else start.absolute()
    exclude = list(DEFAULT_EXCLUDE if config.exclude is None else config.exclude)
    exclude += config.extend_exclude
    include = list(config.include or DEFAULT_INCLUDE)
    return Discovery(Patterns.of(root, exclude), GitIgnoreSpec.from_lines(include),
                     force_exclude)


@dataclass(frozen=True)
class _IgnoreFile:
    folder: Path
    spec: GitIgnoreSpec

    def verdict(self, path: Path, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a ``!`` pattern, None: not mentioned."""
        relative = path.relative_to(self.folder).as_posix() + ("/" if is_dir else "")
        return self.spec.check_file(relative).include


def _ignore_files(folder: Path) -> list[_IgnoreFile]:
    found = []
    for name in IGNORE_FILES:
        try:
            lines = (folder / name).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        found.append(_IgnoreFile(folder, GitIgnoreSpec.from_lines(lines)))
    return found


def _ignored(path: Path, is_dir: bool, stack: Iterable[_IgnoreFile]) -> bool:
    # The deepest ignore file that mentions the path decides (.ignore after .gitignore).
    for ignore in reversed(list(stack)):
        verdict = ignore.verdict(path, is_dir)
        if verdict is not None:
            return verdict
    return False


def _walk(top: Path, discovery: Discovery) -> Iterator[str]:
    # Ignore files of the folders above `top`, up to the repository (or filesystem) root.
    # Outside a git repository only the folders walked count, as with git itself.
    above: list[_IgnoreFile] = []
    for folder in top.absolute().parents:
        above[:0] = _ignore_files(folder)
        if (folder / ".git").exists():
            break
    else:
        above = []
    stacks = {top.absolute(): above + _ignore_files(top.absolute())}
    for root, dirs, files in os.walk(top):
        here = Path(root).absolute()
        stack = stacks.pop(here)
        kept = []
        for name in sorted(dirs):
            child = here / name
            if (child / "pyvenv.cfg").exists() or discovery.excluded(child, True) \
                    or _ignored(child, True, stack):
                continue
            kept.append(name)
            stacks[child] = stack + _ignore_files(child)
        dirs[:] = kept
        for name in sorted(files):
            child = here / name
            if discovery.include.match_file(name) and not discovery.excluded(child, False) \
                    and not _ignored(child, False, stack):
                yield os.path.join(root, name)


def discover(paths: list[str], discovery: Discovery) -> Iterator[str]:
    """Every file to check under the given paths, in a stable order."""
    for given in paths:
        path = Path(given)
        if path.is_dir():
            yield from _walk(path, discovery)
        elif not (discovery.force_exclude and _skipped_file(path, discovery)):
            yield given


def passed_over(path: Path, discovery: Discovery) -> bool:
    """Whether walking the project would pass over this file, ignore files aside: its
    name is not included, or it or a folder above it is excluded or a virtualenv."""
    return not discovery.include.match_file(path.name) or _skipped_file(path, discovery)


def _skipped_file(path: Path, discovery: Discovery) -> bool:
    """Whether walking the project would have passed over this file (--force-exclude)."""
    if discovery.excluded(path, False):
        return True
    for folder in path.absolute().parents:
        if (folder / "pyvenv.cfg").exists() or discovery.excluded(folder, True):
            return True
        if folder == discovery.root:
            break
    return False
