# Source: https://github.com/pytorch/pytorch/issues/36608
# Report: "Autograd view CreationMeta are not properly propagated when chaining views":
#   `x = root.clone(); v1 = x.unbind(); v1[0].mul_(2)` is (correctly) refused with "Output
#   0 of UnbindBackward is a view and is being modified inplace ...", while a view of that
#   view slipped through (since fixed). The first half is the case here.
# In-place op: line 13 (`v1[0].mul_(2)`).
# Fix: fixed/unbind_view_mul.py: write through an indexed view of x, which autograd allows.
import torch

root = torch.arange(9.).reshape(3, 3).requires_grad_()
x = root.clone()
v1 = x.unbind()
v1[0].mul_(2)  # [inplace]
x.sum().backward()
print(root.grad)
