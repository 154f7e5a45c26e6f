# Source: https://github.com/lzx1413/PytorchSSD/issues/72
# Report: train_test.py fails in loss.backward() with the in-place error. Solved by the
#   reporter in layers/modules/l2norm.py: `x /= norm` ----> `x = x / norm` (a later
#   comment: `x = torch.div(x, norm)` is also okay).
# In-place op: line 31 (`x /= norm`).
# Saved by: line 30 (`x.pow(2)` saves x; so does the conv4_3 ReLU before L2Norm).
# Fix: fixed/ssd_l2norm.py: `x = x / norm`.
# Shrunk: a 4-conv VGG-like base, L2Norm on the conv4_3-like source, 2 sources, no
#   multibox heads (a mean over the sources stands in for the loss).
import torch
import torch.nn as nn
import torch.nn.init as init

torch.manual_seed(0)


class L2Norm(nn.Module):
    def __init__(self, n_channels, scale):
        super().__init__()
        self.n_channels = n_channels
        self.gamma = scale or None
        self.eps = 1e-10
        self.weight = nn.Parameter(torch.Tensor(self.n_channels))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.gamma)

    def forward(self, x):
        norm = x.pow(2).sum(dim=1, keepdim=True).sqrt() + self.eps  # [saves]
        x /= norm  # [inplace]
        out = self.weight.unsqueeze(0).unsqueeze(2).unsqueeze(3).expand_as(x) * x
        return out


def vgg(cfg, i):
    layers = []
    in_channels = i
    for v in cfg:
        if v == 'M':
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            layers += [nn.Conv2d(in_channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            in_channels = v
    return layers


class SSD(nn.Module):
    def __init__(self):
        super().__init__()
        self.vgg = nn.ModuleList(vgg([8, 'M', 16, 16, 'M', 32], 3))
        self.L2Norm = L2Norm(16, 20)

    def forward(self, x):
        sources = []
        for k in range(7):
            x = self.vgg[k](x)
        s = self.L2Norm(x)
        sources.append(s)
        for k in range(7, len(self.vgg)):
            x = self.vgg[k](x)
        sources.append(x)
        return sources


net = SSD()
sources = net(torch.randn(2, 3, 32, 32))
loss = sum(s.mean() for s in sources)
loss.backward()
print("loss", loss.item())
