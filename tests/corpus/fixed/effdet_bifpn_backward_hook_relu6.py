# Fixed version of positive/effdet_bifpn_backward_hook_relu6.py.
# Source: https://github.com/rwightman/efficientdet-pytorch/issues/298 (the usual fix).
# Fix: forward hooks register tensor hooks on each module's output; no module backward hook
#   wraps the outputs, so the in-place activations may write into them.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FpnCombine(nn.Module):
    def __init__(self, n_inputs):
        super().__init__()
        self.edge_weights = nn.Parameter(torch.ones(n_inputs))

    def forward(self, x):
        w = F.relu(self.edge_weights)
        w = w / (w.sum() + 1e-4)
        return sum(xi * wi for xi, wi in zip(x, w))


class FNode(nn.Module):
    def __init__(self, combine, after_combine):
        super().__init__()
        self.combine = combine
        self.after_combine = after_combine

    def forward(self, x):
        return self.after_combine(self.combine(x))


def after_combine(channels):
    return nn.Sequential(
        nn.ReLU6(inplace=True),
        nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False),
        nn.Conv2d(channels, channels, 1), nn.BatchNorm2d(channels))


class BiFpnLayer(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.td = FNode(FpnCombine(2), after_combine(channels))
        self.out = FNode(FpnCombine(2), after_combine(channels))

    def forward(self, x):
        p3, p4 = x
        p3_td = self.td([p3, F.interpolate(p4, scale_factor=2.0)])
        p4_out = self.out([p4, F.max_pool2d(p3_td, 2)])
        return [p3_td, p4_out]


fpn = BiFpnLayer(8)
grad_norms = {}
def track_gradient(name):
    def forward_hook(module, inputs, output):
        if isinstance(output, torch.Tensor) and output.requires_grad:
            output.register_hook(lambda grad: grad_norms.__setitem__(name, grad.norm().item()))
    return forward_hook


for name, module in fpn.named_modules():
    if name:
        module.register_forward_hook(track_gradient(name))  # [fix]

features = [torch.randn(2, 8, 16, 16), torch.randn(2, 8, 8, 8)]
outputs = fpn(features)
sum(o.mean() for o in outputs).backward()
print("gradient norms", sorted(grad_norms))
