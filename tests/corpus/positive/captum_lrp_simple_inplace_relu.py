# Source: https://github.com/meta-pytorch/captum/pull/837
# Report: moving Captum's module backward hooks to register_full_backward_hook made models
#   with in-place modules unsupported for LRP, DeepLift and guided backprop; the pull request
#   removes the test that ran LRP on a simple model with ReLU(inplace=True), and reviewers
#   note that several pretrained models use such ReLUs. LRP hooks every layer, the ReLU
#   included, so the ReLU's input is a BackwardHookFunction output and relu_ may not write
#   into it.
# In-place op: lines 31, 28 (`nn.ReLU(inplace=True)`, flag given at 31, called at 28).
# Saved by: none, a view error; line 40 (the full backward hook LRP puts on every layer).
# Fix: fixed/captum_lrp_simple_inplace_relu.py, what the pull request's documentation asks
#   of users: a model without in-place modules (the ReLU built with inplace=False).
# Shrunk: Captum's simple test model (Linear, ReLU, Linear) and an LRP reduced to its hooks:
#   epsilon-rule relevance of each layer computed from the gradients the hooks receive.
import torch
import torch.nn as nn

torch.manual_seed(0)


class SimpleLRPModel(nn.Module):
    def __init__(self, inplace):
        super().__init__()
        self.linear = nn.Linear(3, 3, bias=False)
        self.relu = nn.ReLU(inplace=inplace)
        self.linear2 = nn.Linear(3, 1, bias=False)

    def forward(self, x):
        return self.linear2(self.relu(self.linear(x)))  # [inplace]


model = SimpleLRPModel(inplace=True)  # [inplace]
relevances = {}


def lrp_hook(module, grad_input, grad_output):
    relevances[type(module).__name__] = grad_output[0].detach().abs().sum().item()


for layer in (model.linear, model.relu, model.linear2):
    layer.register_full_backward_hook(lrp_hook)

inputs = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
output = model(inputs)
output.backward(torch.ones_like(output))
print("relevances", relevances)
