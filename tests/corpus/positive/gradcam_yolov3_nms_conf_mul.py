# Source: https://github.com/withtimesgo1115/gradCAM-YOLOv3-pytorch/issues/4
# Report: gradCAM-YOLOv3 backpropagates the score of a detection kept by non-maximum
#   suppression into a YOLOv3-SPP model; `scores.backward(...)` fails with "...
#   [torch.cuda.FloatTensor [5, 1]], which is output 0 of SliceBackward, is at version 2;
#   expected version 0". In non_max_suppression, `x[..., 5:] *= x[..., 4:5]` multiplies the
#   class scores by the objectness in place: the multiplication keeps `x[..., 4:5]`, a view
#   of x, for backward, and writes into x. The reporter's fix, later confirmed by another
#   user: `x[..., 5:] = x[..., 5:].clone() * x[..., 4:5].clone()`.
# In-place op: line 54 (`x[..., 5:] *= x[..., 4:5]`).
# Saved by: line 54 (the same multiplication keeps `x[..., 4:5]`, a view of the x it writes).
# Fix: fixed/gradcam_yolov3_nms_conf_mul.py, the reporter's fix from the thread (both operands
#   cloned).
# Shrunk: YOLOv3-SPP reduced to two convs and its YOLO layer's decoding, 3 classes on a 64 x 64
#   random image; torchvision's nms (not installed here) replaced by keeping the best boxes by
#   score; scale_coords and the drawing of the CAM left out.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Darknet(nn.Module):
    def __init__(self, nc=3, na=3):
        super().__init__()
        self.nc, self.na, self.no = nc, na, nc + 5
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, 4, 1), nn.LeakyReLU(0.1),
                                      nn.Conv2d(16, 32, 3, 2, 1), nn.LeakyReLU(0.1))
        self.head = nn.Conv2d(32, na * self.no, 1)
        self.anchors = torch.tensor([[10.0, 13.0], [16.0, 30.0], [33.0, 23.0]]).view(1, na, 1, 1, 2)
        self.stride = 8

    def forward(self, x):
        p = self.head(self.features(x))
        bs, _, ny, nx = p.shape
        p = p.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2)
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
        grid = torch.stack((xv, yv), 2).view(1, 1, ny, nx, 2).float()
        xy = (torch.sigmoid(p[..., :2]) + grid) * self.stride
        wh = torch.exp(p[..., 2:4]) * self.anchors
        io = torch.cat((xy, wh, torch.sigmoid(p[..., 4:])), -1)
        return io.view(bs, -1, self.no), p


def non_max_suppression(prediction, conf_thres=0.1, iou_thres=0.6, multi_label=True, max_num=100):
    min_wh, max_wh = 2, 4096
    nc = prediction[0].shape[1] - 5
    multi_label &= nc > 1
    output = [None] * prediction.shape[0]
    for xi, x in enumerate(prediction):
        x = x[x[:, 4] > conf_thres]
        x = x[((x[:, 2:4] > min_wh) & (x[:, 2:4] < max_wh)).all(1)]
        if not x.shape[0]:
            continue
        x[..., 5:] *= x[..., 4:5]  # [inplace] [saves]
        box = torch.cat((x[:, :2] - x[:, 2:4] / 2, x[:, :2] + x[:, 2:4] / 2), 1)
        if multi_label:
            i, j = (x[:, 5:] > conf_thres).nonzero(as_tuple=False).t()
            x = torch.cat((box[i], x[i, j + 5].unsqueeze(1), j.float().unsqueeze(1)), 1)
        else:
            conf, j = x[:, 5:].max(1)
            x = torch.cat((box, conf.unsqueeze(1), j.float().unsqueeze(1)), 1)
        i = x[:, 4].argsort(descending=True)[:max_num]
        output[xi] = x[i]
    return output


net = Darknet().eval()
output = net(torch.rand(1, 3, 64, 64))[0]
output_nonmax = non_max_suppression(output, conf_thres=0.25, iou_thres=0.45, multi_label=True)[0]
scores = output_nonmax[:, 4].unsqueeze(0)
idx = scores.argmax()
one_hot_output = torch.zeros(1, scores.size(-1))
one_hot_output[0][idx] = 1
net.zero_grad()
scores.backward(gradient=one_hot_output, retain_graph=True)
print("detections", output_nonmax.shape[0])
