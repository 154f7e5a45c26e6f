# Mirrors: ultralytics/yolov3, models.py (YOLOLayer.forward, inference branch:
#   `io = p.clone()` followed by in-place decoding of io)
# Safe in-place ops: every write goes into the clone io; sigmoid(io[..., :2]) and
#   exp(io[..., 2:4]) read the slices before they are overwritten and save their own new
#   outputs; torch.sigmoid_ on io[..., 4:] is the last op on io. Backward through the
#   decoded output (as a test-time adaptation would do) runs.
import torch
import torch.nn as nn

torch.manual_seed(0)


class YOLOLayer(nn.Module):
    def __init__(self, anchors, nc, stride):
        super().__init__()
        self.anchors = torch.Tensor(anchors)
        self.stride = stride  # layer stride
        self.na = len(anchors)  # number of anchors (3)
        self.nc = nc  # number of classes (80)
        self.no = nc + 5  # number of outputs (85)
        self.nx, self.ny = 0, 0  # initialize number of x, y gridpoints
        self.anchor_vec = self.anchors / self.stride
        self.anchor_wh = self.anchor_vec.view(1, self.na, 1, 1, 2)

    def create_grids(self, ng=(13, 13)):
        self.nx, self.ny = ng
        yv, xv = torch.meshgrid([torch.arange(self.ny), torch.arange(self.nx)], indexing='ij')
        self.grid = torch.stack((xv, yv), 2).view((1, 1, self.ny, self.nx, 2)).float()

    def forward(self, p):
        bs, _, ny, nx = p.shape  # bs, 255, 13, 13
        if (self.nx, self.ny) != (nx, ny):
            self.create_grids((nx, ny))
        # p.view(bs, 255, 13, 13) -- > (bs, 3, 13, 13, 85)  # (bs, anchors, grid, grid, classes + xywh)
        p = p.view(bs, self.na, self.no, self.ny, self.nx).permute(0, 1, 3, 4, 2).contiguous()
        if self.training:
            return p
        io = p.clone()  # inference output
        io[..., :2] = torch.sigmoid(io[..., :2]) + self.grid  # xy
        io[..., 2:4] = torch.exp(io[..., 2:4]) * self.anchor_wh  # wh yolo method
        io[..., :4] *= self.stride
        torch.sigmoid_(io[..., 4:])
        return io.view(bs, -1, self.no), p  # view [1, 3, 13, 13, 85] as [1, 507, 85]


head = nn.Conv2d(8, 3 * 7, 1)
yolo = YOLOLayer([(10, 13), (16, 30), (33, 23)], nc=2, stride=8)
yolo.eval()
io, p = yolo(head(torch.randn(1, 8, 6, 6)))
loss = -(io[..., 5:].softmax(-1) * io[..., 5:].log_softmax(-1)).sum(-1).mean()
loss.backward()
print("loss", loss.item())
