# Mirrors: ultralytics/yolov5, models/yolo.py (Detect.forward of the v6 releases, inference
#   branch with inplace=True: `y = x[i].sigmoid()`, `y[..., 0:2] = (y[..., 0:2] * 2 + self.grid[i])
#   * self.stride[i]`) run as in detect.py / val.py, under torch.no_grad()
# Safe in-place ops: the writes into the sigmoid output happen with grad disabled, so
#   nothing is saved for a backward (compare positive/yolov7_detect_tta.py, the same
#   decoding with grad enabled).
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = None  # strides computed during build

    def __init__(self, nc=80, anchors=(), ch=(), inplace=True):
        super().__init__()
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        self.grid = [torch.empty(0) for _ in range(self.nl)]  # init grid
        self.anchor_grid = [torch.empty(0) for _ in range(self.nl)]  # init anchor grid
        self.register_buffer('anchors', torch.tensor(anchors).float().view(self.nl, -1, 2))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv
        self.inplace = inplace  # use inplace ops (e.g. slice assignment)

    def forward(self, x):
        z = []  # inference output
        for i in range(self.nl):
            x[i] = self.m[i](x[i])  # conv
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:  # inference
                if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i], self.anchor_grid[i] = self._make_grid(nx, ny, i)
                y = x[i].sigmoid()
                if self.inplace:
                    y[..., 0:2] = (y[..., 0:2] * 2 + self.grid[i]) * self.stride[i]  # xy
                    y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]  # wh
                z.append(y.view(bs, self.na * nx * ny, self.no))
        return x if self.training else (torch.cat(z, 1), x)

    def _make_grid(self, nx=20, ny=20, i=0):
        shape = 1, self.na, ny, nx, 2  # grid shape
        y, x = torch.arange(ny), torch.arange(nx)
        yv, xv = torch.meshgrid(y, x, indexing='ij')
        grid = torch.stack((xv, yv), 2).expand(shape).float() - 0.5  # add grid offset, i.e. y = 2.0 * x - 0.5
        anchor_grid = (self.anchors[i] * self.stride[i]).view((1, self.na, 1, 1, 2)).expand(shape)
        return grid, anchor_grid


detect = Detect(nc=2, anchors=([10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119]), ch=(8, 16))
detect.stride = torch.tensor([8., 16.])
detect.eval()
with torch.no_grad():
    pred, _ = detect([torch.randn(1, 8, 8, 8), torch.randn(1, 16, 4, 4)])
print(pred.shape, pred.requires_grad)
