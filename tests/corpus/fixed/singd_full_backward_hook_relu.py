# Fixed version of positive/singd_full_backward_hook_relu.py.
# Source: https://github.com/f-dangel/singd/issues/56 (fixed by singd pull request #63).
# Fix: the optimizer registers a forward hook that puts a tensor hook on the layer's output;
#   no custom Function wraps the output, so the in-place ReLU may write into it.
import torch
from torch.nn import Conv2d, Linear, ReLU, Sequential

torch.manual_seed(0)


class HookingOptimizer:
    """What SINGD does when it is built: a hook on the output of each supported layer."""

    def __init__(self, model):
        self.grad_outputs = {}
        for module in model.modules():
            if isinstance(module, (Conv2d, Linear)):
                module.register_forward_hook(self._output_hook)  # [fix]

    def _output_hook(self, module, inputs, output):
        def keep(grad, module=module):
            self.grad_outputs[module] = grad.detach()
        output.register_hook(keep)


model = Sequential(
    Conv2d(1, 1, 3),
    ReLU(inplace=True),
)
optim = HookingOptimizer(model)

X = torch.rand(2, 1, 5, 5)
output = model(X)
output.sum().backward()
print("layers seen by the hooks:", len(optim.grad_outputs))
