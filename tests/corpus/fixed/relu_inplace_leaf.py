# Fixed version of positive/relu_inplace_leaf.py.
# Source: https://github.com/pytorch/pytorch/issues/727
# Fix (the maintainer's answer): "Just remove the inplace flag and it should be good."
import torch
import torch.nn.functional as F

torch.manual_seed(0)

x = torch.randn(4, 6, 10, 10, requires_grad=True)
x = F.relu(x)  # [fix]
x = F.dropout(x, p=0.1)  # [fix]
result = torch.sum(x)
result.backward()
print("result", result.item())
