# Fixed version of positive/unbind_view_mul.py.
# Source: https://github.com/pytorch/pytorch/issues/36608
# Fix: multiply the row through x[0], a single view of the clone, which autograd may
#   rebase; the gradient of root is then 2 on the first row and 1 elsewhere.
import torch

root = torch.arange(9.).reshape(3, 3).requires_grad_()
x = root.clone()
x[0].mul_(2)  # [fix]
x.sum().backward()
print(root.grad)
