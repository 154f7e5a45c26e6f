# Source: https://github.com/ultralytics/yolov5/issues/671
# Report: training an adversarial patch against YOLOv5 (the model in eval mode, the loss on
#   its decoded detections) fails with "... [torch.cuda.FloatTensor [4, 3, 19, 19, 85]],
#   which is output 0 of SigmoidBackward, is at version 2; expected version 0"; anomaly
#   detection points at `y = x[i].sigmoid()` in Detect.forward. The inference path decodes
#   the boxes into y in place (`y[..., 0:2] = ...`, `y[..., 2:4] = ...`), and sigmoid's
#   backward needs y. The maintainer answers "Update your code": later versions of Detect
#   decode out of place.
# In-place op: lines 45, 46 (`y[..., 0:2] = ...` and `y[..., 2:4] = ...` in Detect.forward).
# Saved by: line 44 (`y = x[i].sigmoid()`).
# Fix: fixed/yolov5_detect_adv_patch_sigmoid.py, the later Detect (as the maintainer
#   advises): xy, wh and conf split from the sigmoid and concatenated into a new tensor.
# Shrunk: YOLOv5 (not installed here) reduced to its Detect head on two random feature maps
#   from a small backbone stand-in, 5 classes; the patch pasted into random images, one
#   patch update that minimises the highest objectness.
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
                y = x[i].sigmoid()  # [saves]
                y[..., 0:2] = (y[..., 0:2] * 2. - 0.5 + self.grid[i]) * self.stride[i]  # [inplace]
                y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]  # [inplace]
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
