import torch
import torch.nn as nn

from models.common import Conv

ANCHORS = [
    [(10, 13), (16, 30), (33, 23)],       # P3/8
    [(30, 61), (62, 45), (59, 119)],      # P4/16
    [(116, 90), (156, 198), (373, 326)],  # P5/32
]
STRIDES = [8, 16, 32]


class Detect(nn.Module):
    def __init__(self, nc, anchors, ch):
        super().__init__()
        self.nc = nc
        self.no = nc + 5                  # outputs per anchor: x, y, w, h, obj, classes
        self.nl = len(anchors)            # number of scales
        self.na = len(anchors[0])         # anchors per scale
        self.register_buffer("anchors", torch.tensor(anchors, dtype=torch.float32))
        self.register_buffer("stride", torch.tensor(STRIDES, dtype=torch.float32))
        self.m = nn.ModuleList(nn.Conv2d(c, self.no * self.na, 1) for c in ch)

    def forward(self, x):
        out = []
        for i in range(self.nl):
            p = self.m[i](x[i])
            bs, _, ny, nx = p.shape
            # (bs, na*no, ny, nx) -> (bs, na, ny, nx, no)
            p = p.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            out.append(p)
        return out


class Yolov5(nn.Module):
    WIDTH = {"n": 1, "s": 2, "m": 3, "l": 4}

    def __init__(self, version="n", nc=2):
        super().__init__()
        w = self.WIDTH[version]
        c = [4 * w, 8 * w, 16 * w, 32 * w, 64 * w]
        self.stem = Conv(3, c[0], 3, 2)          # /2
        self.b1 = Conv(c[0], c[1], 3, 2)         # /4
        self.b2 = Conv(c[1], c[2], 3, 2)         # /8  -> P3
        self.b3 = Conv(c[2], c[3], 3, 2)         # /16 -> P4
        self.b4 = Conv(c[3], c[4], 3, 2)         # /32 -> P5
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.lat5 = Conv(c[4], c[3], 1, 1)
        self.n4 = Conv(2 * c[3], c[3], 3, 1)
        self.lat4 = Conv(c[3], c[2], 1, 1)
        self.n3 = Conv(2 * c[2], c[2], 3, 1)
        self.head = Detect(nc, ANCHORS, ch=(c[2], c[3], c[4]))

    def forward(self, x):
        p3 = self.b2(self.b1(self.stem(x)))
        p4 = self.b3(p3)
        p5 = self.b4(p4)
        n4 = self.n4(torch.cat([self.up(self.lat5(p5)), p4], dim=1))
        n3 = self.n3(torch.cat([self.up(self.lat4(n4)), p3], dim=1))
        return self.head([n3, n4, p5])
