# Source: https://github.com/pytorch/pytorch/issues/91093
# Report: while looking for a way to free and later restore a parameter's storage
#   without touching autograd (for FSDP-style sharding), the reporter showed that
#   `with torch.no_grad(): x.copy_(...)` still bumps the parameter's version counter, so
#   a loss computed from the parameter before the copy can no longer be backpropagated:
#   abs() saved the parameter, and backward finds it "modified by an inplace operation".
# In-place op: line 23 (`param.copy_(correct_data)` under torch.no_grad()).
# Saved by: line 19 (`torch.abs(param)` keeps its input for backward).
# Fix: fixed/no_grad_param_copy.py, the usual one: run backward before the parameter is
#   overwritten (no_grad does not make the write invisible to autograd's check).
# Shrunk: the reporter's example: one parameter of 10 elements.
import torch

size = 10
param = torch.nn.Parameter(torch.ones(size))
correct_data = torch.full((size,), 2.0)
print("param._version before:", param._version)

loss = torch.sum(torch.abs(param))  # [saves]

# Later, reconstruct the parameter (without affecting its autograd data, it was hoped)
with torch.no_grad():
    param.copy_(correct_data)  # [inplace]
print("param._version after:", param._version)

loss.backward()
print("grad", param.grad)
