# Source: https://github.com/BaiTheBest/SparseLLM/issues/13
# Report: in the layer-wise optimisation of the auxiliary variable s, the manual gradient
#   step `s_batch -= s_learning_rate * s_batch.grad` raises "RuntimeError: a leaf Variable
#   that requires grad is being used in an in-place operation."
# In-place op: line 25 (`s_batch -= s_learning_rate * s_batch.grad`).
# Fix: fixed/sparsellm_s_batch.py. The maintainer suggested `s_batch = s_batch -
#   s_learning_rate * s_batch.grad`; that rebinding alone breaks the next line
#   (`s_batch.grad` of the new, non-leaf tensor is None), so the fix here does the same
#   step under torch.no_grad(), which keeps s_batch a leaf.
# Shrunk: a random linear layer and targets; 2 chunks of 8 columns, 3 steps each.
import torch

torch.manual_seed(0)

W = torch.randn(16, 32)
target = torch.randn(16, 16)
s = torch.randn(32, 16, dtype=torch.float16)
s_learning_rate = 0.01

for chunk in (slice(0, 8), slice(8, 16)):
    s_batch = s[:, chunk].float().clone().requires_grad_(True)
    for _ in range(3):
        loss_s = ((W @ s_batch - target[:, chunk]) ** 2).mean()
        loss_s.backward()
        s_batch -= s_learning_rate * s_batch.grad  # [inplace]
        s_batch.grad.zero_()
    s[:, chunk] = s_batch.detach().to(dtype=torch.float16)

print("loss", loss_s.item())
