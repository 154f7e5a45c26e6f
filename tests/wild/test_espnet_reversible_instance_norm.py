"""espnet 202511, ``ReversibleInstanceNorm1dInput.forward``
(espnet2/asr/state_spaces/components.py): ``self.s += 1e-4`` adds to the standard
deviation ``torch.std_mean`` returned, in place, and std_mean's backward needs it.

Whenever the normalised input carries gradients, backward raises; adding out of place it
runs clean. On an input that needs no gradient (raw data) std_mean records nothing and
nothing breaks. See docs/found-in-the-wild.md.
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

SAVING = "self.s, self.m = torch.std_mean(x, dim=-1, unbiased=False, keepdim=True)"
WRITING = "self.s += 1e-4"
FIX = "self.s = self.s + 1e-4"


def components() -> ModuleType:
    return released("espnet2.asr.state_spaces.components")


def normalised_sum(module: ModuleType, transposed: bool = False,
                   requires_grad: bool = True) -> torch.Tensor:
    torch.manual_seed(0)
    norm = module.ReversibleInstanceNorm1dInput(4, transposed=transposed).train()
    # (batch, length, channels), or (batch, channels, length) when transposed.
    x = torch.randn(2, 6, 4, requires_grad=requires_grad)
    return norm(x).sum()


@pytest.mark.parametrize("transposed", [False, True])
def test_normalising_an_input_that_carries_gradients_cannot_be_backpropagated(
        transposed: bool) -> None:
    message = backward_fails(normalised_sum(components(), transposed))
    # The standard deviation over the length: one per sequence and channel.
    shape = "[2, 6, 1]" if transposed else "[2, 4, 1]"
    assert f"[torch.FloatTensor {shape}], which is output 0 of StdMean," in message


def test_on_an_input_without_gradients_std_mean_keeps_nothing() -> None:
    assert not normalised_sum(components(), requires_grad=False).requires_grad


def test_adding_out_of_place_runs_clean() -> None:
    module = components()
    with fixed(module.ReversibleInstanceNorm1dInput, "forward", (WRITING, FIX)):
        normalised_sum(module).backward()


def test_gradguard_check_reports_the_addition_at_the_released_line(tmp_path: Path) -> None:
    module = components()
    copy = tmp_path / "espnet2" / "asr" / "state_spaces" / "components.py"
    copy.parent.mkdir(parents=True)
    shutil.copy(inspect.getfile(module), copy)
    owner = module.ReversibleInstanceNorm1dInput
    found = findings(copy)
    assert reported(found, "components.py") == [(line_of(owner, "forward", WRITING), "GG001")]
    assert found[0]["related"][0]["line"] == line_of(owner, "forward", SAVING)
