# Fixed version of positive/gradcam_yolov5_detect_sigmoid.py.
# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/215 (the usual fix).
# Fix: the Detect head decodes into new tensors (split, then cat), so the loss
#   backpropagates through a sigmoid whose output was not written.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = torch.tensor([8.0, 16.0])

    def __init__(self, nc=7, anchors=((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119)),
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
        self.detect = Detect(nc=7)

    def forward(self, img):
        f3 = self.p3(img)
        return self.detect([f3, self.p4(f3)])


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


def get_loss(output, category):
    detections = output[0]
    return (detections[..., 4] * detections[..., 5 + category]).max()


model = TinyYolo().eval()
cam = ActivationsAndGradients(model, [model.p4])
outputs = cam(torch.rand(1, 3, 64, 64))
loss = get_loss(outputs, category=2)
model.zero_grad()
loss.backward()
weights = cam.gradients[0].mean((2, 3), keepdim=True)
heatmap = torch.relu((weights * cam.activations[0]).sum(1))
print("heatmap", tuple(heatmap.shape))
