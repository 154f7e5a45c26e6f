# Source: https://github.com/pytorch/pytorch/issues/6990
# Report: "Differences between .data and .detach": the 0.4 migration guide says changes
#   made through x.data are not tracked by autograd and give wrong gradients if x is
#   needed in backward; zou3519's example: `out = a.sigmoid()`, then zeroing a tensor
#   that shares out's storage. Through .detach() autograd raises ("modified by an
#   inplace operation"); through .data it raises nothing and sigmoid's backward uses the
#   zeroed output, so a.grad comes out all zeros instead of sigmoid'(a).
# In-place op: line 21 (`c.zero_()`, c = out.data).
# Saved by: line 19 (`a.sigmoid()`, which saves its output).
# Fix: fixed/data_zero_sigmoid_output.py, the usual one: zero a copy
#   (`out.detach().clone()`), so that the saved output is left alone.
# Shrunk: the thread's example; it prints its gradients on a GRADS: line for the judge
#   (label silent-grad: no error, gradients that differ from the fixed script's).
import json

import torch

a = torch.tensor([1, 2, 3.], requires_grad=True)
out = a.sigmoid()  # [saves]
c = out.data
c.zero_()  # [inplace]
out.sum().backward()
print("GRADS:", json.dumps(a.grad.tolist()))
