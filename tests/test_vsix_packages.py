"""The VS Code packages in dist/ (``npm run package``): each target's .vsix holds wheels
built for that target only, for every supported CPython version, and the universal one
holds nothing native.

Read from the archives themselves, without the tool that made them: a wheel's platform
tag is matched against the target here, by operating system and architecture. The
modules are skipped (saying so) when dist/ has no packages of this version; CI
(scripts/test.sh) runs them again right after building the packages.
"""

from __future__ import annotations

import io
import json
import re
import sys
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
VERSION = json.loads((ROOT / "client" / "package.json").read_text())["version"]
TARGETS = ("win32-x64", "win32-arm64", "darwin-x64", "darwin-arm64", "linux-x64",
           "linux-arm64")
REQUIRES_PYTHON = SpecifierSet(
    tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"])
# Target, CPython versions the package index has no wheels of a dependency for: the
# launcher installs that version's dependencies with the user's pip instead. Only a known
# gap may be one; a new one (a dependency without wheels somewhere) fails.
KNOWN_GAPS = {
    # PyYAML publishes no win_arm64 wheels before CPython 3.12, pyyaml-ft (3.13) none.
    ("win32-arm64", "3.10"), ("win32-arm64", "3.11"), ("win32-arm64", "3.13"),
    # libcst publishes no macOS x86_64 wheels for CPython 3.15.
    ("darwin-x64", "3.15"),
}
# What environment markers see on each target's system and architecture.
PLATFORM_SYSTEM = {"win32": "Windows", "darwin": "Darwin", "linux": "Linux"}
PLATFORM_MACHINE = {"win32": {"x64": "AMD64", "arm64": "ARM64"},
                    "darwin": {"x64": "x86_64", "arm64": "arm64"},
                    "linux": {"x64": "x86_64", "arm64": "aarch64"}}
NATIVE_SUFFIXES = (".so", ".pyd", ".dylib", ".dll")


def package(target: str | None) -> Path:
    name = f"gradguard-{VERSION}.vsix" if target is None else \
        f"gradguard-{target}-{VERSION}.vsix"
    return DIST / name


BUILT = [p for p in [package(None), *map(package, TARGETS)] if p.exists()]
pytestmark = pytest.mark.skipif(
    not BUILT, reason=f"no dist/gradguard-*-{VERSION}.vsix: run npm run package")


def runs_on(platform: str, target: str) -> bool:
    """Whether a wheel's platform tag runs where VS Code's ``target`` runs."""
    system, arch = target.split("-")
    if platform == "any":
        return True
    if system == "win32":
        return platform == {"x64": "win_amd64", "arm64": "win_arm64"}[arch]
    if system == "darwin":
        found = re.fullmatch(r"macosx_(\d+)_(\d+)_(\w+)", platform)
        wanted = {"x64": ("x86_64", "intel", "universal2"), "arm64": ("arm64", "universal2")}
        oldest = {"x64": (10, 15), "arm64": (11, 0)}[arch]
        return found is not None and found[3] in wanted[arch] and \
            (int(found[1]), int(found[2])) <= oldest
    machine = {"x64": "x86_64", "arm64": "aarch64"}[arch]
    found = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)|manylinux(2014|2010|1)_(\w+)", platform)
    if found is None:
        return False
    if found[4] is not None:
        return found[5] == machine
    # VS Code needs glibc 2.28.
    return found[3] == machine and (int(found[1]), int(found[2])) <= (2, 28)


def runs_under(interpreter: str, abi: str, python: str) -> bool:
    """Whether a wheel's interpreter and ABI tags load on CPython ``python``."""
    own = "cp" + python.replace(".", "")
    if abi == "none":
        return interpreter in ("py3", own) or re.fullmatch(r"py3\d+", interpreter) is not None
    if abi == "abi3":
        return interpreter.startswith("cp3") and int(interpreter[3:]) <= int(own[3:])
    return interpreter == own and abi == own


