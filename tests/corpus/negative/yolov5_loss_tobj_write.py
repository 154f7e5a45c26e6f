# Mirrors: ultralytics/yolov5, utils/loss.py (ComputeLoss.__call__: the objectness target
#   written with `tobj[b, a, gj, gi] = iou`, from `iou.detach().clamp(0)`)
# Safe in-place ops: the index write goes into tobj, a zeros tensor that does not require
#   grad, and the written value is detached; the prediction tensor is only read.
import torch
import torch.nn as nn

torch.manual_seed(0)


def bbox_iou(box1, box2, eps=1e-7):
    (x1, y1, w1, h1), (x2, y2, w2, h2) = box1.chunk(4, -1), box2.chunk(4, -1)
    b1_x1, b1_x2, b1_y1, b1_y2 = x1 - w1 / 2, x1 + w1 / 2, y1 - h1 / 2, y1 + h1 / 2
    b2_x1, b2_x2, b2_y1, b2_y2 = x2 - w2 / 2, x2 + w2 / 2, y2 - h2 / 2, y2 + h2 / 2
    inter = (torch.min(b1_x2, b2_x2) - torch.max(b1_x1, b2_x1)).clamp(0) * \
            (torch.min(b1_y2, b2_y2) - torch.max(b1_y1, b2_y1)).clamp(0)
    union = w1 * h1 + w2 * h2 - inter + eps
    return inter / union


class ComputeLoss:
    def __init__(self, na=3, nc=2):
        self.BCEcls = nn.BCEWithLogitsLoss()
        self.BCEobj = nn.BCEWithLogitsLoss()
        self.na, self.nc = na, nc
        self.anchors = torch.tensor([[1.25, 1.625], [2.0, 3.75], [4.125, 2.875]])

    def __call__(self, p, b, a, gj, gi, tbox, tcls):
        lcls = torch.zeros(1)
        lbox = torch.zeros(1)
        tobj = torch.zeros(p.shape[:4], dtype=p.dtype)  # target obj
        pxy, pwh, _, pcls = p[b, a, gj, gi].split((2, 2, 1, self.nc), 1)
        pxy = pxy.sigmoid() * 2 - 0.5
        pwh = (pwh.sigmoid() * 2) ** 2 * self.anchors[a]
        pbox = torch.cat((pxy, pwh), 1)  # predicted box
        iou = bbox_iou(pbox, tbox).squeeze()
        lbox += (1.0 - iou).mean()  # iou loss
        iou = iou.detach().clamp(0).type(tobj.dtype)
        tobj[b, a, gj, gi] = iou  # iou ratio
        t = torch.full_like(pcls, 0.0)
        t[range(len(b)), tcls] = 1.0
        lcls += self.BCEcls(pcls, t)
        lobj = self.BCEobj(p[..., 4], tobj)
        return (lbox + lobj + lcls) * p.shape[0]


head = nn.Conv2d(8, 3 * 7, 1)
p = head(torch.randn(2, 8, 4, 4)).view(2, 3, 7, 4, 4).permute(0, 1, 3, 4, 2).contiguous()
b, a = torch.tensor([0, 1, 1]), torch.tensor([0, 2, 1])
gj, gi = torch.tensor([1, 2, 3]), torch.tensor([0, 3, 2])
tbox = torch.rand(3, 4) + 0.5
tcls = torch.tensor([0, 1, 1])
loss = ComputeLoss()(p, b, a, gj, gi, tbox, tcls)
loss.backward()
print("loss", loss.item())
