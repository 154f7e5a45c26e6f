# Mirrors: pytorch/vision, torchvision/models/resnet.py (Bottleneck)
# Safe in-place ops: three BatchNorm -> ReLU(inplace=True) pairs, and the residual
#   `out += identity` on bn3's output, with a downsample branch on the input.
import torch
import torch.nn as nn

torch.manual_seed(0)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation,
                     groups=groups, bias=False, dilation=dilation)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)
        out = self.relu(out)

        out = self.conv3(out)
        out = self.bn3(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        out += identity
        out = self.relu(out)

        return out


downsample = nn.Sequential(conv1x1(8, 16, 2), nn.BatchNorm2d(16))
block = Bottleneck(8, 4, stride=2, downsample=downsample)
block2 = Bottleneck(16, 4)
x = torch.randn(2, 8, 16, 16, requires_grad=True)
loss = block2(block(x)).pow(2).mean()
loss.backward()
print("loss", loss.item(), x.grad.shape)
