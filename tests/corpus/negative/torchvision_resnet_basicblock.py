# Mirrors: pytorch/vision, torchvision/models/resnet.py (BasicBlock)
# Safe in-place ops: ReLU(inplace=True) after each BatchNorm (batch norm's backward does
#   not need its output), and `out += identity` on bn2's output before the final ReLU
#   (nothing saved bn2's output). One training step of a two-block ResNet.
import torch
import torch.nn as nn

torch.manual_seed(0)


def conv3x3(in_planes, out_planes, stride=1):
    """3x3 convolution with padding"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


def conv1x1(in_planes, out_planes, stride=1):
    """1x1 convolution"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


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

        out += identity
        out = self.relu(out)

        return out


stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
downsample = nn.Sequential(conv1x1(8, 16, 2), nn.BatchNorm2d(16))
model = nn.Sequential(stem, BasicBlock(8, 8), BasicBlock(8, 16, 2, downsample),
                      nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(16, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loss = nn.functional.cross_entropy(model(torch.randn(4, 3, 16, 16)), torch.tensor([0, 1, 2, 3]))
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("loss", loss.item())
