"""Builds the VS Code extension's .vsix packages, one per target VS Code publishes and a
universal one, with the GradGuard server bundled in them.

    python3 -m tools.package_vsix [--target linux-x64 ...] [--out dist/]

Run from ``npm run package`` (after the TypeScript build); without ``--target`` it builds
every target of tools/vsix_wheels.py and the universal package. Like the ruff extension
and Microsoft's python-tools template, a .vsix carries the server, started on the user's
interpreter by ``client/bundled/tool/gradguard_bundled.py``:

- ``client/bundled/server``: GradGuard itself (pure Python), kept apart from its
  dependencies because the probe's child process gets this folder on PYTHONPATH: the
  user's code under the probe must import the user's packages, not the extension's;
- ``client/bundled/wheels``: the dependencies' wheels for the target, for every supported
  CPython version (``pip download``, tools/vsix_wheels.py), and ``manifest.json`` saying
  which wheels each version uses. The launcher unpacks them on first use.

The universal package has no wheels: on first use the launcher installs GradGuard's
dependencies with the user's own pip (for platforms without a package of their own, such
as Alpine or 32-bit ARM). pip's cache makes a second build fast.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tools.vsix_wheels import PLATFORMS, UNIVERSAL, supported_pythons, wheels_for

REPO = Path(__file__).resolve().parent.parent
CLIENT = REPO / "client"
BUNDLED = CLIENT / "bundled"
# Downloads run side by side: most of their time is spent waiting on the index.
PARALLEL_DOWNLOADS = 4

Plan = dict[str, list[Path] | None]


def host_target() -> str:
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}[platform.system()]
    machine = platform.machine().lower()
    arch = "arm64" if machine in ("arm64", "aarch64") else "x64"
    return f"{system}-{arch}"


def log(message: str) -> None:
    print(f"[package_vsix] {message}", file=sys.stderr, flush=True)


def build_wheel(work: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet",
                    "--disable-pip-version-check", "--no-deps", "-w", str(work), str(REPO)],
                   check=True)
    [wheel] = work.glob("gradguard-*.whl")
    return wheel


def plan_all(wheel: Path, targets: list[str], versions: list[str], work: Path,
             ) -> dict[str, Plan]:
    jobs = [(target, version) for target in targets for version in versions]
    hints: dict[str, set[str]] = {}
    with ThreadPoolExecutor(PARALLEL_DOWNLOADS) as pool:
        found = list(pool.map(lambda job: wheels_for(wheel, job[0], job[1], work, hints),
                              jobs))
    plans: dict[str, Plan] = {target: {} for target in targets}
    for (target, version), wheels in zip(jobs, found, strict=True):
        plans[target][version] = wheels
        if wheels is None:
            log(f"{target}: no wheels for CPython {version} on the index; the launcher "
                "installs its dependencies with the user's pip")
    return plans


def stage(target: str, wheel: Path, plan: Plan) -> None:
    """Fills client/bundled for one package."""
    for folder in ("server", "wheels", "libs"):
        shutil.rmtree(BUNDLED / folder, ignore_errors=True)
    server = BUNDLED / "server"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(server)
    wheels = BUNDLED / "wheels"
    wheels.mkdir()
    for path in {p for found in plan.values() for p in found or []}:
        shutil.copy2(path, wheels / path.name)
    manifest = {"target": target,
                "pythons": {version: None if found is None else [p.name for p in found]
                            for version, found in plan.items()}}
    (wheels / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n",
                                          encoding="utf-8")


def package(target: str, out: Path) -> Path:
    vsce = REPO / "node_modules" / ".bin" / ("vsce.cmd" if os.name == "nt" else "vsce")
    version = json.loads((CLIENT / "package.json").read_text(encoding="utf-8"))["version"]
    name = f"gradguard-{version}.vsix" if target == UNIVERSAL else \
        f"gradguard-{target}-{version}.vsix"
    where = ["--target", target] if target != UNIVERSAL else []
    subprocess.run([str(vsce), "package", "--no-dependencies", "--skip-license",
                    "--allow-missing-repository", *where, "-o", str(out / name)],
                   cwd=CLIENT, check=True, stdout=subprocess.DEVNULL)
    return out / name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", action="append", choices=[*sorted(PLATFORMS), UNIVERSAL],
                        help="a target to build (repeatable); default: all of them")
    parser.add_argument("--out", type=Path, default=REPO / "dist")
    args = parser.parse_args()
    targets = args.target or [UNIVERSAL, *PLATFORMS]
    # The host's package last, so that client/bundled is left with what runs here (the
    # client's unit tests start the bundled launcher).
    targets.sort(key=lambda target: target == host_target())
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gradguard-bundle-") as temp:
        work = Path(temp)
        wheel = build_wheel(work)
        versions = supported_pythons(wheel, work / "probe")
        log(f"CPython {', '.join(versions)} (requires-python, released)")
        plans = plan_all(wheel, [t for t in targets if t != UNIVERSAL], versions, work)
        plans[UNIVERSAL] = dict.fromkeys(versions)
        log(f"wheels downloaded in {time.monotonic() - start:.0f} s")
        for target in targets:
            stage(target, wheel, plans[target])
            built = package(target, out)
            log(f"{built.relative_to(REPO) if built.is_relative_to(REPO) else built}: "
                f"{built.stat().st_size / 1e6:.1f} MB")
    log(f"{len(targets)} packages in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
