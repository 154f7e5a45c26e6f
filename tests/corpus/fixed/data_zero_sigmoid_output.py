# Fixed version of positive/data_zero_sigmoid_output.py.
# Source: https://github.com/pytorch/pytorch/issues/6990
# Fix: the usual one: zero a copy of the output (`out.detach().clone()`), not the tensor
#   sigmoid saved; a.grad is then sigmoid'(a).
import json

import torch

a = torch.tensor([1, 2, 3.], requires_grad=True)
out = a.sigmoid()
c = out.detach().clone()  # [fix]
c.zero_()
out.sum().backward()
print("GRADS:", json.dumps(a.grad.tolist()))
