# Fixed version of positive/captum_lrp_simple_inplace_relu.py.
# Source: https://github.com/meta-pytorch/captum/pull/837 (the requirement its documentation
#   states).
# Fix: the model is built without in-place modules (the ReLU with inplace=False).
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
        return self.linear2(self.relu(self.linear(x)))


model = SimpleLRPModel(inplace=False)  # [fix]
relevances = {}


def lrp_hook(module, grad_input, grad_output):
    relevances[type(module).__name__] = grad_output[0].detach().abs().sum().item()


for layer in (model.linear, model.relu, model.linear2):
    layer.register_full_backward_hook(lrp_hook)

inputs = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
output = model(inputs)
output.backward(torch.ones_like(output))
print("relevances", relevances)
