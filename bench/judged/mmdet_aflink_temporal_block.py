"""mmdet 3.3.0, mmdet/models/task_modules/tracking/aflink.py:37-39 and 45 (GG001: in
``TemporalBlock.bn``, ``x[:, :, :, k] = self.bn?(x[:, :, :, k])`` writes into ``x`` the
slices its batch norms saved, and ``forward``'s ``self.relu``, a ``ReLU(inplace=True)``,
writes ``x`` again).

Judged true. In training mode ``BatchNorm1d`` saves its input, here a view of ``x``;
each slice assignment bumps ``x``'s version (which its views share), and so does the
in-place ReLU: ``loss.backward()`` raises. The released module is built from its own
file: mmdet's package ``__init__`` requires mmcv's compiled ops, which the file does not
use, so only ``mmdet.registry`` (mmengine) is imported beside it.
"""

import importlib.util
import sys
import types
from pathlib import Path

import torch
from judge import judge


def temporal_block() -> type:
    spec = importlib.util.find_spec("mmdet")
    assert spec is not None and spec.submodule_search_locations
    root = Path(next(iter(spec.submodule_search_locations)))
    package = types.ModuleType("mmdet")
    package.__path__ = [str(root)]
    sys.modules["mmdet"] = package
    path = root / "models" / "task_modules" / "tracking" / "aflink.py"
    loaded = importlib.util.spec_from_file_location("aflink", path)
    assert loaded is not None and loaded.loader is not None
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    return module.TemporalBlock


def training() -> None:
    block = temporal_block()(2, 4).train()
    x = torch.randn(2, 2, 10, 3, requires_grad=True)
    block(x).sum().backward()


judge(training=training)
