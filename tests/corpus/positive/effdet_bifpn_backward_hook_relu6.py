# Source: https://github.com/rwightman/efficientdet-pytorch/issues/298
# Report: putting backward hooks on the modules of effdet's BiFPN (to plot gradients) makes
#   the BiFPN's forward fail: each FPN node combines its inputs (FpnCombine) and then runs
#   `after_combine`, whose first layer is an in-place activation (ReLU6 / SiLU with
#   inplace=True) that writes into the combine module's output, now an output of
#   BackwardHookFunction ("... is a view and is being modified inplace").
# In-place op: lines 46, 41 (the after-combine activation built with inplace=True, run by
#   `self.after_combine(...)` inside `fpn(features)`).
# Saved by: none, a view error; line 68 (`register_full_backward_hook` on every module of the BiFPN).
# Fix: fixed/effdet_bifpn_backward_hook_relu6.py, the usual fix (the issue is open): the
#   gradients are taken with tensor hooks registered by forward hooks, so the in-place
#   activation stays legal.
# Shrunk: effdet (not installed here) reduced to one BiFPN cell of two nodes over two levels:
#   weighted (fast-attention) combine, in-place activation, separable convolution; random
#   feature maps, one backward.
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
        return self.after_combine(self.combine(x))  # [inplace]


def after_combine(channels):
    return nn.Sequential(
        nn.ReLU6(inplace=True),  # [inplace]
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
for name, module in fpn.named_modules():
    if name:
        module.register_full_backward_hook(
            lambda m, gin, gout, name=name: grad_norms.__setitem__(name, gout[0].norm().item()))

features = [torch.randn(2, 8, 16, 16), torch.randn(2, 8, 8, 8)]
outputs = fpn(features)
sum(o.mean() for o in outputs).backward()
print("gradient norms", sorted(grad_norms))
