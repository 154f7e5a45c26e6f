# Fixed version of positive/yolov5_heatmap_v62_detect_sigmoid.py.
# Source: https://github.com/z1069614715/objectdetection_script/issues/1 (the author's answer:
#   run it on YOLOv5 v7.0).
# Fix: v7.0's Detect: the sigmoid's output is split and decoded out of place, so nothing
#   writes into the output the sigmoid saved.
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = torch.tensor([8.0, 16.0])

    def __init__(self, nc=2, anchors=((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119)),
                 ch=(8, 16), inplace=True):
        super().__init__()
        self.nc, self.no = nc, nc + 5
        self.nl, self.na = len(anchors), len(anchors[0]) // 2
        self.grid = [torch.empty(0) for _ in range(self.nl)]
        self.anchor_grid = [torch.empty(0) for _ in range(self.nl)]
        self.register_buffer("anchors", torch.tensor(anchors).float().view(self.nl, -1, 2))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)
        self.inplace = inplace

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:
                self.grid[i], self.anchor_grid[i] = self._make_grid(nx, ny, i)
                xy, wh, conf = x[i].sigmoid().split((2, 2, self.nc + 1), 4)  # [fix]
                xy = (xy * 2 + self.grid[i]) * self.stride[i]
                wh = (wh * 2) ** 2 * self.anchor_grid[i]
                y = torch.cat((xy, wh, conf), 4)
                z.append(y.view(bs, -1, self.no))
        return x if self.training else (torch.cat(z, 1), x)

    def _make_grid(self, nx=20, ny=20, i=0):
        shape = 1, self.na, ny, nx, 2
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
        grid = torch.stack((xv, yv), 2).expand(shape).float() - 0.5
        anchor_grid = (self.anchors[i] * self.stride[i]).view((1, self.na, 1, 1, 2)).expand(shape)
        return grid, anchor_grid


class Model(nn.Module):
    def __init__(self, nc=2):
        super().__init__()
        self.model = nn.Sequential(nn.Sequential(nn.Conv2d(3, 8, 3, 8, 1), nn.SiLU()),
                                   nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.SiLU()),
                                   Detect(nc))

    def forward(self, img):
        p3 = self.model[0](img)
        return self.model[2]([p3, self.model[1](p3)])


class ActivationsAndGradients:
    def __init__(self, model, target_layers):
        self.model, self.gradients, self.activations = model, [], []
        for layer in target_layers:
            layer.register_forward_hook(self.save_activation)

    def save_activation(self, module, inputs, output):
        self.activations.append(output.detach())
        output.register_hook(lambda grad: self.gradients.insert(0, grad.detach()))

    def __call__(self, x):
        self.gradients, self.activations = [], []
        return self.model(x)


def xywh2xyxy(x):
    return torch.cat((x[..., :2] - x[..., 2:] / 2, x[..., :2] + x[..., 2:] / 2), -1)


class yolov5_heatmap:
    def __init__(self, conf_threshold=0.2, ratio=0.02):
        self.model = Model().eval()
        self.target_layers = [self.model.model[-2]]
        self.conf_threshold, self.ratio = conf_threshold, ratio

    def post_process(self, result):
        logits_, boxes_ = result[..., 4:], result[..., :4]
        sorted, indices = torch.sort(logits_[..., 0], descending=True)
        return logits_[0][indices[0]], xywh2xyxy(boxes_[0][indices[0]]).detach().numpy()

    def __call__(self, tensor):
        grads = ActivationsAndGradients(self.model, self.target_layers)
        result = grads(tensor)
        activations = grads.activations[0].numpy()
        post_result, post_boxes = self.post_process(result[0])
        saliency_maps = []
        for i in range(max(1, int(post_result.size(0) * self.ratio))):
            if post_result[i][0] < self.conf_threshold:
                break
            self.model.zero_grad()
            score = post_result[i, 1:].max()
            score.backward(retain_graph=True)
            weights = grads.gradients[0].mean((2, 3), keepdim=True).numpy()
            saliency_maps.append(np.maximum((weights * activations).sum(1), 0))
        return saliency_maps


heatmaps = yolov5_heatmap()(torch.rand(1, 3, 64, 64))
print("heatmaps", len(heatmaps))
