"""Builds the VS Code extension's .vsix with the GradGuard server bundled in it.

    python3 tools/package_vsix.py [--target linux-x64] [--out dist/]

Run from ``npm run package`` (after the TypeScript build). Like the ruff extension and
Microsoft's python-tools template, the .vsix carries the server, in
``client/bundled/server``, and its dependencies, in ``client/bundled/libs`` (pip
``--target``), started on the user's interpreter by
``client/bundled/tool/gradguard_bundled.py``. GradGuard is kept apart from its
dependencies because the probe's child process gets its folder on PYTHONPATH: the user's
code under the probe must import the user's packages, not the extension's.

libcst has a native parser, built per platform and per CPython version
(``native.cpython-311-x86_64-linux-gnu.so``), so the bundle is per platform (``vsce
package --target``) and holds one native file for each CPython version the target's
wheels exist for; their names differ, so they sit side by side in one folder, and the
pure files must be identical across versions (checked).
Everything comes from the package index through pip (its cache makes a second run fast).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import distributions
from pathlib import Path

try:
    from packaging.requirements import Requirement
except ImportError:  # pragma: no cover - pip carries its own copy
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[assignment]

REPO = Path(__file__).resolve().parent.parent
CLIENT = REPO / "client"
PYTHON_VERSIONS = ("3.10", "3.11", "3.12", "3.13", "3.14")
# vsce target -> pip platform tags of the wheels that run there (newest first).
PLATFORMS = {
    "linux-x64": ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"],
    "linux-arm64": ["manylinux_2_28_aarch64", "manylinux_2_17_aarch64",
                    "manylinux2014_aarch64"],
    "darwin-x64": ["macosx_10_13_x86_64", "macosx_10_9_x86_64"],
    "darwin-arm64": ["macosx_11_0_arm64"],
    "win32-x64": ["win_amd64"],
}


def host_target() -> str:
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}[platform.system()]
    machine = platform.machine().lower()
    arch = "arm64" if machine in ("arm64", "aarch64") else "x64"
    return f"{system}-{arch}"


def log(message: str) -> None:
    print(f"[package_vsix] {message}", file=sys.stderr, flush=True)


def pip(*args: str | Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", *map(str, args)], check=True)


def missing_for(version: str, into: Path) -> list[str]:
    """Requirements of the installed distributions that hold on ``version`` but are not
    installed: pip evaluates markers (``tomli; python_version < '3.11'``) for the Python
    that runs it, not for ``--python-version``."""
    installed = {}
    for dist in distributions(path=[str(into)]):
        installed[dist.metadata["Name"].lower().replace("_", "-")] = dist
    environment = {"python_version": version, "python_full_version": f"{version}.0",
                   "implementation_name": "cpython", "platform_python_implementation": "CPython",
                   "extra": ""}
    missing = set()
    for dist in installed.values():
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is not None and not requirement.marker.evaluate(environment):
                continue
            if requirement.name.lower().replace("_", "-") not in installed:
                missing.add(str(requirement).split(";")[0])
    return sorted(missing)


def install_for(version: str, target: str, wheel: Path, into: Path) -> bool:
    """Install the wheel and its dependencies for one CPython version; False if pip finds
    no wheels for it (that version is then not supported by this bundle)."""
    tags = [arg for tag in PLATFORMS[target] for arg in ("--platform", tag)]
    wanted: list[str | Path] = [wheel]
    extra: list[str] = []
    try:
        while wanted:
            pip("install", "--quiet", "--disable-pip-version-check", "--no-compile",
                "--only-binary=:all:", "--implementation", "cp", "--python-version", version,
                *tags, *extra, "--target", into, *wanted)
            wanted = list(missing_for(version, into))
            # What markers add for the target version is checked by pip against the Python
            # that runs it (pyyaml-ft for 3.13 on a 3.11): the tags above still pick wheels
            # built for the target version.
            extra = ["--ignore-requires-python"]
    except subprocess.CalledProcessError:
        log(f"no wheels for CPython {version} on {target}: left out of the bundle")
        return False
    return True


def merge(source: Path, libs: Path) -> None:
    """Copy one version's tree into libs; a file both have must be the same file."""
    for path in sorted(source.rglob("*")):
        if path.is_dir():
            continue
        relative = path.relative_to(source)
        target = libs / relative
        if "__pycache__" in relative.parts or relative.parts[0] == "bin":
            continue
        if target.exists():
            # dist-info RECORD and INSTALLER hold per-install detail; the code must agree.
            if ".dist-info" in relative.parts[0] or filecmp.cmp(path, target, shallow=False):
                continue
            raise SystemExit(f"{relative} differs between CPython versions; cannot bundle")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


def bundle(target: str, work: Path) -> list[str]:
    libs = CLIENT / "bundled" / "libs"
    server = CLIENT / "bundled" / "server"
    for folder in (libs, server):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    log("building the gradguard wheel")
    pip("wheel", "--quiet", "--disable-pip-version-check", "--no-deps", "-w", work, REPO)
    [wheel] = work.glob("gradguard-*.whl")
    versions = []
    for version in PYTHON_VERSIONS:
        into = work / f"py{version}"
        if install_for(version, target, wheel, into):
            merge(into, libs)
            versions.append(version)
    if not versions:
        raise SystemExit(f"no CPython version has wheels for {target}")
    for own in [libs / "gradguard", *libs.glob("gradguard-*.dist-info")]:
        shutil.move(own, server / own.name)
    (libs / "BUNDLED.txt").write_text(
        f"GradGuard bundled for {target}, CPython {', '.join(versions)}.\n", encoding="utf-8")
    return versions


def package(target: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    vsce = REPO / "node_modules" / ".bin" / ("vsce.cmd" if os.name == "nt" else "vsce")
    subprocess.run([str(vsce), "package", "--no-dependencies", "--skip-license",
                    "--allow-missing-repository", "--target", target, "-o", f"{out}{os.sep}"],
                   cwd=CLIENT, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default=host_target(), choices=sorted(PLATFORMS))
    parser.add_argument("--out", type=Path, default=REPO / "dist")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gradguard-bundle-") as work:
        versions = bundle(args.target, Path(work))
    log(f"bundled for {args.target}, CPython {', '.join(versions)}")
    package(args.target, args.out.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
