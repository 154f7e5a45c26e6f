# Fixed version of positive/yolov7_detect_tta.py.
# Source: https://github.com/WongKinYiu/yolov7/issues/1935 (no answer in the thread)
# Fix: decode the boxes out of place, splitting the sigmoid output and concatenating the
#   decoded parts, as later versions of the YOLOv5 Detect head do; same forward values.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = None  # strides computed during build

    def __init__(self, nc=80, anchors=(), ch=()):
        super().__init__()
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        self.grid = [torch.zeros(1)] * self.nl  # init grid
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)
        self.register_buffer('anchor_grid', a.clone().view(self.nl, 1, -1, 1, 1, 2))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        z = []  # inference output
        for i in range(self.nl):
            x[i] = self.m[i](x[i])  # conv
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:  # inference
                if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i] = self._make_grid(nx, ny).to(x[i].device)
                y = x[i].sigmoid()
                xy, wh, conf = y.split((2, 2, self.nc + 1), 4)  # [fix]
                xy = (xy * 2. - 0.5 + self.grid[i]) * self.stride[i]  # xy
                wh = (wh * 2) ** 2 * self.anchor_grid[i]  # wh
                y = torch.cat((xy, wh, conf), 4)
                z.append(y.view(bs, -1, self.no))
        return x if self.training else (torch.cat(z, 1), x)

    @staticmethod
    def _make_grid(nx=20, ny=20):
        yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing='ij')
        return torch.stack((xv, yv), 2).view((1, 1, ny, nx, 2)).float()


def marginal_entropy(outputs):
    probs = outputs[..., 5:].softmax(-1).mean(1)
    return -(probs * probs.clamp_min(1e-8).log()).sum(-1).mean()


detect = Detect(nc=2, anchors=([10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119]), ch=(8, 16))
detect.stride = torch.tensor([8., 16.])
detect.eval()  # the adaptation runs the model in inference mode, with grad enabled
features = [torch.randn(1, 8, 8, 8), torch.randn(1, 16, 4, 4)]
outputs, train_output = detect(features)
loss = marginal_entropy(outputs)
loss.backward()
print("loss", loss.item())
