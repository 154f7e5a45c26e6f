"""mmdet 3.3.0, ``TemporalBlock`` of the AFLink model
(mmdet/models/task_modules/tracking/aflink.py): ``bn`` writes each batch norm's result
into the slice of ``x`` it normalised, ``x[:, :, :, k] = self.bn?(x[:, :, :, k])``, and
``forward``'s ``self.relu``, a ``ReLU(inplace=True)``, writes ``x`` again. Each batch
norm keeps its input, a slice of ``x`` (for the weight's gradient, in training and in
eval mode alike), and a slice shares its base's version counter.

Any backward through a TemporalBlock raises, and so through ``AFLinkModel`` (in the eval
mode its forward insists on); with the batch norms given copies of the slices it runs
clean. mmdet's package ``__init__`` needs mmcv's compiled operators, which this file
does not use: the module is loaded from its released file (``installed.released_file``).
See docs/found-in-the-wild.md.
"""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path
from types import ModuleType

import pytest
import torch

from tests.wild.checking import findings, reported
from tests.wild.installed import released_file
from tests.wild.released import backward_fails, fixed, line_of

WRITES = ["x[:, :, :, 0] = self.bnf(x[:, :, :, 0])",
          "x[:, :, :, 1] = self.bnx(x[:, :, :, 1])",
          "x[:, :, :, 2] = self.bny(x[:, :, :, 2])"]
RELU = "x = self.relu(x)"
# The fix: each batch norm keeps a copy of its slice, which no write reaches.
FIXES = [(write, write.replace("])", "].clone())")) for write in WRITES]

# mmengine scripts a few helpers of its own when imported.
pytestmark = [pytest.mark.torch, pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")]


def aflink() -> ModuleType:
    return released_file("mmdet.models.task_modules.tracking.aflink")


def block_sum(module: ModuleType, mode: str) -> torch.Tensor:
    torch.manual_seed(0)
    block = module.TemporalBlock(1, 4)
    block.train(mode == "train")
    # (batch, channels, frames, coordinates): the three coordinates the three norms take.
    return block(torch.randn(2, 1, 10, 3)).sum()


def link_confidence(module: ModuleType) -> torch.Tensor:
    torch.manual_seed(0)
    model = module.AFLinkModel().eval()  # its forward asserts eval mode
    return model(torch.randn(1, 1, 30, 3), torch.randn(1, 1, 30, 3))


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_a_temporal_block_cannot_be_backpropagated(mode: str) -> None:
    message = backward_fails(block_sum(aflink(), mode))
    # The last norm's input: a slice x[:, :, :, 2] of the (2, 4, 4, 3) convolution output.
    assert "[torch.FloatTensor [2, 4, 4]], which is output 0 of AsStrided," in message


def test_the_link_model_cannot_be_backpropagated() -> None:
    backward_fails(link_confidence(aflink()))


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_with_the_norms_on_copies_of_the_slices_a_block_runs_clean(mode: str) -> None:
    module = aflink()
    with fixed(module.TemporalBlock, "bn", *FIXES):
        block_sum(module, mode).backward()
        link_confidence(module).backward()


def test_gradguard_check_reports_the_writes_at_the_released_lines(tmp_path: Path) -> None:
    module = aflink()
    copy = tmp_path.joinpath("mmdet", "models", "task_modules", "tracking", "aflink.py")
    copy.parent.mkdir(parents=True)
    shutil.copy(inspect.getfile(module), copy)
    block = module.TemporalBlock
    writes = [line_of(block, "bn", write) for write in WRITES]
    lines = sorted({line for line, _ in reported(findings(copy), "aflink.py")})
    assert lines == [*writes, line_of(block, "forward", RELU)]
