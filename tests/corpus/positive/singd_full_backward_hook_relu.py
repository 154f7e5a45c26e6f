# Source: https://github.com/f-dangel/singd/issues/56
# Report: SINGD, a structured second-order optimizer, installs module full backward hooks on
#   the model's Conv2d and Linear layers when it is constructed. A model whose Conv2d is
#   followed by ReLU(inplace=True) then fails in its forward pass: the hooked layer's output
#   is an output of BackwardHookFunction, and the in-place ReLU writes into that view.
# In-place op: lines 34, 39 (`ReLU(inplace=True)`, built there and run by `model(X)`).
# Saved by: none, a view error; line 26 (`register_full_backward_hook` passes the Conv2d's output through a custom
#   Function, whose outputs must not be modified in place).
# Fix: fixed/singd_full_backward_hook_relu.py, the library's fix (singd pull request #63): a
#   forward hook that registers a tensor hook on the layer's output, no module backward hook.
# Shrunk: the optimizer is reduced to the hook it installs (its curvature statistics are left
#   out); random input instead of MNIST, one forward and backward.
import torch
from torch.nn import Conv2d, Linear, ReLU, Sequential

torch.manual_seed(0)


class HookingOptimizer:
    """What SINGD does when it is built: a backward hook on each supported layer."""

    def __init__(self, model):
        self.grad_outputs = {}
        for module in model.modules():
            if isinstance(module, (Conv2d, Linear)):
                module.register_full_backward_hook(self._grad_output_hook)

    def _grad_output_hook(self, module, grad_input, grad_output):
        self.grad_outputs[module] = grad_output[0].detach()


model = Sequential(
    Conv2d(1, 1, 3),
    ReLU(inplace=True),  # [inplace]
)
optim = HookingOptimizer(model)

X = torch.rand(2, 1, 5, 5)
output = model(X)  # [inplace]
output.sum().backward()
print("layers seen by the hooks:", len(optim.grad_outputs))
