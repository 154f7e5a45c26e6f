"""torchgeo 0.8.1, ``LTAE`` (torchgeo/models/ltae.py): ``forward`` applies
``self.dropout``, a ``Dropout(inplace=True)``, to the output of ``self.mlp``, which ends
with a ``ReLU(inplace=True)``; ReLU's backward needs its output, and dropout multiplies
it in place by its mask.

Every training step with dropout (the default is 0.2) raises at backward; in eval mode,
without dropout, and with a dropout that is not in place it runs clean.
``torchgeo.models``'s ``__init__`` imports every model's dependencies (timm,
segmentation_models_pytorch...), which ltae.py does not use: the module is loaded from its
released file (``installed.released_file``). See docs/found-in-the-wild.md.
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

pytestmark = [pytest.mark.torch, pytest.mark.slow]

SAVING = "activation = nn.ReLU(inplace=True)"
WRITING = "output: Tensor = self.outlayernorm(self.dropout(self.mlp(mlp_input)))"
BUILDING = "self.dropout = nn.Dropout(dropout, inplace=True)"
FIX = "self.dropout = nn.Dropout(dropout)"


def ltae() -> ModuleType:
    return released_file("torchgeo.models.ltae")


def output_sum(module: ModuleType, training: bool = True,
               dropout: float = 0.2) -> torch.Tensor:
    torch.manual_seed(0)
    model = module.LTAE(in_channels=8, n_head=2, d_k=4, n_neurons=(16, 8), dropout=dropout,
                        d_model=16, len_max_seq=6)
    model.train(training)
    # (batch, sequence, channels)
    return model(torch.randn(2, 6, 8)).sum()


def test_a_training_step_with_dropout_cannot_be_backpropagated() -> None:
    message = backward_fails(output_sum(ltae()))
    # The MLP's last ReLU output: (batch, n_neurons[-1]).
    assert "[torch.FloatTensor [2, 8]], which is output 0 of Relu," in message


def test_in_eval_mode_dropout_writes_nothing_and_backward_runs() -> None:
    output_sum(ltae(), training=False).backward()


def test_a_dropout_that_is_not_in_place_trains() -> None:
    module = ltae()
    with fixed(module.LTAE, "__init__", (BUILDING, FIX)):
        output_sum(module).backward()


def test_gradguard_check_reports_the_dropout_at_the_released_line(tmp_path: Path) -> None:
    module = ltae()
    copy = tmp_path / "torchgeo" / "models" / "ltae.py"
    copy.parent.mkdir(parents=True)
    shutil.copy(inspect.getfile(module), copy)
    found = findings(copy)
    assert reported(found, "ltae.py") == [(line_of(module.LTAE, "forward", WRITING), "GG001")]
    assert found[0]["related"][0]["line"] == line_of(module.LTAE, "__init__", SAVING)
