"""transformers 5.25.0, the Mamba-2 mixers of bamba, falcon_h1, mamba2 and zamba2:
``mamba2_selective_state_update`` (the torch path of the recurrent form) keeps
``state`` for backward in ``state * dA`` and then writes ``state.copy_(...)``.

Reached by ``mamba2_scan_forward`` when the layer has a recurrent state in its cache and
is given one token: a decoding step with a cache. Run with gradients, its backward
raises; with the product taken on a copy of the state it runs clean.
See docs/found-in-the-wild.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.wild.checking import findings, reported, unpacked
from tests.wild.released import backward_fails, fixed, line_of

pytestmark = [pytest.mark.torch, pytest.mark.slow]

transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()

SAVING = "ssm_states = state * dA + dBx"
WRITING = "state.copy_(ssm_states.to(state.dtype))"
# The fix: the product keeps a copy of the state, which the in-place update cannot reach.
FIX = "ssm_states = state.clone() * dA + dBx"
VOCABULARY = 32


@dataclass(frozen=True)
class Model:
    name: str
    model_class: str
    config: Callable[[], Any]


def _config(name: str, **sizes: Any) -> Callable[[], Any]:
    return lambda: getattr(transformers, name)(vocab_size=VOCABULARY, hidden_size=16, **sizes)


MODELS = [
    Model("bamba", "BambaForCausalLM", _config(
        "BambaConfig", intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, attn_layer_indices=[1], mamba_n_heads=4, mamba_d_head=8,
        mamba_n_groups=1, mamba_d_state=8, mamba_d_conv=4, mamba_expand=2,
        mamba_chunk_size=4)),
    Model("falcon_h1", "FalconH1ForCausalLM", _config(
        "FalconH1Config", intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, mamba_d_ssm=32, mamba_n_heads=4, mamba_d_head=8,
        mamba_n_groups=1, mamba_d_state=8, mamba_d_conv=4, mamba_expand=2,
        mamba_chunk_size=4)),
    Model("mamba2", "Mamba2ForCausalLM", _config(
        "Mamba2Config", num_hidden_layers=1, num_heads=4, head_dim=8, state_size=8,
        n_groups=1, expand=2, conv_kernel=4, chunk_size=4)),
    Model("zamba2", "Zamba2ForCausalLM", _config(
        "Zamba2Config", num_hidden_layers=2, layers_block_type=["mamba", "hybrid"],
        mamba_d_state=8, mamba_d_conv=4, mamba_expand=2, mamba_ngroups=1, n_mamba_heads=4,
        chunk_size=4, num_attention_heads=2, num_key_value_heads=2, intermediate_size=32,
        adapter_rank=4, use_mamba_kernels=False)),
]
IDS = [model.name for model in MODELS]


def modeling(model: Model) -> Any:
    return importlib.import_module(f"transformers.models.{model.name}.modeling_{model.name}")


def decoding_step_loss(model: Model) -> torch.Tensor:
    """A prompt read into the cache without gradients (as ``generate`` does), then one
    token decoded with gradients: the loss of that step."""
    torch.manual_seed(0)
    network = getattr(transformers, model.model_class)(model.config())
    with torch.no_grad():
        prompt = network(torch.randint(0, VOCABULARY, (1, 5)), use_cache=True)
    step = network(torch.randint(0, VOCABULARY, (1, 1)), cache=prompt.past_key_values,
                   use_cache=True)
    return step.logits.sum()


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_a_decoding_step_with_a_cache_cannot_be_backpropagated(model: Model) -> None:
    message = backward_fails(decoding_step_loss(model))
    # The state: (batch, heads, head_dim, state_size).
    assert "[torch.FloatTensor [1, 4, 8, 8]]" in message


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_the_product_taken_on_a_copy_of_the_state_runs_clean(model: Model) -> None:
    with fixed(modeling(model), "mamba2_selective_state_update", (SAVING, FIX)):
        decoding_step_loss(model).backward()


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_gradguard_check_reports_the_write_at_the_released_line(
        model: Model, tmp_path: Path) -> None:
    module = modeling(model)
    write = line_of(module, "mamba2_selective_state_update", WRITING)
    save = line_of(module, "mamba2_selective_state_update", SAVING)
    package = importlib.import_module(f"transformers.models.{model.name}")
    found = findings(unpacked(package, tmp_path) / f"modeling_{model.name}.py")
    assert reported(found, f"modeling_{model.name}.py") == [(write, "GG001")]
    (finding,) = found
    assert finding["related"][0]["line"] == save
