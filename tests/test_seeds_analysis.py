"""The two seed reports: GradGuard flags the line whose removal makes backward work.

tests/test_seeds_under_torch.py shows under torch which line that is; here the static
analysis must point at exactly it, and name the op whose saved tensor it overwrites.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gradguard.analysis.analyze import analyze_source

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def line_of(path: Path, text: str) -> int:
    [number] = [n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    return number


def test_unet3plus_flags_the_cls_dropout_and_names_the_encoder_relu() -> None:
    path = EXAMPLES / "unet3plus_seed.py"
    [hazard] = analyze_source(path.read_text())
    assert hazard.code == "GG001"
    assert hazard.severity == "error"
    assert hazard.span.line == line_of(path, "nn.Dropout(p=0.5, inplace=True)")
    # The encoder's second ReLU: its output is the bottom encoder output e5.
    relu_lines = [n for n, line in enumerate(path.read_text().splitlines(), 1)
                  if line.strip() == "x = self.relu(x)"]
    assert hazard.related[0].span.line == relu_lines[-1]
    assert "overwrites the output of `self.relu` (ReLU, inplace=True)" in hazard.message


def test_yolov5_flags_the_second_slice_write_and_names_the_bce_that_saved_a_view() -> None:
    path = EXAMPLES / "yolov5_loss_seed.py"
    [hazard] = analyze_source(path.read_text())
    assert hazard.code == "GG001"
    assert hazard.span.line == line_of(path, "preds[..., 2:4] = ")
    assert hazard.related[0].span.line == line_of(path, "self.BCE_obj(preds[..., 4]")
    assert "`self.BCE_obj`" in hazard.message


@pytest.mark.parametrize("name", ["unet3plus_seed.py", "yolov5_loss_seed.py"])
def test_the_fixed_seeds_are_clean(name: str) -> None:
    assert analyze_source((EXAMPLES / "fixed" / name).read_text()) == []


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.parametrize("name", ["unet3plus_seed.py", "yolov5_loss_seed.py"])
def test_removing_the_flagged_line_makes_the_seed_run(name: str, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    path = EXAMPLES / name
    [hazard] = analyze_source(path.read_text())
    lines = path.read_text().splitlines(keepends=True)
    del lines[hazard.span.line - 1]
    script = tmp_path / "without_flagged_line.py"
    script.write_text("".join(lines))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
