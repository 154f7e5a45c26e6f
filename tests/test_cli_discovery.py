"""Which files ``gradguard check .`` reads: the project's own code, as ruff would find it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.test_cli import HAZARD, check


def reported(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The files with findings, in the order reported."""
    return [line.split(":", 1)[0] for line in done.stdout.splitlines()]


def write(root: Path, relative: str, text: str = HAZARD) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_gitignored_virtualenv_is_not_walked(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".gitignore", "env/\n")
    write(tmp_path, "env/pyvenv.cfg", "home = /usr/bin\n")
    write(tmp_path, "env/lib/python3.11/site-packages/torchish/ops.py")
    write(tmp_path, "train.py")
    assert reported(check(".", cwd=tmp_path)) == ["./train.py"]


def test_a_directory_holding_pyvenv_cfg_is_skipped_whatever_its_name(tmp_path: Path) -> None:
    write(tmp_path, "my-python/pyvenv.cfg", "home = /usr/bin\n")
    write(tmp_path, "my-python/lib/mod.py")
    write(tmp_path, "src/model.py")
    assert reported(check(".", cwd=tmp_path)) == ["./src/model.py"]


def test_gitignore_and_ignore_files_apply_below_their_folder_with_negation(
        tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".gitignore", "generated/\n*_draft.py\n")
    write(tmp_path, "pkg/.ignore", "!keep_draft.py\nscratch.py\n")
    for name in ("generated/out.py", "a_draft.py", "pkg/keep_draft.py", "pkg/scratch.py",
                 "pkg/model.py"):
        write(tmp_path, name)
    assert reported(check(".", cwd=tmp_path)) == ["./pkg/keep_draft.py", "./pkg/model.py"]


def test_a_root_gitignore_applies_when_checking_a_subfolder(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".gitignore", "src/gen/\n")
    write(tmp_path, "src/gen/x.py")
    write(tmp_path, "src/y.py")
    assert reported(check("src", cwd=tmp_path)) == ["src/y.py"]


def test_exclude_extend_exclude_and_include_come_from_pyproject(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.gradguard]\nextend-exclude = ["legacy", '
          '"nets/*_old.py"]\ninclude = ["*.py", "*.pyw"]\n')
    for name in ("legacy/a.py", "nets/b_old.py", "nets/b.py", "gui.pyw", "build/c.py"):
        write(tmp_path, name)
    assert reported(check(".", cwd=tmp_path)) == ["./gui.pyw", "./nets/b.py"]
    # `exclude` replaces the default list (which holds build/).
    write(tmp_path, "pyproject.toml", '[tool.gradguard]\nexclude = ["legacy"]\n')
    assert reported(check(".", cwd=tmp_path)) == [
        "./build/c.py", "./nets/b.py", "./nets/b_old.py"]


def test_files_named_on_the_command_line_are_checked_unless_force_exclude(
        tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.gradguard]\nextend-exclude = ["vendored"]\n')
    write(tmp_path, "vendored/lib.py")
    write(tmp_path, "venv2/pyvenv.cfg", "")
    write(tmp_path, "venv2/site.py")
    write(tmp_path, "mine.py")
    named = ("vendored/lib.py", "venv2/site.py", "mine.py")
    assert reported(check(*named, cwd=tmp_path)) == list(named)
    assert reported(check("--force-exclude", *named, cwd=tmp_path)) == ["mine.py"]


def test_a_bad_pyproject_setting_is_a_usage_error(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.gradguard]\nexclude = "legacy"\n')
    write(tmp_path, "a.py")
    done = check(".", cwd=tmp_path)
    assert done.returncode == 2
    assert "[tool.gradguard]: `exclude` must be a list of strings" in done.stderr