class Package:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.archive = zipfile.ZipFile(path)
        self.names = self.archive.namelist()
        self.manifest = json.loads(self.read("bundled/wheels/manifest.json"))

    def read(self, inner: str) -> bytes:
        return self.archive.read(f"extension/{inner}")

    def wheels(self) -> list[str]:
        return [n.rsplit("/", 1)[1] for n in self.names
                if n.startswith("extension/bundled/wheels/") and n.endswith(".whl")]

    def metadata(self, wheel: str) -> list[str]:
        with zipfile.ZipFile(io.BytesIO(self.read(f"bundled/wheels/{wheel}"))) as inner:
            [name] = [n for n in inner.namelist()
                      if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
            return Parser().parsestr(inner.read(name).decode()).get_all("Requires-Dist") or []

    def gradguard_requires(self) -> list[str]:
        [name] = [n for n in self.names
                  if re.fullmatch(r"extension/bundled/server/gradguard-[^/]+/METADATA", n)]
        metadata = Parser().parsestr(self.archive.read(name).decode())
        return metadata.get_all("Requires-Dist") or []


def packages() -> Iterator[tuple[str, Package]]:
    for target in TARGETS:
        yield target, Package(package(target))


def pure(wheel: str) -> bool:
    return {t.platform for t in parse_wheel_filename(wheel)[3]} == {"any"}


def unmet(python: str, target: str, roots: list[str], wheels: list[str], pkg: Package,
          ) -> list[str]:
    """The requirements, from GradGuard's down, that none of ``wheels`` meets on
    CPython ``python`` on ``target`` (markers evaluated for them)."""
    by_name = {canonicalize_name(parse_wheel_filename(w)[0]): w for w in wheels}
    system, arch = target.split("-")
    environment = {"python_version": python, "python_full_version": f"{python}.0",
                   "implementation_name": "cpython", "platform_python_implementation": "CPython",
                   "sys_platform": system, "platform_system": PLATFORM_SYSTEM[system],
                   "os_name": "nt" if system == "win32" else "posix",
                   "platform_machine": PLATFORM_MACHINE[system][arch]}
    todo, seen, missing = list(roots), set(), []
    while todo:
        requirement = Requirement(todo.pop())
        if requirement.marker is not None and \
                not requirement.marker.evaluate({**environment, "extra": ""}):
            continue
        wheel = by_name.get(canonicalize_name(requirement.name))
        if wheel is None or not requirement.specifier.contains(
                str(parse_wheel_filename(wheel)[1]), prereleases=True):
            missing.append(str(requirement))
        elif wheel not in seen:
            seen.add(wheel)
            todo.extend(pkg.metadata(wheel))
    return missing


def test_all_seven_packages_are_built() -> None:
    missing = [p.name for p in [package(None), *map(package, TARGETS)] if not p.exists()]
    assert missing == []


def test_every_supported_python_is_covered_and_the_same_in_every_package() -> None:
    versions = {target: list(pkg.manifest["pythons"]) for target, pkg in packages()}
    versions["universal"] = list(Package(package(None)).manifest["pythons"])
    first = versions["linux-x64"]
    assert all(v == first for v in versions.values()), versions
    minors = [int(v.split(".")[1]) for v in first]
    assert minors == list(range(minors[0], minors[0] + len(minors))), "a gap in the minors"
    assert not REQUIRES_PYTHON.contains(f"3.{minors[0] - 1}.0")
    assert all(REQUIRES_PYTHON.contains(f"{v}.0") for v in first)
    assert "3.14" in first  # released in October 2025


@pytest.mark.parametrize("target", TARGETS)
def test_each_wheel_is_built_for_its_target_and_its_python(target: str) -> None:
    pkg = Package(package(target))
    assert pkg.manifest["target"] == target
    listed = set()
    for python, wheels in pkg.manifest["pythons"].items():
        for wheel in wheels or []:
            listed.add(wheel)
            _name, _version, _build, tags = parse_wheel_filename(wheel)
            assert any(runs_on(t.platform, target) for t in tags), (python, wheel)
            assert any(runs_under(t.interpreter, t.abi, python) for t in tags), (python, wheel)
    assert set(pkg.wheels()) == listed, "wheels in the archive that no version uses"


@pytest.mark.parametrize("target", TARGETS)
def test_each_python_has_everything_gradguard_requires(target: str) -> None:
    pkg = Package(package(target))
    roots = [r for r in pkg.gradguard_requires() if "extra ==" not in r]
    gaps = set()
    for python, wheels in pkg.manifest["pythons"].items():
        if wheels is None:
            gaps.add((target, python))
            continue
        assert unmet(python, target, roots, wheels, pkg) == [], python
        assert any(not pure(w) for w in wheels), f"{python}: no native wheel (libcst's)"
    assert gaps <= KNOWN_GAPS


@pytest.mark.parametrize("target", TARGETS)
def test_pure_wheels_are_carried_once(target: str) -> None:
    names = [parse_wheel_filename(w)[0] for w in Package(package(target)).wheels() if pure(w)]
    assert len(names) == len(set(names))


def test_the_universal_package_has_nothing_native() -> None:
    pkg = Package(package(None))
    assert pkg.manifest["target"] == "universal"
    assert pkg.wheels() == []
    assert all(wheels is None for wheels in pkg.manifest["pythons"].values())
    assert [n for n in pkg.names if n.endswith(NATIVE_SUFFIXES)] == []
    assert "extension/bundled/server/gradguard/__init__.py" in pkg.names


@pytest.mark.parametrize("target", [None, *TARGETS])
def test_the_server_is_apart_from_its_dependencies_and_nothing_is_unpacked(
        target: str | None) -> None:
    # The probe's child gets bundled/server on PYTHONPATH: only GradGuard may be there.
    pkg = Package(package(target))
    server = {n.split("/")[3] for n in pkg.names if n.startswith("extension/bundled/server/")}
    assert {s for s in server if not s.startswith("gradguard")} == set()
    assert not any(n.startswith("extension/bundled/libs/") for n in pkg.names)
    assert "extension/bundled/tool/gradguard_bundled.py" in pkg.names
