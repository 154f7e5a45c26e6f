"""Seed case 2: a YOLOv5 training step whose loss writes into the prediction tensor.

Rebuilt from the training loop quoted in the report (seeds/yolov5_loss_inplace.txt),
with a tiny Yolov5-like model, random images and boxes instead of a dataset loader,
bs=2, 3 anchors per scale and 640x640 inputs (so the stride-32 grid is 20x20).
Running it raises, in loss.backward(), the report's error:

    RuntimeError: one of the variables needed for gradient computation has been
    modified by an inplace operation: [torch.FloatTensor [2, 3, 20, 20]] is at
    version 2; expected version 1 instead. ...

YOLO_LOSS.compute_loss decodes the boxes by writing into slices of the prediction
tensor. The first write (xy) is harmless: nothing has saved the tensor yet. Then
BCEWithLogitsLoss saves preds[..., 4], a view of it, for its backward; the second
write (wh) bumps the version counter that every view of preds shares, although the
elements it writes do not overlap the objectness column. The fixed version is
examples/fixed/yolov5_loss_seed.py.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import AdamW

ANCHORS = [
    [(10, 13), (16, 30), (33, 23)],       # P3/8
    [(30, 61), (62, 45), (59, 119)],      # P4/16
    [(116, 90), (156, 198), (373, 326)],  # P5/32
]
STRIDES = [8, 16, 32]


class Conv(nn.Module):
    """Conv2d + BatchNorm2d + SiLU, as in YOLOv5."""

    def __init__(self, c1, c2, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU(inplace=True)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


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


class YOLO_LOSS:
    def __init__(self, model, rect_training=False):
        self.mse = nn.MSELoss()
        self.BCE_cls = nn.BCEWithLogitsLoss()
        self.BCE_obj = nn.BCEWithLogitsLoss()
        head = model.head
        self.nc, self.na, self.nl = head.nc, head.na, head.nl
        self.stride = head.stride
        self.anchors = head.anchors / head.stride.view(-1, 1, 1)   # in grid cells
        self.rect_training = rect_training
        self.balance = [4.0, 1.0, 0.4]
        self.lambda_box, self.lambda_obj, self.lambda_cls = 0.05, 1.0, 0.5

    def __call__(self, preds, targets, pred_size=None):
        bs = preds[0].shape[0]
        if self.rect_training:
            grids = [(int(pred_size[0] // s), int(pred_size[1] // s)) for s in self.stride]
        else:
            grids = [tuple(p.shape[2:4]) for p in preds]
        loss = 0
        for i in range(self.nl):
            t = self.build_targets(targets, bs, grids[i], self.anchors[i])
            loss = loss + self.balance[i] * self.compute_loss(preds[i], t, self.anchors[i])
        return loss * bs

    def build_targets(self, targets, bs, grid, anchors):
        """targets: per image, rows of (cls, xc, yc, w, h) in [0, 1].

        Returns (bs, na, ny, nx, 6): obj, x and y in the cell, w and h in cells, cls.
        """
        ny, nx = grid
        t = torch.zeros(bs, self.na, ny, nx, 6)
        for b, boxes in enumerate(targets):
            for cls, xc, yc, w, h in boxes.tolist():
                gx, gy, gw, gh = xc * nx, yc * ny, w * nx, h * ny
                wh = torch.tensor([gw, gh])
                ratio = torch.max(wh / anchors, anchors / wh).max(dim=1).values
                a = int(ratio.argmin())
                j, k = min(int(gy), ny - 1), min(int(gx), nx - 1)
                t[b, a, j, k] = torch.tensor([1.0, gx - k, gy - j, gw, gh, cls])
        return t

    def compute_loss(self, preds, targets, anchors):
        obj = targets[..., 0] == 1
        # decode xy and wh, written into the prediction tensor itself
        preds[..., 0:2] = preds[..., 0:2].sigmoid() * 2 - 0.5
        l_obj = self.BCE_obj(preds[..., 4], targets[..., 0])  # [saves]
        preds[..., 2:4] = (preds[..., 2:4].sigmoid() * 2) ** 2 * anchors.view(1, self.na, 1, 1, 2)  # [inplace]
        l_box = self.mse(preds[..., 0:4][obj], targets[..., 1:5][obj])
        t_cls = F.one_hot(targets[..., 5][obj].long(), self.nc).float()
        l_cls = self.BCE_cls(preds[..., 5:][obj], t_cls)
        return self.lambda_box * l_box + self.lambda_obj * l_obj + self.lambda_cls * l_cls


def random_batches(n_batches, batch_size=2, num_classes=2, size=640):
    """Stands in for get_loaders(): random images, one to three random boxes each."""
    g = torch.Generator().manual_seed(0)
    for _ in range(n_batches):
        imgs = torch.rand(batch_size, 3, size, size, generator=g)
        targets = []
        for _ in range(batch_size):
            n = int(torch.randint(1, 4, (1,), generator=g))
            cls = torch.randint(0, num_classes, (n, 1), generator=g).float()
            xy = torch.rand(n, 2, generator=g) * 0.8 + 0.1
            wh = torch.rand(n, 2, generator=g) * 0.3 + 0.05
            targets.append(torch.cat([cls, xy, wh], dim=1))
        yield imgs, targets


def main():
    torch.manual_seed(0)
    # Initialize model, loss, and optimizer
    model = Yolov5(version="n", nc=2)
    print(f"{sum(p.numel() for p in model.parameters())/1e6} million parameters")
    criterion = YOLO_LOSS(model, rect_training=True)
    optimizer = AdamW(model.parameters(), lr=0.5)

    num_epochs = 1
    train_loader = list(random_batches(1, batch_size=2, num_classes=2))

    for epoch in range(num_epochs):
        model.train()
        epoch_loss = 0

        for imgs, targets in train_loader:
            torch.autograd.set_detect_anomaly(True)
            # Forward pass
            outputs = model(imgs)
            loss = criterion(outputs, targets, pred_size=imgs.shape[2:4])

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            epoch_loss += loss.item()

        print(f"Epoch {epoch+1}/{num_epochs} | Loss: {epoch_loss/len(train_loader)}")


if __name__ == "__main__":
    main()
