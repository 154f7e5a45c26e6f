"""Models that use in-place ops safely get no finding, in every form that runs them.

torchvision's ResNet BasicBlock (ReLU(inplace=True) after batch norm, ``out +=
identity``) and timm-style blocks (SiLU/ReLU6/Hardswish(inplace=True), squeeze-excite,
drop path, a transformer MLP with Dropout(inplace=True)) are what a checker flagging
every ``inplace=True`` would drown users in. The twin at the end differs from the timm
block only by a sigmoid before an in-place activation, and must be flagged: proof that
the probe sees inside these models rather than passing them by.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gradguard.probe.runner import ProbeResult
from tests.probe.probekit import INPLACE_ERROR, line_of, probe_all, torch_installed, write

pytestmark = [pytest.mark.torch, pytest.mark.slow,
              pytest.mark.skipif(not torch_installed(), reason="the probe runs under torch")]

MODELS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, 3, stride, 1, bias=False)


class BasicBlock(nn.Module):
    """torchvision.models.resnet.BasicBlock, with defaults so that --auto can build it."""

    expansion = 1

    def __init__(self, inplanes=16, planes=32, stride=2):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = nn.Sequential(
            nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


def drop_path(x, drop_prob=0.0, training=False):
    if drop_prob == 0.0 or not training:
        return x
    keep = 1 - drop_prob
    mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep)
    return x * mask.div_(keep)


class SqueezeExcite(nn.Module):
    def __init__(self, channels=32, reduced=8):
        super().__init__()
        self.conv_reduce = nn.Conv2d(channels, reduced, 1)
        self.act = nn.ReLU(inplace=True)
        self.conv_expand = nn.Conv2d(reduced, channels, 1)

    def forward(self, x):
        se = x.mean((2, 3), keepdim=True)
        se = self.act(self.conv_reduce(se))
        return x * self.conv_expand(se).sigmoid()


class InvertedResidual(nn.Module):
    """timm's MobileNetV3/EfficientNet block: expand, depthwise, squeeze-excite, project."""

    def __init__(self, channels=32, expand=2, drop_path_rate=0.1):
        super().__init__()
        mid = channels * expand
        self.conv_pw = nn.Conv2d(channels, mid, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.act1 = nn.SiLU(inplace=True)
        self.conv_dw = nn.Conv2d(mid, mid, 3, padding=1, groups=mid, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.act2 = nn.Hardswish(inplace=True)
        self.se = SqueezeExcite(mid, 8)
        self.conv_pwl = nn.Conv2d(mid, channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)
        self.act3 = nn.ReLU6(inplace=True)
        self.drop_path_rate = drop_path_rate

    def forward(self, x):
        shortcut = x
        x = self.act1(self.bn1(self.conv_pw(x)))
        x = self.act2(self.bn2(self.conv_dw(x)))
        x = self.se(x)
        x = self.bn3(self.conv_pwl(x))
        x = drop_path(x, self.drop_path_rate, self.training) + shortcut
        return self.act3(x)


class Mlp(nn.Module):
    """timm's transformer MLP: Linear, GELU, Dropout(inplace=True), Linear, LayerNorm."""

    def __init__(self, dim=24, hidden=48):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.drop = nn.Dropout(0.1, inplace=True)
        self.fc2 = nn.Linear(hidden, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return self.norm(x + self.fc2(self.drop(self.act(self.fc1(x)))))


def make_resnet_step():
    model = nn.Sequential(conv3x3(3, 16), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
                          BasicBlock(16, 32), BasicBlock(32, 32, stride=1),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))
    labels = torch.randint(0, 10, (4,))
    return model, torch.randn(4, 3, 32, 32), lambda logits: F.cross_entropy(logits, labels)


def train_timm_blocks():
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), InvertedResidual(),
                          InvertedResidual(drop_path_rate=0.0))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(3):
        loss = model(torch.randn(4, 3, 16, 16)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
'''

TWIN = '''
import torch.nn as nn


class GatedBlock(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 1)
        self.gate = nn.Sigmoid()
        self.clamp = nn.ReLU6(inplace=True)

    def forward(self, x):
        x = self.gate(self.conv(x))
        return self.clamp(x)
'''

SAFE_CLASSES = {"BasicBlock", "SqueezeExcite", "InvertedResidual", "Mlp"}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("safe-models")
    return {"models": write(directory, "models.py", MODELS),
            "twin": write(directory, "twin.py", TWIN)}


@pytest.fixture(scope="module")
def results(files: dict[str, Path]) -> dict[str, ProbeResult]:
    models, twin = files["models"], files["twin"]
    return probe_all([f"{models} --auto", f"{models}::make_resnet_step",
                      f"{models}::train_timm_blocks", f"{models}::BasicBlock",
                      f"{twin} --auto"])


def test_auto_runs_every_safe_block_and_finds_nothing(results: dict[str, ProbeResult],
                                                      files: dict[str, Path]) -> None:
    result = results[f"{files['models']} --auto"]
    assert (result.findings, result.error, result.skipped) == ([], None, [])
    assert {r["what"] for r in result.ran} == SAFE_CLASSES


@pytest.mark.parametrize("name", ["make_resnet_step", "train_timm_blocks", "BasicBlock"])
def test_a_named_entry_point_finds_nothing(results: dict[str, ProbeResult],
                                           files: dict[str, Path], name: str) -> None:
    result = results[f"{files['models']}::{name}"]
    assert (result.findings, result.status, result.error) == ([], "ok", None)
    assert result.ran


def test_the_unsafe_twin_is_flagged(results: dict[str, ProbeResult],
                                    files: dict[str, Path]) -> None:
    [finding] = results[f"{files['twin']} --auto"].findings
    assert finding["code"] == "GG001"
    assert finding["line"] == line_of(files["twin"], "return self.clamp(x)")
    assert finding["related"][0]["line"] == line_of(files["twin"], "x = self.gate(")
    assert "`hardtanh_` in `GatedBlock.clamp` (ReLU6(inplace=True))" in finding["message"]
    assert "the output of `sigmoid` in `GatedBlock.gate` (Sigmoid())" in finding["message"]
    assert INPLACE_ERROR in finding["torch_error"]
