# Mirrors: pytorch/vision, torchvision/models/mobilenetv2.py (InvertedResidual, with the
#   Conv2dNormActivation / ConvBNReLU block written out)
# Safe in-place ops: ReLU6(inplace=True) after BatchNorm (hardtanh_ keeps what it needs
#   itself), and the residual `x + self.conv(x)` out of place.
import torch
from torch import nn

torch.manual_seed(0)


class ConvBNReLU(nn.Sequential):
    def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1):
        padding = (kernel_size - 1) // 2
        super().__init__(
            nn.Conv2d(in_planes, out_planes, kernel_size, stride, padding, groups=groups, bias=False),
            nn.BatchNorm2d(out_planes),
            nn.ReLU6(inplace=True),
        )


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        self.stride = stride
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = self.stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            # pw
            layers.append(ConvBNReLU(inp, hidden_dim, kernel_size=1))
        layers.extend([
            # dw
            ConvBNReLU(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),
            # pw-linear
            nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
            nn.BatchNorm2d(oup),
        ])
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        else:
            return self.conv(x)


features = nn.Sequential(ConvBNReLU(3, 8, stride=2), InvertedResidual(8, 8, 1, 1),
                         InvertedResidual(8, 16, 2, 6), InvertedResidual(16, 16, 1, 6),
                         ConvBNReLU(16, 32, kernel_size=1))
classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(32, 10))
x = features(torch.randn(2, 3, 32, 32))
x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
x = torch.flatten(x, 1)
loss = nn.functional.cross_entropy(classifier(x), torch.tensor([1, 5]))
loss.backward()
print("loss", loss.item())
