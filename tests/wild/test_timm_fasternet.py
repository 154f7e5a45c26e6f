"""timm 1.0.31, FasterNet's partial convolution with ``pconv_fw_type='slicing'``
(``Partial_conv3.forward_slicing``): the convolution keeps its input, a slice of ``x``,
and the result is written into that slice, ``x[:, :d] = conv(x[:, :d])``.

The method's comment says "only for inference", but nothing stops a model built with
``pconv_fw_type='slicing'`` from being trained: its backward raises. timm imports
torchvision, whose compiled operators do not load beside the CPU torch wheel: FasterNet
uses none of them, and ``installed`` lets torchvision import without them. See
docs/found-in-the-wild.md.
"""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path
from types import ModuleType

import pytest
import torch

from tests.wild.checking import findings, reported
from tests.wild.installed import released
from tests.wild.released import backward_fails, fixed, line_of

pytestmark = [pytest.mark.torch, pytest.mark.slow]

SAVING_AND_WRITING = "x[:, :self.dim_conv3, :, :] = self.partial_conv3(x[:, :self.dim_conv3, :, :])"
# The fix: the convolution keeps a copy of the slice, which the write cannot reach.
FIX = "x[:, :self.dim_conv3, :, :] = self.partial_conv3(x[:, :self.dim_conv3, :, :].clone())"


def fasternet() -> ModuleType:
    return released("timm.models.fasternet")


def training_loss(module: ModuleType, pconv_fw_type: str) -> torch.Tensor:
    torch.manual_seed(0)
    model = module.FasterNet(num_classes=4, embed_dim=8, depths=(1, 1), feature_dim=16,
                             pconv_fw_type=pconv_fw_type)
    return model(torch.randn(2, 3, 32, 32)).sum()


def test_training_the_slicing_form_cannot_be_backpropagated() -> None:
    message = backward_fails(training_loss(fasternet(), "slicing"))
    # Backward meets the last stage first: its convolution's input is a quarter of its
    # 16 channels at 4x4, a slice of x.
    assert "[torch.FloatTensor [2, 4, 4, 4]], which is output 0 of AsStrided," in message


def test_the_split_cat_form_trains() -> None:
    training_loss(fasternet(), "split_cat").backward()


def test_the_slicing_form_with_the_convolution_on_a_copy_trains() -> None:
    module = fasternet()
    with fixed(module.Partial_conv3, "forward_slicing", (SAVING_AND_WRITING, FIX)):
        training_loss(module, "slicing").backward()


def test_gradguard_check_reports_the_write_at_the_released_line(tmp_path: Path) -> None:
    module = fasternet()
    copy = tmp_path / "timm" / "models" / "fasternet.py"
    copy.parent.mkdir(parents=True)
    shutil.copy(inspect.getfile(module), copy)
    line = line_of(module.Partial_conv3, "forward_slicing", SAVING_AND_WRITING)
    assert reported(findings(copy), "fasternet.py") == [(line, "GG001")]
