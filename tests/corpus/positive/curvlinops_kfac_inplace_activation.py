# Source: https://github.com/f-dangel/curvlinops/issues/58
# Report: curvlinops' KFAC linear operator does not support networks with in-place
#   operations: it computes the gradient covariances with module full backward hooks on the
#   supported layers (and the input covariances with forward hooks), and an in-place
#   activation after a hooked layer writes into the hook's BackwardHookFunction output. The
#   fix replaces the module backward hook by a tensor backward hook on the layer's output
#   (as in singd#56).
# In-place op: lines 42, 47 (`ReLU(inplace=True)`, run by `model(X)`).
# Saved by: none, a view error; line 27 (`register_full_backward_hook` on each Linear layer).
# Fix: fixed/curvlinops_kfac_inplace_activation.py, the fix: a tensor hook on the
#   layer's output, registered by the forward hook.
# Shrunk: KFAC reduced to the two Kronecker factors of each Linear layer (input and output
#   gradient covariances) for an MSE loss; the MLP with an in-place ReLU, random data.
import torch
from torch.nn import Linear, MSELoss, ReLU, Sequential

torch.manual_seed(0)


class KFAC:
    def __init__(self, model, loss_func):
        self.model, self.loss_func = model, loss_func
        self.input_covariances, self.gradient_covariances = {}, {}
        for name, module in model.named_modules():
            if isinstance(module, Linear):
                module.register_forward_hook(self._input_hook(name))
                module.register_full_backward_hook(self._grad_output_hook(name))

    def _input_hook(self, name):
        def hook(module, inputs, output):
            x = inputs[0].detach()
            self.input_covariances[name] = x.T @ x / x.shape[0]
        return hook

    def _grad_output_hook(self, name):
        def hook(module, grad_input, grad_output):
            g = grad_output[0].detach()
            self.gradient_covariances[name] = g.T @ g * g.shape[0]
        return hook

    def compute(self, X, y):
        output = self.model(X)  # [inplace]
        self.loss_func(output, y).backward()
        return self.input_covariances, self.gradient_covariances


model = Sequential(Linear(5, 4), ReLU(inplace=True), Linear(4, 3))  # [inplace]
X, y = torch.rand(6, 5), torch.rand(6, 3)
A, G = KFAC(model, MSELoss()).compute(X, y)
print({name: tuple(a.shape) for name, a in A.items()}, {name: tuple(g.shape) for name, g in G.items()})
