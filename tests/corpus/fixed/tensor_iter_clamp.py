# Fixed version of positive/tensor_iter_clamp.py.
# Source: https://github.com/pytorch/pytorch/issues/47899
# Fix: the usual one: the projection of the leaf b back into its box is not part of the
#   objective, so it runs under torch.no_grad(), where writing into the rows is allowed.
import torch

torch.manual_seed(0)

b = torch.rand(2, 5, 5, requires_grad=True)
target = torch.rand(2, 5, 5)
for step in range(2):
    with torch.no_grad():  # [fix]
        for bb in b:
            bb[:, 0].clamp_(min=0, max=0.3)
            bb[:, 1].clamp_(min=0, max=0.3)
    loss = ((b - target) ** 2).sum()
    loss.backward()
    with torch.no_grad():
        b -= 0.1 * b.grad
        b.grad = None
print("loss", loss.item())
