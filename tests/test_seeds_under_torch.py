"""The two seed cases, as torch itself judges them.

Each example script runs one training step in a subprocess with this interpreter.
The originals in examples/ must fail in loss.backward() with autograd's in-place
error; the fixed versions in examples/fixed/ must run backward and exit 0. These are
the ground truth that GradGuard's findings on the same files are held to.
"""

import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.torch, pytest.mark.slow]

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
FIXED = EXAMPLES / "fixed"

INPLACE_ERROR = (
    "one of the variables needed for gradient computation has been modified by an inplace operation"
)

CLS_DROPOUT = "nn.Dropout(p=0.5, inplace=True)"
CLS_DROPOUT_FIXED = "nn.Dropout(p=0.5)"
RELU_INPLACE = "nn.ReLU(inplace=True)"


@functools.cache  # each script runs once per session, however many tests read it
def run(script: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


def code_without_docstring(source: str) -> str:
    """The module's code, docstring dropped, as a canonical AST dump."""
    tree = ast.parse(source)
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return ast.dump(ast.Module(body=body, type_ignores=[]))


def line_of(source: str, text: str) -> int:
    """1-based number of the only line of code (not docstring) containing `text`."""
    first = ast.parse(source).body[0]
    code_from = first.end_lineno + 1 if isinstance(first, ast.Expr) else 1
    numbered = enumerate(source.splitlines(), 1)
    lines = [n for n, line in numbered if n >= code_from and text in line]
    assert len(lines) == 1, f"{text!r} on lines {lines}"
    return lines[0]


# --- UNet3+ -----------------------------------------------------------------------


def test_unet3plus_seed_fails_in_backward_with_the_inplace_error():
    proc = run(EXAMPLES / "unet3plus_seed.py")
    assert proc.returncode != 0
    assert INPLACE_ERROR in proc.stderr
    # the clobbered tensor is the bottom encoder's output, saved by its ReLU
    assert "which is output 0 of Relu" in proc.stderr
    assert "loss.backward()" in proc.stderr


def test_unet3plus_fixed_runs_backward():
    proc = run(FIXED / "unet3plus_seed.py")
    assert proc.returncode == 0, proc.stderr
    assert "backward ran" in proc.stdout


def test_unet3plus_fixed_differs_from_the_seed_only_in_the_cls_dropout():
    seed = (EXAMPLES / "unet3plus_seed.py").read_text()
    fixed = (FIXED / "unet3plus_seed.py").read_text()
    assert seed.count(CLS_DROPOUT) == 1
    assert code_without_docstring(seed.replace(CLS_DROPOUT, CLS_DROPOUT_FIXED)) == (
        code_without_docstring(fixed)
    )
    # and at the same line, so findings can be compared line by line
    assert line_of(seed, CLS_DROPOUT) == line_of(fixed, CLS_DROPOUT_FIXED)


def test_removing_only_the_cls_dropout_inplace_fixes_unet3plus(tmp_path):
    seed = (EXAMPLES / "unet3plus_seed.py").read_text()
    edited = seed.replace(CLS_DROPOUT, CLS_DROPOUT_FIXED)
    # the Encoder's and Decoder's ReLU(inplace=True) stay
    assert edited.count(RELU_INPLACE) == seed.count(RELU_INPLACE) == 2
    script = tmp_path / "unet3plus_cls_dropout_out_of_place.py"
    script.write_text(edited)
    proc = run(script)
    assert proc.returncode == 0, proc.stderr


def test_removing_every_relu_inplace_does_not_fix_unet3plus(tmp_path):
    # The accepted answer's ReLU edits are not what fixed it: with every ReLU out of
    # place, the in-place dropout still overwrites the ReLU output saved for backward.
    seed = (EXAMPLES / "unet3plus_seed.py").read_text()
    edited = seed.replace(RELU_INPLACE, "nn.ReLU()")
    assert RELU_INPLACE not in edited and CLS_DROPOUT in edited
    script = tmp_path / "unet3plus_relu_out_of_place.py"
    script.write_text(edited)
    proc = run(script)
    assert proc.returncode != 0
    assert INPLACE_ERROR in proc.stderr
    assert "which is output 0 of Relu" in proc.stderr


# --- YOLOv5 loss ------------------------------------------------------------------


def test_yolov5_seed_raises_the_reports_error():
    proc = run(EXAMPLES / "yolov5_loss_seed.py")
    assert proc.returncode != 0
    assert INPLACE_ERROR in proc.stderr
    # the report's tensor: bs=2, 3 anchors, the 20x20 grid, one write too many
    assert re.search(
        r"\[torch\.FloatTensor \[2, 3, 20, 20\]\].* is at version 2; expected version 1 instead",
        proc.stderr,
    ), proc.stderr
    assert "loss.backward()" in proc.stderr


def test_yolov5_anomaly_mode_names_the_saver_not_the_write():
    # The report ran with set_detect_anomaly(True). Its traceback points at the forward
    # op whose backward failed (the objectness BCE), never at the slice write that
    # broke it: that second line is what GradGuard adds.
    source = (EXAMPLES / "yolov5_loss_seed.py").read_text()
    bce = line_of(source, "l_obj = self.BCE_obj(preds[..., 4], targets[..., 0])")
    write = line_of(source, "preds[..., 2:4] = ")
    proc = run(EXAMPLES / "yolov5_loss_seed.py")
    assert "Error detected in BinaryCrossEntropyWithLogitsBackward0" in proc.stderr
    assert f"line {bce}, in compute_loss" in proc.stderr
    assert f"line {write}, in compute_loss" not in proc.stderr


def test_yolov5_fixed_runs_backward():
    proc = run(FIXED / "yolov5_loss_seed.py")
    assert proc.returncode == 0, proc.stderr
    assert "Epoch 1/1 | Loss:" in proc.stdout


def test_yolov5_fixed_adds_one_clone_before_the_second_write():
    seed = (EXAMPLES / "yolov5_loss_seed.py").read_text().splitlines()
    fixed = (FIXED / "yolov5_loss_seed.py").read_text().splitlines()
    code_start = seed.index('"""', 1) + 1
    fixed_start = fixed.index('"""', 1) + 1
    assert code_start == fixed_start
    seed_code, fixed_code = seed[code_start:], fixed[fixed_start:]
    added = [line for line in fixed_code if line not in seed_code]
    assert [line.split("#")[0].strip() for line in added] == ["preds = preds.clone()"]
    at = fixed_code.index(added[0])
    assert "self.BCE_obj(preds[..., 4]" in fixed_code[at - 1]
    assert fixed_code[at + 1].strip().startswith("preds[..., 2:4] = ")
    assert fixed_code[:at] + fixed_code[at + 1 :] == seed_code
