"""The probe never cries wolf: correct training steps of every torch.nn building block
get no finding.

The cases are the torch.nn part of the probe zoo (``bench/probe_zoo.py``, which adds
torchvision and timm models in a venv of its own): the RNN family (with packed
sequences, dropout, both directions, the GRU and LSTM cells whose ATen kernels write
into chunks of their gate matrix), attention and transformer layers, every norm,
``inplace=True`` activations used correctly, embeddings with ``max_norm`` and
``padding_idx``, functional in-place ops on tensors nothing saved, optimizers and
schedulers, autocast, accumulation, checkpointing. All run in one child, two training
steps each, and must end cleanly with no error or warning.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from gradguard.probe.runner import ProbeResult
from tests.probe.probekit import ROOT, probe_all, torch_installed

pytestmark = [pytest.mark.torch, pytest.mark.slow,
              pytest.mark.skipif(not torch_installed(), reason="the probe runs under torch")]


def load_zoo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("probe_zoo", ROOT / "bench" / "probe_zoo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["probe_zoo"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


ZOO = load_zoo()
NN_CASES = [case.name for case in ZOO.CASES if case.needs == "nn"]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ProbeResult]:
    directory = tmp_path_factory.mktemp("zoo")
    cases = [case for case in ZOO.CASES if case.needs == "nn"]
    paths = ZOO.write_cases(cases, directory)
    targets = {case.name: f"{paths[case.name]}::{ZOO.ENTRY}" for case in cases}
    by_target = probe_all(list(targets.values()), cwd=directory)
    return {name: by_target[target] for name, target in targets.items()}


def test_the_zoo_covers_the_building_blocks_the_issue_names() -> None:
    assert len(ZOO.CASES) >= 60
    for part in ("gru_cell", "lstm_cell", "gru_bidirectional", "lstm_packed", "multihead",
                 "transformer", "scaled_dot_product", "batch_norm", "group_norm", "layer_norm",
                 "instance_norm", "rms_norm", "inplace", "embedding_max_norm",
                 "embedding_padding_idx", "normalize", "index_put", "masked_fill", "autocast",
                 "accumulation", "compile", "checkpoint", "sgd", "adam", "lbfgs"):
        assert any(part in name for name in NN_CASES), part
    assert {case.needs for case in ZOO.CASES} == {"nn", "torchvision", "timm"}


@pytest.mark.parametrize("name", NN_CASES)
def test_a_correct_training_step_runs_to_its_end_with_no_finding(
        results: dict[str, ProbeResult], name: str) -> None:
    result = results[name]
    assert (result.status, result.error) == ("ok", None), result.stderr[-2000:]
    assert result.ran, "the step was not run"
    assert [f["message"] for f in result.findings] == []
