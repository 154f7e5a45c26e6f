# Source: https://github.com/pytorch/pytorch/issues/9391
# Report: "backward pass different behaviors with inplace operation": `b = a.sigmoid();
#   b[1] = 2; b.sum().backward()` raises the in-place error, while the same values computed
#   as 1/((-a).exp()+1) do not. Why: sigmoid's backward uses its output, so writing into
#   that output breaks it, while nothing saved the division's output.
# In-place op: line 13 (`b[1] = 2`).
# Saved by: line 12 (`b = a.sigmoid()`).
# Fix: fixed/sigmoid_index_write.py: the write goes into a clone.
import torch

a = torch.tensor([1, 2, 3.], requires_grad=True)
b = a.sigmoid()  # [saves]
b[1] = 2  # [inplace]
b.sum().backward()
print(a.grad)
