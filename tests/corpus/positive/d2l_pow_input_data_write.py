# Source: https://github.com/ShusenTang/Dive-into-DL-PyTorch/issues/126
# Report: the book (section 2.3.3) says a change made through x.data is not recorded by
#   autograd and "does not affect gradient propagation", with `y = 2 * x`, then
#   `x.data *= 100`, then `y.backward()`: x.grad is 2. The reporter changes the function
#   to `y = x ** 2` and gets x.grad = 200 instead of 2: pow saved x for its backward,
#   and the write through .data changed the saved value without an error. The
#   maintainer's answer: x.data sits outside the graph, so do not modify it while the
#   graph still needs it.
# In-place op: line 23 (`x.data *= 100`).
# Saved by: line 22 (`x ** 2`, which saves its input x).
# Fix: fixed/d2l_pow_input_data_write.py, the usual one: the edit after backward.
# Shrunk: the reporter's example as it is; it prints x.grad on a GRADS: line for the
#   judge (label silent-grad).
import json

import torch

x = torch.ones(1, requires_grad=True)
print(x.data)
print(x.data.requires_grad)

y = x ** 2  # [saves]
x.data *= 100  # [inplace]
y.backward()
print(x)
print("GRADS:", json.dumps(x.grad.tolist()))
