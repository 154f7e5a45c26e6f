# Mirrors: huggingface/pytorch-image-models, timm/models/mobilenetv3.py (conv_stem -> bn1
#   with a Hardswish created inplace=True; a squeeze-excite gate with ReLU(inplace=True)
#   after its reduce conv and hard_sigmoid on its expand conv)
# Safe in-place ops: hardswish_ keeps a copy of its input; ReLU(inplace=True) follows a
#   convolution; the SE gate multiplies out of place.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SqueezeExcite(nn.Module):
    def __init__(self, in_chs, rd_ratio=0.25):
        super().__init__()
        rd_channels = max(1, int(in_chs * rd_ratio))
        self.conv_reduce = nn.Conv2d(in_chs, rd_channels, 1, bias=True)
        self.act1 = nn.ReLU(inplace=True)
        self.conv_expand = nn.Conv2d(rd_channels, in_chs, 1, bias=True)
        self.gate = nn.Hardsigmoid()

    def forward(self, x):
        x_se = x.mean((2, 3), keepdim=True)
        x_se = self.conv_reduce(x_se)
        x_se = self.act1(x_se)
        x_se = self.conv_expand(x_se)
        return x * self.gate(x_se)


class MobileNetV3Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_stem = nn.Conv2d(3, 16, 3, 2, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.act1 = nn.Hardswish(inplace=True)
        self.conv_dw = nn.Conv2d(16, 16, 3, 1, 1, groups=16, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.act2 = nn.Hardswish(inplace=True)
        self.se = SqueezeExcite(16)
        self.conv_pw = nn.Conv2d(16, 16, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(16)

    def forward(self, x):
        x = self.conv_stem(x)
        x = self.bn1(x)
        x = self.act1(x)
        shortcut = x
        x = self.act2(self.bn2(self.conv_dw(x)))
        x = self.se(x)
        x = self.bn3(self.conv_pw(x))
        return x + shortcut


model = MobileNetV3Stem()
out = model(torch.randn(2, 3, 32, 32))
loss = F.adaptive_avg_pool2d(out, 1).flatten(1).pow(2).mean()
loss.backward()
print("loss", loss.item())
