"""Which wheels each VS Code target's .vsix carries, fetched with ``pip download``.

A target's package holds, for every supported CPython version, the wheels of GradGuard's
dependencies (as its built wheel declares them, from pyproject.toml) built for that target:
the native ones (libcst's parser, PyYAML's) once per version, the pure ones once. The
bundled launcher (client/bundled/tool/gradguard_bundled.py) unpacks the wheels of the
interpreter's version on first use.

pip evaluates environment markers for the Python and the platform that run it, not for
``--python-version`` and ``--platform``, so after each download the markers are evaluated
again for the target's version and platform: what they add is downloaded with the rest,
what they drop is left out.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path

try:
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet
    from packaging.utils import canonicalize_name, parse_wheel_filename
except ImportError:  # pragma: no cover - pip carries its own copy
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[assignment]
    from pip._vendor.packaging.specifiers import SpecifierSet  # type: ignore[assignment]
    from pip._vendor.packaging.utils import (  # type: ignore[assignment]
        canonicalize_name,
        parse_wheel_filename,
    )

# The targets VS Code publishes builds for -> pip platform tags of the wheels that run
# there. VS Code needs glibc 2.28 on Linux, macOS 10.15 or 11 (Apple silicon); pip takes
# the listed macOS tag and every older one.
PLATFORMS: dict[str, list[str]] = {
    "win32-x64": ["win_amd64"],
    "win32-arm64": ["win_arm64"],
    "darwin-x64": ["macosx_10_15_x86_64"],
    "darwin-arm64": ["macosx_11_0_arm64"],
    "linux-x64": ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_26_x86_64",
                  "manylinux_2_24_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"],
    "linux-arm64": ["manylinux_2_28_aarch64", "manylinux_2_27_aarch64",
                    "manylinux_2_26_aarch64", "manylinux_2_24_aarch64",
                    "manylinux_2_17_aarch64", "manylinux2014_aarch64"],
}
UNIVERSAL = "universal"
# A CPython minor counts as released once the package index has a wheel of GradGuard's
# parser for it on Linux x64 (libcst publishes one for every release): versions are tried
# upwards from requires-python's floor up to the first one without.
_PARSER = "libcst"


@dataclass(frozen=True)
class Wheel:
    path: Path
    name: str
    version: str
    platforms: frozenset[str]
    pythons: frozenset[str]

    @property
    def pure(self) -> bool:
        return self.platforms == frozenset({"any"})


def read_wheel(path: Path) -> Wheel:
    name, version, _build, tags = parse_wheel_filename(path.name)
    return Wheel(path, str(name), str(version), frozenset(t.platform for t in tags),
                 frozenset(t.interpreter for t in tags))


def requires(path: Path) -> tuple[list[str], str | None]:
    """A wheel's Requires-Dist lines and Requires-Python."""
    with zipfile.ZipFile(path) as archive:
        [metadata] = [n for n in archive.namelist()
                      if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
        message = Parser().parsestr(archive.read(metadata).decode("utf-8"))
    return message.get_all("Requires-Dist") or [], message.get("Requires-Python")


# What environment markers see on each target (a Windows-only dependency, such as
# colorama for a progress bar, must be in the Windows packages and only there).
SYSTEMS = {"win32": {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt"},
           "darwin": {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix"},
           "linux": {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}}
MACHINES = {"win32": {"x64": "AMD64", "arm64": "ARM64"},
            "darwin": {"x64": "x86_64", "arm64": "arm64"},
            "linux": {"x64": "x86_64", "arm64": "aarch64"}}


def environment(version: str, target: str) -> dict[str, str]:
    """The values environment markers are evaluated with for CPython ``version`` on
    ``target``."""
    system, arch = target.split("-")
    return {"python_version": version, "python_full_version": f"{version}.0",
            "implementation_name": "cpython", "platform_python_implementation": "CPython",
            **SYSTEMS[system], "platform_machine": MACHINES[system][arch]}


def needed(root: Path, wheels: Iterable[Path], version: str, target: str,
           ) -> tuple[list[Path], list[str]]:
    """The wheels ``root`` needs on CPython ``version`` on ``target`` (markers evaluated
    for them), and the requirements none of ``wheels`` meets."""
    by_name = {canonicalize_name(read_wheel(w).name): w for w in wheels}
    wanted: list[tuple[Path, set[str]]] = [(root, set())]
    seen: set[str] = set()
    found: list[Path] = []
    missing: set[str] = set()
    while wanted:
        wheel, extras = wanted.pop()
        for line in requires(wheel)[0]:
            requirement = Requirement(line)
            marker = requirement.marker
            if marker is not None and not any(
                    marker.evaluate({**environment(version, target), "extra": extra})
                    for extra in extras or {""}):
                continue
            name = canonicalize_name(requirement.name)
            if name not in by_name:
                missing.add(str(requirement).split(";")[0].strip())
                continue
            key = f"{name}[{','.join(sorted(requirement.extras))}]"
            if key not in seen:
                seen.add(key)
                wanted.append((by_name[name], set(requirement.extras)))
                if by_name[name] not in found:
                    found.append(by_name[name])
    return sorted(found, key=lambda p: p.name), sorted(missing)


def supported_pythons(root: Path, cache: Path) -> list[str]:
    """The released CPython minors that ``root``'s Requires-Python allows."""
    lines, requires_python = requires(root)
    allowed = SpecifierSet(requires_python or ">=3")
    [parser] = [line.split(";")[0] for line in lines
                if canonicalize_name(Requirement(line).name) == _PARSER]
    versions: list[str] = []
    for minor in range(100):
        version = f"3.{minor}"
        if not allowed.contains(f"{version}.0"):
            if versions:
                break
            continue
        dest = cache / version
        if not download([parser], "linux-x64", version, dest, deps=False) or all(
                read_wheel(wheel).pure for wheel in dest.glob("*.whl")):
            break
        versions.append(version)
    return versions


def pip_download(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", "download", "--quiet",
                           "--disable-pip-version-check", *args],
                          capture_output=True, text=True, check=False)


def download(requirements: list[str], target: str, version: str, dest: Path,
             deps: bool = True) -> bool:
    """``pip download`` the requirements' wheels for one target and CPython version into
    a fresh ``dest``; False when the index has no wheels that fit."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    tags = [arg for tag in PLATFORMS[target] for arg in ("--platform", tag)]
    result = pip_download(["--only-binary=:all:", "--implementation", "cp",
                           "--python-version", version, *tags,
                           *([] if deps else ["--no-deps"]), "--dest", str(dest),
                           *requirements])
    return result.returncode == 0


def wheels_for(root: Path, target: str, version: str, work: Path,
               hints: dict[str, set[str]]) -> list[Path] | None:
    """The dependency wheels ``root`` needs on ``target`` under CPython ``version``, or
    None when the index has none that fit (that version then installs its dependencies
    with the user's pip on first use). ``hints`` holds, per version, what the markers
    added on other targets: asked for from the start, it saves a round of pip."""
    dest = work / target / version
    hinted = sorted(hints.get(version, ()))
    extra = list(hinted)
    for _round in range(6):
        if not download([str(root), *extra], target, version, dest):
            if hinted and extra == hinted:  # a hint this target has no wheel for
                hinted = extra = []
                continue
            return None
        found, missing = needed(root, dest.glob("*.whl"), version, target)
        if not missing:
            return found
        hints.setdefault(version, set()).update(missing)
        extra = sorted({*extra, *missing})
    raise SystemExit(f"{target}, CPython {version}: requirements still missing: {missing}")
