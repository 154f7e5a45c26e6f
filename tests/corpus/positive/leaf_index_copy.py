# Source: https://discuss.pytorch.org/t/inplace-operation-changes-is-leaf-attribute/120297
# Report: "Inplace operation changes is_leaf attribute": on a tensor created with
#   requires_grad=True, `c += 1`, `c.add_(1)` and
#   `c.index_copy_(3, torch.tensor(10), torch.randn(10, 3, 2, 1))` all raise "a leaf
#   Variable that requires grad is being used in an in-place operation." (while
#   `c.detach() += 1` does not). The index_copy_ case is the one here.
# In-place op: line 12 (`c.index_copy_(3, ...)`).
# Fix: fixed/leaf_index_copy.py: copy into a clone of the leaf, which keeps the graph.
import torch

c = torch.randn(10, 3, 2, 32, requires_grad=True)
c.index_copy_(3, torch.tensor([10]), torch.randn(10, 3, 2, 1))  # [inplace]
c.sum().backward()
print(c.grad.shape)
