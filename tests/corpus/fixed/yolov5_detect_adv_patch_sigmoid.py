# Fixed version of positive/yolov5_detect_adv_patch_sigmoid.py.
# Source: https://github.com/ultralytics/yolov5/issues/671 (the maintainer's "update your
#   code": later versions of Detect decode out of place).
# Fix: the sigmoid's output is split and the decoded parts are concatenated into a new
#   tensor; nothing writes into the output sigmoid's backward needs.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = torch.tensor([8.0, 16.0])

    def __init__(self, nc=5, anchors=((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119)),
                 ch=(8, 16)):
        super().__init__()
        self.nc, self.no = nc, nc + 5
        self.nl, self.na = len(anchors), len(anchors[0]) // 2
        self.grid = [torch.zeros(1)] * self.nl
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer("anchor_grid", a.clone().view(self.nl, 1, -1, 1, 1, 2))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:
                if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i] = self._make_grid(nx, ny)
                xy, wh, conf = x[i].sigmoid().split((2, 2, self.nc + 1), 4)  # [fix]
                xy = (xy * 2. - 0.5 + self.grid[i]) * self.stride[i]
                wh = (wh * 2) ** 2 * self.anchor_grid[i]
                y = torch.cat((xy, wh, conf), 4)
                z.append(y.view(bs, -1, self.no))
        return x if self.training else (torch.cat(z, 1), x)

    @staticmethod
    def _make_grid(nx=20, ny=20):
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
        return torch.stack((xv, yv), 2).view((1, 1, ny, nx, 2)).float()


class TinyYolo(nn.Module):
    def __init__(self):
        super().__init__()
        self.p3 = nn.Sequential(nn.Conv2d(3, 8, 3, 8, 1), nn.SiLU())
        self.p4 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.SiLU())
        self.detect = Detect()

    def forward(self, img):
        f3 = self.p3(img)
        return self.detect([f3, self.p4(f3)])


model = TinyYolo().eval()
for p in model.parameters():
    p.requires_grad_(False)
patch = torch.rand(3, 16, 16, requires_grad=True)
optimizer = torch.optim.Adam([patch], lr=0.03)

batch = torch.rand(4, 3, 64, 64)
patched = batch.clone()
patched[:, :, 24:40, 24:40] = patch
output = model(patched)[0]  # get yolo output
obj_loss = output[..., 4].max(dim=1)[0].mean()
optimizer.zero_grad()
obj_loss.backward()
optimizer.step()
print("objectness", obj_loss.item())
