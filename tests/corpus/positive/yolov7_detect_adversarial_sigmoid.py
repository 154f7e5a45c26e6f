# Source: https://github.com/WongKinYiu/yolov7/issues/1527
# Report: backpropagating a loss on YOLOv7's detections to build an adversarial example
#   fails with "... [torch.cuda.FloatTensor [1, 3, 20, 20, 85]], which is output 0 of
#   SigmoidBackward0, is at version 2; expected version 0". A later commenter finds the
#   in-place decode in models/yolo.py's Detect.forward (the inference path writes the boxes
#   into the sigmoid's output) and fixes it there.
# In-place op: lines 46, 47 (`y[..., 0:2] = ...` and `y[..., 2:4] = ...` in Detect.forward).
# Saved by: line 45 (`y = x[i].sigmoid()`).
# Fix: fixed/yolov7_detect_adversarial_sigmoid.py, the commenter's fix: the decode written
#   out of place.
# Shrunk: YOLOv7 (not installed here) reduced to its Detect head over a small backbone
#   stand-in, 5 classes; one signed-gradient (FGSM) step on a random image against the
#   highest class score.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = torch.tensor([8.0, 16.0])
    export = False

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
        # x = x.copy()  # for profiling
        z = []  # inference output
        self.training |= self.export
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
image = torch.rand(1, 3, 64, 64, requires_grad=True)
pred = model(image)[0]
loss = (pred[..., 4:5] * pred[..., 5:]).max()
loss.backward()
adversarial = (image - 8 / 255 * image.grad.sign()).clamp(0, 1).detach()
print("perturbation", (adversarial - image).abs().max().item())
