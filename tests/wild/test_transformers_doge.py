"""transformers 5.25.0, Doge's mixture of experts (``DogeCDMoE.forward``): with
``norm_topk_prob=True`` it divides the softmax's output in place,
``routing_weights /= routing_weights.sum(...)``, and softmax's backward needs that output.

Any training step of a Doge MoE model with ``norm_topk_prob=True`` raises at backward;
divided out of place it runs clean. The same lines are in modular_doge.py, from which
modeling_doge.py is generated. See docs/found-in-the-wild.md.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import torch

from tests.wild.checking import findings, reported, unpacked
from tests.wild.released import backward_fails, fixed, line_of

transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()

from transformers.models.doge import modeling_doge  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.slow]

SAVING = "routing_weights = F.softmax(scores, dim=-1)"
WRITING = "routing_weights /= routing_weights.sum(dim=-1, keepdim=True)"
FIX = "routing_weights = routing_weights / routing_weights.sum(dim=-1, keepdim=True)"
VOCABULARY = 32


def training_loss(norm_topk_prob: bool) -> torch.Tensor:
    torch.manual_seed(0)
    config = transformers.DogeConfig(
        vocab_size=VOCABULARY, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, is_moe=True, num_experts=16,
        num_experts_per_tok=4, norm_topk_prob=norm_topk_prob)
    model = transformers.DogeForCausalLM(config)
    tokens = torch.randint(0, VOCABULARY, (2, 6))
    return model(tokens, labels=tokens).loss


def test_a_training_step_with_normalised_top_k_weights_cannot_be_backpropagated() -> None:
    message = backward_fails(training_loss(norm_topk_prob=True))
    # The routing weights: (tokens, experts per token), softmax's output.
    assert "[torch.FloatTensor [12, 4]], which is output 0 of Softmax," in message


def test_without_normalising_nothing_is_written_and_backward_runs() -> None:
    training_loss(norm_topk_prob=False).backward()


def test_dividing_out_of_place_runs_clean() -> None:
    with fixed(modeling_doge.DogeCDMoE, "forward", (WRITING, FIX)):
        training_loss(norm_topk_prob=True).backward()


@pytest.mark.parametrize("file_name", ["modeling_doge.py", "modular_doge.py"])
def test_gradguard_check_reports_the_division_at_the_released_line(
        file_name: str, tmp_path: Path) -> None:
    module = importlib.import_module(f"transformers.models.doge.{file_name[:-3]}")
    owner = module.DogeCDMoE
    write, save = line_of(owner, "forward", WRITING), line_of(owner, "forward", SAVING)
    package = importlib.import_module("transformers.models.doge")
    found = findings(unpacked(package, tmp_path) / file_name)
    assert reported(found, file_name) == [(write, "GG001")]
    assert found[0]["related"][0]["line"] == save


def test_gradguard_check_reports_the_division_where_transformers_is_installed() -> None:
    found = findings(Path(modeling_doge.__file__))
    assert reported(found, "modeling_doge.py") == \
        [(line_of(modeling_doge.DogeCDMoE, "forward", WRITING), "GG001")]
