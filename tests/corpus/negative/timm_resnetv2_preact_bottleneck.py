# Mirrors: huggingface/pytorch-image-models, timm/models/resnetv2.py (PreActBottleneck,
#   with BatchNormAct2d: batch norm followed by an in-place ReLU)
# Safe in-place ops: the pre-activation `x_preact = self.norm1(x)` runs its ReLU in place
#   on the batch norm's output (batch norm's backward does not need its output); the
#   shortcut convolution and conv1 then both take x_preact, and nothing writes into it
#   afterwards (compare positive/shortcut_then_preact_residual.py, whose in-place ReLU
#   runs on the block input after the shortcut convolution saved it). One training step.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BatchNormAct2d(nn.BatchNorm2d):
    def __init__(self, num_features):
        super().__init__(num_features)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        x = super().forward(x)
        return self.act(x)


class DownsampleConv(nn.Module):
    def __init__(self, in_chs, out_chs, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(in_chs, out_chs, 1, stride=stride, bias=False)

    def forward(self, x):
        return self.conv(x)


class PreActBottleneck(nn.Module):
    def __init__(self, in_chs, out_chs=None, bottle_ratio=0.25, stride=1):
        super().__init__()
        out_chs = out_chs or in_chs
        mid_chs = int(out_chs * bottle_ratio)
        if in_chs != out_chs or stride != 1:
            self.downsample = DownsampleConv(in_chs, out_chs, stride=stride)
        else:
            self.downsample = None
        self.norm1 = BatchNormAct2d(in_chs)
        self.conv1 = nn.Conv2d(in_chs, mid_chs, 1, bias=False)
        self.norm2 = BatchNormAct2d(mid_chs)
        self.conv2 = nn.Conv2d(mid_chs, mid_chs, 3, stride=stride, padding=1, bias=False)
        self.norm3 = BatchNormAct2d(mid_chs)
        self.conv3 = nn.Conv2d(mid_chs, out_chs, 1, bias=False)

    def forward(self, x):
        x_preact = self.norm1(x)
        shortcut = x
        if self.downsample is not None:
            shortcut = self.downsample(x_preact)
        x = self.conv1(x_preact)
        x = self.conv2(self.norm2(x))
        x = self.conv3(self.norm3(x))
        return x + shortcut


net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), PreActBottleneck(16, 32, stride=2),
                    PreActBottleneck(32), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                    nn.Linear(32, 10))
images = torch.randn(4, 3, 16, 16)
labels = torch.randint(0, 10, (4,))
loss = F.cross_entropy(net(images), labels)
loss.backward()
print("loss", loss.item())
