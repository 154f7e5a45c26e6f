# Fixed version of positive/d2l_pow_input_data_write.py.
# Fix: the usual one: edit x through .data only once backward no longer needs the value
#   pow saved (after y.backward()); x.grad is then 2.
import json

import torch

x = torch.ones(1, requires_grad=True)
print(x.data)
print(x.data.requires_grad)

y = x ** 2
y.backward()
x.data *= 100  # [fix]
print(x)
print("GRADS:", json.dumps(x.grad.tolist()))
