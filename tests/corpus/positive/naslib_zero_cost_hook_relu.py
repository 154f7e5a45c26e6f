# Source: https://github.com/automl/NASLib/issues/113
# Report: a zero-cost proxy for a NASLib search space registers
#   `register_full_backward_hook` on the network's operations; NASLib's ReLUConvBN operation
#   starts with an in-place ReLU, which then writes into its hooked input:
#   "Output 0 of BackwardHookFunctionBackward is a view and is being modified inplace".
#   The reporter asks for an option to build the network without in-place ReLUs.
# In-place op: lines 25, 31 (`nn.ReLU(inplace=True)` at the start of the hooked operation; it runs
#   in `self.op(x)`, inside `net(x)`).
# Saved by: none, a view error; line 48 (the full backward hook wraps the operation's inputs and outputs in
#   BackwardHookFunction).
# Fix: fixed/naslib_zero_cost_hook_relu.py, what the issue asks for (the usual fix, the thread
#   has no maintainer's patch): the ReLU built with inplace=False.
# Shrunk: a cell of two ReLUConvBN operations summed, as NASLib's cells do; the proxy's score
#   (the sum of gradient norms the hooks see) on random input.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ReLUConvBN(nn.Module):
    def __init__(self, c_in, c_out, kernel_size):
        super().__init__()
        self.op = nn.Sequential(
            nn.ReLU(inplace=True),  # [inplace]
            nn.Conv2d(c_in, c_out, kernel_size, padding=kernel_size // 2, bias=False),
            nn.BatchNorm2d(c_out),
        )

    def forward(self, x):
        return self.op(x)  # [inplace]


class Cell(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.edges = nn.ModuleList([ReLUConvBN(c, c, 3), ReLUConvBN(c, c, 1)])

    def forward(self, x):
        return sum(edge(x) for edge in self.edges)


net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), Cell(8), Cell(8),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
grad_norms = []
for module in net.modules():
    if isinstance(module, ReLUConvBN):
        module.register_full_backward_hook(
            lambda m, gin, gout: grad_norms.append(gout[0].norm().item()))

x = torch.rand(4, 3, 8, 8)
loss = nn.functional.cross_entropy(net(x), torch.randint(0, 10, (4,)))
loss.backward()
print("proxy score", sum(grad_norms))
