"""A name an import was looked for under and did not find is known missing to the
project: ``check`` asks for the text of every file an analysis read (misses included)
to key its cache, once per checked file, and a run over a large tree made that one
failed ``open`` per miss per file (a fifth of its time on transformers' models). Looking
for an import asks the disk once per name (a name not on disk is read only from an
editor's texts, which a run may be handed)."""

from __future__ import annotations

from pathlib import Path

from gradguard.analysis.analyze import ProjectRun
from gradguard.analysis.project import read_file

SCRIPT = "import torch\nfrom helpers import compute\n\nout = compute(torch.randn(3))\n"


def _counting_run(root: Path) -> tuple[ProjectRun, list[str]]:
    asked: list[str] = []

    def read(path: str) -> str | None:
        asked.append(path)
        return read_file(path)

    return ProjectRun([str(root)], read), asked


def test_a_miss_an_import_found_is_not_read_again_for_the_cache(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    run, asked = _counting_run(tmp_path)
    read = run.file(str(script), SCRIPT).read
    missing = str(tmp_path / "helpers.py")
    assert missing in read
    asked.clear()
    assert [run.project.text_seen(path) for path in read if path == missing] == [None]
    assert asked == []


def test_a_file_created_where_a_miss_was_is_read(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    run, _ = _counting_run(tmp_path)
    run.file(str(script), SCRIPT)
    helpers = tmp_path / "helpers.py"
    helpers.write_text("def compute(t):\n    return t.mul_(2)\n")
    run.project.forget(str(helpers), created_or_deleted=True)
    assert run.project.text_seen(str(helpers)) == helpers.read_text()


HELPERS = "def compute(t):\n    return t.mul_(2)\n"
TRAIN = ("import torch\nfrom helpers import compute\n\nx = torch.randn(3, requires_grad=True)\n"
         "y = torch.sigmoid(x)\nout = compute(y)\nout.sum().backward()\n")


def test_a_module_only_the_editor_has_is_imported(tmp_path: Path) -> None:
    """Not on disk, but in the texts handed to the run (an unsaved file): found."""
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    helpers = str(tmp_path / "helpers.py")
    run = ProjectRun([str(tmp_path)], texts={helpers: HELPERS})
    found = run.file(str(script), TRAIN).found
    assert [h.code for h in found.get(helpers, [])] == ["GG001"]


def test_a_module_on_no_disk_and_in_no_editor_is_not(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    assert ProjectRun([str(tmp_path)]).file(str(script), TRAIN).found == {}
