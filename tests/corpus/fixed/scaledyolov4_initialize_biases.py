# Fixed version of positive/scaledyolov4_initialize_biases.py.
# Source: https://github.com/WongKinYiu/ScaledYOLOv4/issues/191
# Fix (the maintainer's answer, confirmed by the reporter): write the prior biases through
#   `.data`, which autograd does not track (nothing has used the biases yet).
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    def __init__(self, nc=80, anchors=(), ch=()):
        super().__init__()
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        return [self.m[i](x[i]) for i in range(self.nl)]


class Model(nn.Module):
    def __init__(self, nc=3):
        super().__init__()
        self.model = nn.Sequential(Detect(nc, ([10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119]), (8, 16)))
        self.model[-1].stride = torch.tensor([8., 16.])
        self._initialize_biases()  # only run once

    def forward(self, x):
        return self.model(x)

    def _initialize_biases(self, cf=None):
        m = self.model[-1]  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b[:, 4].data += math.log(8 / (640 / s) ** 2)  # [fix]
            b[:, 5:].data += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


model = Model()
out = model([torch.randn(1, 8, 8, 8), torch.randn(1, 16, 4, 4)])
sum(o.mean() for o in out).backward()
print([o.shape for o in out])
