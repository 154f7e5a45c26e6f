# Fixed version of positive/sparsellm_s_batch.py.
# Source: https://github.com/BaiTheBest/SparseLLM/issues/13
# Fix: the gradient step under torch.no_grad(); s_batch stays a leaf, so the following
#   s_batch.grad.zero_() still works (the maintainer's out-of-place rewrite would not).
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
        with torch.no_grad():  # [fix]
            s_batch -= s_learning_rate * s_batch.grad
        s_batch.grad.zero_()
    s[:, chunk] = s_batch.detach().to(dtype=torch.float16)

print("loss", loss_s.item())
