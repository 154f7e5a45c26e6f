# Source: https://github.com/pytorch/pytorch/issues/727
# Report: "F.relu(inplace) followed by F.dropout(inplace) breaks backward pass", on an
#   input Variable created with requires_grad=True. The maintainer's answer: in-place ops
#   cannot be applied to leaf Variables; remove the inplace flags. (Today the first
#   in-place call itself raises "a leaf Variable that requires grad is being used in an
#   in-place operation".)
# In-place op: line 15 (`F.relu(x, inplace=True)` on the leaf x).
# Fix: fixed/relu_inplace_leaf.py: the maintainer's, no inplace flags.
import torch
import torch.nn.functional as F

torch.manual_seed(0)

x = torch.randn(4, 6, 10, 10, requires_grad=True)
x = F.relu(x, inplace=True)  # [inplace]
x = F.dropout(x, p=0.1, inplace=True)
result = torch.sum(x)
result.backward()
print("result", result.item())
