# Fixed version of positive/curvlinops_kfac_inplace_activation.py.
# Source: https://github.com/f-dangel/curvlinops/issues/58 (the fix the issue names).
# Fix: the output gradient is taken by a tensor hook that the forward hook registers on the
#   layer's output; no module backward hook, so the in-place ReLU is allowed.
import torch
from torch.nn import Linear, MSELoss, ReLU, Sequential

torch.manual_seed(0)


class KFAC:
    def __init__(self, model, loss_func):
        self.model, self.loss_func = model, loss_func
        self.input_covariances, self.gradient_covariances = {}, {}
        for name, module in model.named_modules():
            if isinstance(module, Linear):
                module.register_forward_hook(self._input_hook(name))  # [fix]

    def _input_hook(self, name):
        def hook(module, inputs, output):
            x = inputs[0].detach()
            self.input_covariances[name] = x.T @ x / x.shape[0]
            output.register_hook(self._grad_output_hook(name))
        return hook

    def _grad_output_hook(self, name):
        def hook(grad):
            g = grad.detach()
            self.gradient_covariances[name] = g.T @ g * g.shape[0]
        return hook

    def compute(self, X, y):
        output = self.model(X)
        self.loss_func(output, y).backward()
        return self.input_covariances, self.gradient_covariances


model = Sequential(Linear(5, 4), ReLU(inplace=True), Linear(4, 3))
X, y = torch.rand(6, 5), torch.rand(6, 3)
A, G = KFAC(model, MSELoss()).compute(X, y)
print({name: tuple(a.shape) for name, a in A.items()}, {name: tuple(g.shape) for name, g in G.items()})
