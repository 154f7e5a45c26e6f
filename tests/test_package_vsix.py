"""tools/package_vsix.py: what the .vsix bundle must add for each CPython version.

pip evaluates environment markers for the Python that runs it, not for
``--python-version``, so the bundler asks again, per version, what the installed
distributions require (libcst wants PyYAML before 3.13, pyyaml-ft on 3.13; GradGuard wants
tomli before 3.11).
"""

from __future__ import annotations

from pathlib import Path

from tools.package_vsix import missing_for  # noqa: E402


def installed(folder: Path, name: str, *requires: str) -> None:
    info = folder / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", "Version: 1.0",
             *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("\n".join(lines) + "\n")


def test_markers_are_evaluated_for_the_target_version(tmp_path: Path) -> None:
    installed(tmp_path, "libcst", 'pyyaml>=5.2; python_version < "3.13"',
              'pyyaml-ft>=8.0.0; python_version == "3.13"')
    installed(tmp_path, "gradguard", "libcst", 'tomli>=1.1; python_version < "3.11"',
              'torch==2.13.0; extra == "probe"')
    assert missing_for("3.10", tmp_path) == ["pyyaml>=5.2", "tomli>=1.1"]
    assert missing_for("3.12", tmp_path) == ["pyyaml>=5.2"]
    assert missing_for("3.13", tmp_path) == ["pyyaml-ft>=8.0.0"]


def test_nothing_is_missing_once_installed_whatever_the_name_spelling(tmp_path: Path) -> None:
    installed(tmp_path, "gradguard", "typing_extensions>=4")
    installed(tmp_path, "typing_extensions")
    assert missing_for("3.11", tmp_path) == []
