"""tools/vsix_wheels.py: which downloaded wheels a package carries for each CPython version.

pip evaluates environment markers for the Python and platform that run it, not for
``--python-version`` and ``--platform``, so the bundler evaluates them again, per version
and target, over the downloaded wheels' metadata (libcst wants PyYAML before 3.13,
pyyaml-ft on 3.13; GradGuard wants tomli before 3.11).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from tools.vsix_wheels import needed, read_wheel


def wheel(folder: Path, name: str, *requires: str, tag: str = "py3-none-any") -> Path:
    path = folder / f"{name}-1.0-{tag}.whl"
    lines = ["Metadata-Version: 2.1", f"Name: {name}", "Version: 1.0",
             *(f"Requires-Dist: {r}" for r in requires)]
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{name}-1.0.dist-info/METADATA", "\n".join(lines) + "\n")
    return path


def names(paths: list[Path]) -> list[str]:
    return [read_wheel(p).name for p in paths]


def test_markers_are_evaluated_for_the_target_version(tmp_path: Path) -> None:
    root = wheel(tmp_path, "gradguard", "libcst", 'tomli>=1.1; python_version < "3.11"',
                 'torch==2.13.0; extra == "probe"')
    wheel(tmp_path, "libcst", 'pyyaml>=5.2; python_version < "3.13"',
          'pyyaml-ft>=8.0.0; python_version == "3.13"', tag="cp311-cp311-win_amd64")
    wheel(tmp_path, "pyyaml", tag="cp311-cp311-win_amd64")
    downloaded = list(tmp_path.glob("*.whl"))
    found, missing = needed(root, downloaded, "3.10", "win32-x64")
    assert (names(found), missing) == (["libcst", "pyyaml"], ["tomli>=1.1"])
    found, missing = needed(root, downloaded, "3.12", "win32-x64")
    assert (names(found), missing) == (["libcst", "pyyaml"], [])
    found, missing = needed(root, downloaded, "3.13", "win32-x64")
    assert (names(found), missing) == (["libcst"], ["pyyaml-ft>=8.0.0"])


def test_what_markers_drop_for_the_version_is_left_out(tmp_path: Path) -> None:
    # pip running on 3.11 downloads exceptiongroup for a 3.12 target too.
    root = wheel(tmp_path, "gradguard", "cattrs")
    wheel(tmp_path, "cattrs", 'exceptiongroup; python_version < "3.11"')
    wheel(tmp_path, "exceptiongroup")
    downloaded = list(tmp_path.glob("*.whl"))
    assert names(needed(root, downloaded, "3.12", "win32-x64")[0]) == ["cattrs"]
    assert names(needed(root, downloaded, "3.10", "win32-x64")[0]) == ["cattrs", "exceptiongroup"]


def test_markers_are_evaluated_for_the_target_platform(tmp_path: Path) -> None:
    # tqdm wants colorama on Windows only; pip on Linux leaves it out of a Windows download.
    root = wheel(tmp_path, "gradguard", "tqdm")
    wheel(tmp_path, "tqdm", 'colorama; platform_system == "Windows"')
    downloaded = list(tmp_path.glob("*.whl"))
    assert needed(root, downloaded, "3.12", "win32-arm64")[1] == ["colorama"]
    assert needed(root, downloaded, "3.12", "darwin-arm64")[1] == []
    assert needed(root, downloaded, "3.12", "linux-x64")[1] == []


def test_names_match_whatever_their_spelling(tmp_path: Path) -> None:
    root = wheel(tmp_path, "gradguard", "Typing.Extensions>=4")
    wheel(tmp_path, "typing_extensions")
    assert needed(root, list(tmp_path.glob("*.whl")), "3.11", "linux-x64")[1] == []
