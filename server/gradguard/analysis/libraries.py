"""Installed libraries: where an installed package's source is, read-only, and which
packages the analysis follows into.

A language server locates site-packages the way pyright and jedi do: from the search
path of the interpreter the project runs on (the server and ``check`` run on it), never
by importing anything. A package is followed only when its distribution names torch
among its requirements (extras included: transformers asks for torch as an extra): a
layer worth following is PyTorch code, and the rest (numpy, the standard library, HTTP
clients) would cost time and find nothing. torch itself never is: what its functions do
is the facts tables' job.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

# Never followed, whatever their metadata says: torch is the facts tables', and these
# are large, hold no layers and sit under nearly every project.
EXCLUDED = frozenset({"torch", "torchgen", "functorch", "numpy", "scipy", "pandas",
                      "triton", "huggingface_hub", "safetensors", "tokenizers",
                      "gradguard"})
_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


@dataclass(frozen=True)
class Package:
    """An installed distribution the analysis follows: its name and version (the key
    under which what was learnt of its files holds)."""

    name: str
    version: str
    # Installed from a working tree (``pip install -e``): its files change under the
    # same version, so a cache keys them by their texts instead.
    editable: bool = False


@dataclass
class Libraries:
    """The folders installed packages are found in, and which of their top-level
    packages are followed (each decided once, from the distribution's metadata)."""

    folders: tuple[str, ...]
    _packages: dict[str, Package | None] = field(default_factory=dict)
    # Each folder's modification time when its packages were last looked at: installing,
    # upgrading or removing a package adds or removes its ``dist-info`` folder there.
    _stamps: dict[str, int | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._stamps = {folder: _stamp(folder) for folder in self.folders}

    def refresh(self) -> set[str]:
        """The top-level packages whose followed distribution changed (another version
        installed, removed, installed anew) since they were looked at; what was learnt of
        their files no longer holds. A stat of each folder when nothing changed."""
        stamps = {folder: _stamp(folder) for folder in self.folders}
        if stamps == self._stamps:
            return set()
        self._stamps = stamps
        _dist_infos.cache_clear()
        before, self._packages = self._packages, {}
        return {top for top, package in before.items() if self.followed(top) != package}

    def top_of(self, path: str) -> str | None:
        """The top-level package (or module) of these folders a file is in. The
        innermost folder holding it: a source folder on the search path may hold a
        virtual environment's site-packages."""
        for folder in sorted(self.folders, key=len, reverse=True):
            if path.startswith(folder + os.sep):
                top = path[len(folder) + 1:].split(os.sep)[0]
                return top[:-3] if top.endswith(".py") else top
        return None

    def followed(self, top: str) -> Package | None:
        """The distribution of top-level package ``top`` if the analysis follows it."""
        if top not in self._packages:
            self._packages[top] = None if top in EXCLUDED else self._package(top)
        return self._packages[top]

    def owner(self, path: str) -> tuple[str, Package] | None:
        """The top-level package a file of these folders belongs to, if followed."""
        top = self.top_of(path)
        package = None if top is None else self.followed(top)
        return None if top is None or package is None else (top, package)

    def _package(self, top: str) -> Package | None:
        for folder in self.folders:
            if not (os.path.isdir(os.path.join(folder, top)) or
                    os.path.isfile(os.path.join(folder, top + ".py"))):
                continue
            dist = _distribution(folder, top)
            if dist is None or not _needs_torch(dist.requires or ()):
                return None
            direct = dist.read_text("direct_url.json") or ""
            return Package(dist.metadata["Name"] or top, dist.version,
                           re.search(r'"editable"\s*:\s*true', direct) is not None)
        return None


def _distribution(folder: str, top: str) -> metadata.Distribution | None:
    """The distribution that installed ``top`` in ``folder``: the one of the same name
    (most are), else the one whose ``top_level.txt`` names it. Read from the folder's
    listing, not by loading every distribution's metadata (a site-packages holds
    hundreds)."""
    infos = _dist_infos(folder)
    found = infos.get(_normal(top))
    if found is None:
        for info in infos.values():
            try:
                tops = Path(info, "top_level.txt").read_text("utf-8").split()
            except (OSError, UnicodeDecodeError):
                continue
            if top in tops:
                found = info
                break
    return None if found is None else metadata.PathDistribution(Path(found))


def _stamp(folder: str) -> int | None:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


@functools.lru_cache(maxsize=64)
def _dist_infos(folder: str) -> dict[str, str]:
    """The ``*.dist-info`` folders of a site folder, by their project's normalised name."""
    try:
        names = os.listdir(folder)
    except OSError:
        return {}
    return {_normal(name[:-len(".dist-info")].split("-")[0]): os.path.join(folder, name)
            for name in sorted(names) if name.endswith(".dist-info")}


def _needs_torch(requires: Iterable[str]) -> bool:
    for requirement in requires:
        match = _REQUIREMENT_NAME.match(requirement)
        if match and _normal(match.group(1)) == "torch":
            return True
    return False


def search_folders(path: Iterable[str] | None = None) -> tuple[str, ...]:
    """The folders of an interpreter's search path that hold installed packages: its
    site-packages (and folders a ``.pth`` file added), not the standard library's own
    nor the current folder (a project's own files are found as the project's)."""
    stdlib = {os.path.realpath(p) for key in ("stdlib", "platstdlib")
              if (p := sysconfig.get_paths().get(key))}
    folders = []
    for entry in sys.path if path is None else path:
        if not entry or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if real in stdlib or real.endswith("lib-dynload") or real == os.getcwd():
            continue
        folders.append(os.path.abspath(entry))
    return tuple(dict.fromkeys(folders))


_INSTALLED: Libraries | None = None


def installed() -> Libraries:
    """The libraries of the interpreter this process runs on (found once a process)."""
    global _INSTALLED
    if _INSTALLED is None:
        _INSTALLED = Libraries(search_folders())
    return _INSTALLED


def version_stamp(path: str) -> str | None:
    """What stands for a file of an installed package in a cache of results: its
    distribution's name and version (a package is replaced whole, never edited in place,
    unless it is installed from a working tree). None: not such a file."""
    owner = installed().owner(path)
    if owner is None or owner[1].editable:
        return None
    return f"{owner[1].name}=={owner[1].version}"
