import torch
import torch.nn as nn
import torch.nn.functional as F


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
        l_obj = self.BCE_obj(preds[..., 4], targets[..., 0])
        preds = preds.clone()  # BCE_obj saved a view of preds: write wh into a copy  # [fix]
        preds[..., 2:4] = (preds[..., 2:4].sigmoid() * 2) ** 2 * anchors.view(1, self.na, 1, 1, 2)
        l_box = self.mse(preds[..., 0:4][obj], targets[..., 1:5][obj])
        t_cls = F.one_hot(targets[..., 5][obj].long(), self.nc).float()
        l_cls = self.BCE_cls(preds[..., 5:][obj], t_cls)
        return self.lambda_box * l_box + self.lambda_obj * l_obj + self.lambda_cls * l_cls
