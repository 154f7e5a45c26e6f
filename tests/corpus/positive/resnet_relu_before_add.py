# Source: https://github.com/pytorch/vision/issues/807
# Report: "Why in-place operation for ReLU is used in models?" The maintainer's answer:
#   the in-place ReLUs of torchvision's ResNet are safe, but if you invert the sum with
#   the relu (as for a pre-activation ResNet), `out = self.relu(out); out += identity`,
#   backward fails with the in-place error: ReLU saved its output, and += overwrites it.
# In-place op: line 48 (`out += identity`).
# Saved by: line 47 (`out = self.relu(out)`: ReLU's backward needs its output).
# Fix: fixed/resnet_relu_before_add.py: the sum written out of place,
#   `out = out + identity` (keeping the swapped order the user wanted).
# Shrunk: torchvision's BasicBlock with 8 channels, two blocks, a linear head.
import torch
import torch.nn as nn

torch.manual_seed(0)


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        out = self.relu(out)  # [saves]
        out += identity  # [inplace]

        return out


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), BasicBlock(8, 8), BasicBlock(8, 8),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
x = torch.randn(2, 3, 16, 16)
loss = nn.functional.cross_entropy(model(x), torch.tensor([1, 2]))
loss.backward()
print("loss", loss.item())
