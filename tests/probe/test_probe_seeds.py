"""The two seed reports under the probe: it names the write and the save, in every form.

Rebuilt from the report, the UNet3+ fails only because the cls branch's
Dropout(inplace=True) overwrites the bottom encoder's output, which the encoder's last
ReLU(inplace=True) saved; the YOLOv5 loss fails because its second slice write bumps
the version of a view that BCEWithLogitsLoss saved. The probe must say exactly that,
whether it runs the script, calls its main(), or builds the model itself (--auto),
and must find nothing in the fixed versions.
"""

from __future__ import annotations

import pytest

from gradguard.probe.runner import ProbeResult
from tests.probe.probekit import (
    EXAMPLES,
    INPLACE_ERROR,
    ROOT,
    line_of,
    lines_of,
    probe_all,
    torch_installed,
)

pytestmark = [pytest.mark.torch, pytest.mark.slow,
              pytest.mark.skipif(not torch_installed(), reason="the probe runs under torch")]

UNET = EXAMPLES / "unet3plus_seed.py"
YOLO = EXAMPLES / "yolov5_loss_seed.py"
# UNet3+ runs as a script and as --auto, YOLOv5 as a script and as main(): each form
# once on each seed (a UNet3+ step is the slowest thing in this suite).
UNET_FORMS = [str(UNET), f"{UNET} --auto"]
YOLO_FORMS = [str(YOLO), f"{YOLO}::main"]
FIXED = [str(EXAMPLES / "fixed" / UNET.name), str(EXAMPLES / "fixed" / YOLO.name)]


@pytest.fixture(scope="module")
def results() -> dict[str, ProbeResult]:
    return probe_all(UNET_FORMS + YOLO_FORMS + FIXED, cwd=ROOT, timeout=300)


@pytest.mark.parametrize("target", UNET_FORMS, ids=["script", "auto"])
def test_unet3plus_names_the_cls_dropout_and_the_encoder_relu_that_saved(
        results: dict[str, ProbeResult], target: str) -> None:
    result = results[target]
    [finding] = result.findings
    assert finding["code"] == "GG001"
    assert finding["source"] == "probe"
    assert finding["path"] == str(UNET)
    assert finding["line"] == line_of(UNET, "nn.Dropout(p=0.5, inplace=True)")
    # The encoder's second ReLU call: its output is the bottom encoder output e5.
    assert finding["related"][0]["line"] == lines_of(UNET, "x = self.relu(x)")[-1]
    assert "`mul_` in `UNet3Plus.cls.0` (Dropout(p=0.5, inplace=True))" in finding["message"]
    assert ("overwrites the output of `relu_` in `UNet3Plus.encoder_5.relu` "
            "(ReLU(inplace=True))") in finding["message"]
    assert "(version 1 -> 2)" in finding["message"]
    # Backward then failed, and the failure is this finding's: no error of its own.
    assert INPLACE_ERROR in finding["torch_error"]
    assert result.error is None


def test_unet3plus_auto_builds_the_model_and_skips_the_blocks_that_need_arguments(
        results: dict[str, ProbeResult]) -> None:
    result = results[f"{UNET} --auto"]
    assert [r["what"] for r in result.ran] == ["UNet3Plus"]
    assert result.ran[0]["detail"].startswith("input (2, 3, 64, 64)")
    skipped = {s["what"]: s["reason"] for s in result.skipped}
    assert skipped == {"Encoder": "needs arguments: in_channels, out_channels",
                       "Decoder": "needs arguments: in_channels, out_channels"}


@pytest.mark.parametrize("target", YOLO_FORMS, ids=["script", "function"])
def test_yolov5_names_the_second_slice_write_and_the_bce_that_saved_a_view(
        results: dict[str, ProbeResult], target: str) -> None:
    result = results[target]
    [finding] = result.findings  # three scales, one write line: one finding
    assert finding["code"] == "GG001"
    assert finding["line"] == line_of(YOLO, "preds[..., 2:4] = ")
    assert (finding["column"], finding["end_column"]) == (9, 24)  # `preds[..., 2:4]`
    assert finding["related"][0]["line"] == line_of(YOLO, "self.BCE_obj(preds[..., 4]")
    assert finding["message"].startswith(
        "`copy_` overwrites the input `self` of `binary_cross_entropy_with_logits` in "
        "`BCEWithLogitsLoss()` (through a view of the same storage)")
    assert INPLACE_ERROR in finding["torch_error"]
    assert "[torch.FloatTensor [2, 3, 20, 20]] is at version 2" in finding["torch_error"]
    # The script's own print is returned apart from the findings.
    assert "million parameters" in result.stdout


@pytest.mark.parametrize("target", FIXED, ids=["unet3plus", "yolov5"])
def test_the_fixed_seeds_run_clean(results: dict[str, ProbeResult], target: str) -> None:
    result = results[target]
    assert (result.findings, result.status, result.error) == ([], "ok", None)
