# Fixed version of positive/no_grad_param_copy.py.
# Source: https://github.com/pytorch/pytorch/issues/91093
# Fix: the usual one: backpropagate the loss before the parameter is overwritten; a write
#   under no_grad still bumps the version that backward checks.
import torch

size = 10
param = torch.nn.Parameter(torch.ones(size))
correct_data = torch.full((size,), 2.0)
print("param._version before:", param._version)

loss = torch.sum(torch.abs(param))
loss.backward()  # [fix]

# Later, reconstruct the parameter (without affecting its autograd data, it was hoped)
with torch.no_grad():
    param.copy_(correct_data)
print("param._version after:", param._version)

print("grad", param.grad)
