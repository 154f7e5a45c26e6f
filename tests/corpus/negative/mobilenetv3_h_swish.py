# Mirrors: d-li14/mobilenetv3.pytorch, mobilenetv3.py (h_sigmoid with
#   nn.ReLU6(inplace=True) applied to `x + 3`, h_swish = x * h_sigmoid(x), SELayer)
# Safe in-place ops: ReLU6(inplace=True) writes into the fresh `x + 3` tensor, and
#   hardtanh_ keeps what its backward needs; h_swish multiplies out of place.
import torch
import torch.nn as nn

torch.manual_seed(0)


class h_sigmoid(nn.Module):
    def __init__(self, inplace=True):
        super().__init__()
        self.relu = nn.ReLU6(inplace=inplace)

    def forward(self, x):
        return self.relu(x + 3) / 6


class h_swish(nn.Module):
    def __init__(self, inplace=True):
        super().__init__()
        self.sigmoid = h_sigmoid(inplace=inplace)

    def forward(self, x):
        return x * self.sigmoid(x)


class SELayer(nn.Module):
    def __init__(self, channel, reduction=4):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(
            nn.Linear(channel, channel // reduction),
            nn.ReLU(inplace=True),
            nn.Linear(channel // reduction, channel),
            h_sigmoid()
        )

    def forward(self, x):
        b, c, _, _ = x.size()
        y = self.avg_pool(x).view(b, c)
        y = self.fc(y).view(b, c, 1, 1)
        return x * y


def conv_3x3_bn(inp, oup, stride):
    return nn.Sequential(
        nn.Conv2d(inp, oup, 3, stride, 1, bias=False),
        nn.BatchNorm2d(oup),
        h_swish()
    )


model = nn.Sequential(conv_3x3_bn(3, 16, 2), SELayer(16), conv_3x3_bn(16, 16, 1),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5))
loss = nn.functional.cross_entropy(model(torch.randn(2, 3, 32, 32)), torch.tensor([0, 4]))
loss.backward()
print("loss", loss.item())
