# Fixed version of positive/leaf_index_copy.py.
# Source: https://discuss.pytorch.org/t/inplace-operation-changes-is-leaf-attribute/120297
# Fix: index_copy_ into a clone of the leaf (or use the out-of-place index_copy); the
#   leaf then gets a gradient of 1 except in the overwritten column.
import torch

c = torch.randn(10, 3, 2, 32, requires_grad=True)
d = c.clone()  # [fix]
d.index_copy_(3, torch.tensor([10]), torch.randn(10, 3, 2, 1))
d.sum().backward()
print(c.grad.shape)
