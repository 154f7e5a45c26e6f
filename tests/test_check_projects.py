"""``gradguard check`` on a project: imports followed across files, and the result cache.

A hazard whose saving op is in one file and whose in-place op is in another is reported
at the in-place line, with the saving line (in the other file) as related information.
Results are kept in ``.gradguard_cache/``: a file is analysed again when its text, or the
text of a project file its analysis read, changed; ``--no-cache`` analyses everything.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

MODEL = '''import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))
'''

TRAIN = '''import torch
from model import Head

head = Head()
out = head(torch.randn(2, 4))
out += 1
out.sum().backward()
'''


def check(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gradguard", "check", "--format", "json",
                           *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def findings(done: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    assert done.returncode in (0, 1), done.stderr
    records: list[dict[str, object]] = json.loads(done.stdout or "[]")
    return records


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "model.py").write_text(MODEL, "utf-8")
    (tmp_path / "train.py").write_text(TRAIN, "utf-8")
    return tmp_path


def test_a_write_into_what_an_imported_module_saved_is_reported_at_the_write(
        project: Path) -> None:
    (hazard,) = findings(check("train.py", cwd=project))

    assert (hazard["path"], hazard["line"], hazard["code"]) == ("train.py", 6, "GG001")
    assert "`torch.sigmoid` at model.py:11" in str(hazard["message"])
    assert [(r["path"], r["line"]) for r in hazard["related"]] == [  # type: ignore[attr-defined]
        ("model.py", 11)]


def test_a_second_run_reuses_the_results_of_unchanged_files(project: Path) -> None:
    first = findings(check(".", cwd=project))
    caches = list((project / ".gradguard_cache").rglob("*.json"))
    assert len(caches) == 1
    # What a second run prints comes from the cache: a result planted there shows.
    kept = json.loads(caches[0].read_text("utf-8"))
    entry = kept[str(project / "train.py")]
    entry["found"][0][1]["message"] = "kept from the last run"
    caches[0].write_text(json.dumps(kept), "utf-8")

    again = findings(check(".", cwd=project))

    assert [h["message"] for h in again] == ["kept from the last run"]
    assert findings(check(".", "--no-cache", cwd=project)) == first


def test_a_change_to_an_imported_file_analyses_its_importer_again(project: Path) -> None:
    assert findings(check(".", cwd=project))

    # The head's output is now a linear layer's, which saves nothing that += overwrites.
    (project / "model.py").write_text(MODEL.replace("torch.sigmoid(self.fc(x))",
                                                    "self.fc(x)"), "utf-8")

    assert findings(check(".", cwd=project)) == []


def test_no_cache_leaves_no_cache_behind(project: Path) -> None:
    findings(check(".", "--no-cache", cwd=project))
    assert not (project / ".gradguard_cache").exists()


def test_fix_applies_the_fix_check_reports_for_a_hazard_only_the_project_shows(
        project: Path) -> None:
    # `out += 1` writes what the sigmoid in model.py saved: a hazard only with model.py
    # read. --fix analyses train.py in its project too, so it applies the fix check offers.
    [finding] = findings(check("train.py", cwd=project))
    assert finding["fix"] is not None
    done = subprocess.run([sys.executable, "-m", "gradguard", "check", "--fix", "train.py"],
                          cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "out = out + 1\n" in (project / "train.py").read_text("utf-8")
    assert (project / "model.py").read_text("utf-8") == MODEL


LOSS = '''import torch


def loss_of(out):
    probs = torch.sigmoid(out)
    loss = probs.sum()
    probs[:, 0] = 0
    return loss
'''

TRAIN_WITH_LOSS = '''import torch
from loss import loss_of

x = torch.randn(2, 4, requires_grad=True)
loss = loss_of(x * 2)
loss.backward()
'''


@pytest.fixture()
def loss_project(tmp_path: Path) -> Path:
    (tmp_path / "loss.py").write_text(LOSS, "utf-8")
    (tmp_path / "train.py").write_text(TRAIN_WITH_LOSS, "utf-8")
    return tmp_path


def fix(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gradguard", "check", "--fix", "--no-cache",
                           *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.torch
@pytest.mark.slow
def test_fix_on_the_project_fixes_a_hazard_in_an_imported_file_found_from_the_script(
        loss_project: Path) -> None:
    # The write in loss.py overwrites what the sigmoid saved only when something calls
    # loss_of with a tensor that requires grad: train.py does, loss.py alone does not.
    [hazard] = findings(check(".", "--no-cache", cwd=loss_project))
    assert (hazard["path"], hazard["line"], hazard["code"]) == ("./loss.py", 7, "GG001")
    assert hazard["fix"] is not None

    done = fix(".", cwd=loss_project)

    assert done.returncode == 0, done.stdout + done.stderr
    assert (loss_project / "loss.py").read_text("utf-8") != LOSS
    assert (loss_project / "train.py").read_text("utf-8") == TRAIN_WITH_LOSS
    assert findings(check(".", "--no-cache", cwd=loss_project)) == []
    # The fixed project runs backward under torch (the original fails in it).
    pytest.importorskip("torch")
    ran = subprocess.run([sys.executable, "train.py"], cwd=loss_project, capture_output=True,
                         text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr


def test_fix_on_the_imported_file_alone_changes_nothing(loss_project: Path) -> None:
    # Without train.py in the run nothing reaches the write with grad: check reports
    # nothing there, so --fix changes nothing (as the editor's fix-all on that file).
    assert findings(check("loss.py", "--no-cache", cwd=loss_project)) == []

    done = fix("loss.py", cwd=loss_project)

    assert done.returncode == 0, done.stdout + done.stderr
    assert (loss_project / "loss.py").read_text("utf-8") == LOSS


def test_diff_on_the_project_shows_the_fix_in_the_imported_file_and_writes_nothing(
        loss_project: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "gradguard", "check", "--diff", "--no-cache",
                           "."], cwd=loss_project, capture_output=True, text=True, timeout=120)

    assert "+++ b/./loss.py" in done.stdout, done.stdout + done.stderr
    assert "train.py" not in done.stdout
    assert (loss_project / "loss.py").read_text("utf-8") == LOSS


def test_fix_on_the_script_alone_reports_the_imported_files_hazard_and_leaves_it_unwritten(
        loss_project: Path) -> None:
    # Like ruff, a run writes only the files it was given: the hazard check finds from
    # train.py in loss.py is left there, reported, and the run says it found one.
    done = fix("train.py", cwd=loss_project)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "loss.py:7:" in done.stdout and "GG001" in done.stdout
    assert (loss_project / "loss.py").read_text("utf-8") == LOSS
    assert (loss_project / "train.py").read_text("utf-8") == TRAIN_WITH_LOSS
