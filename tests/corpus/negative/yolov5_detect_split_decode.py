# Mirrors: ultralytics/yolov5, models/yolo.py (Detect.forward since v7.0: the inference path
#   splits the sigmoid's output into xy, wh and conf and concatenates the decoded parts) used
#   with gradients through the detections, as adversarial-patch and CAM tools do.
# Safe in-place ops: the only in-place writes are `x[i] = ...` rebinding list slots; the
#   sigmoid's output, which its backward needs, is only read.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = torch.tensor([8.0, 16.0])

    def __init__(self, nc=3, anchors=((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119)),
                 ch=(8, 16)):
        super().__init__()
        self.nc, self.no = nc, nc + 5
        self.nl, self.na = len(anchors), len(anchors[0]) // 2
        self.grid = [torch.empty(0) for _ in range(self.nl)]
        self.anchor_grid = [torch.empty(0) for _ in range(self.nl)]
        self.register_buffer("anchors", torch.tensor(anchors).float().view(self.nl, -1, 2))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:
                if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i], self.anchor_grid[i] = self._make_grid(nx, ny, i)
                xy, wh, conf = x[i].sigmoid().split((2, 2, self.nc + 1), 4)
                xy = (xy * 2 + self.grid[i]) * self.stride[i]
                wh = (wh * 2) ** 2 * self.anchor_grid[i]
                y = torch.cat((xy, wh, conf), 4)
                z.append(y.view(bs, self.na * nx * ny, self.no))
        return x if self.training else (torch.cat(z, 1), x)

    def _make_grid(self, nx=20, ny=20, i=0):
        shape = 1, self.na, ny, nx, 2
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
        grid = torch.stack((xv, yv), 2).expand(shape).float() - 0.5
        anchor_grid = (self.anchors[i] * self.stride[i]).view((1, self.na, 1, 1, 2)).expand(shape)
        return grid, anchor_grid


backbone3 = nn.Sequential(nn.Conv2d(3, 8, 3, 8, 1), nn.SiLU())
backbone4 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.SiLU())
detect = Detect().eval()
image = torch.rand(1, 3, 64, 64, requires_grad=True)
f3 = backbone3(image)
pred = detect([f3, backbone4(f3)])[0]
pred[..., 4].max().backward()
print("image grad", image.grad.abs().sum().item())
