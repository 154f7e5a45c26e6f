# Source: https://github.com/pytorch/pytorch/issues/47899
# Report: "Tensor iteration changes behavior in 1.7 with no hint": clamping each row of a
#   tensor that requires grad with `for bb in b: bb[:, 0].clamp_(min=0, max=0.3)` worked
#   in 1.6 and fails since 1.7, because Tensor.__iter__ became `unbind(0)`, a function
#   that returns several views, and writing into them is refused ("... is a view and is
#   being modified inplace. This view is the output of a function that returns multiple
#   views").
# In-place op: lines 24 and 25 (the clamp_ calls on views of the iterated rows).
# Saved by: nothing; the views may not be written in place at all.
# Fix: fixed/tensor_iter_clamp.py, the usual one: b is a leaf that is being projected
#   back into a box, so the clamp runs under torch.no_grad(). The thread's suggestion
#   (index with b[i] instead of iterating) stops the view error but still writes into a
#   view of a leaf that requires grad, which torch refuses as well.
# Shrunk: the reporter's snippet, with a small objective and one step of gradient descent
#   around it.
import torch

torch.manual_seed(0)

b = torch.rand(2, 5, 5, requires_grad=True)
target = torch.rand(2, 5, 5)
for step in range(2):
    for bb in b:
        bb[:, 0].clamp_(min=0, max=0.3)  # [inplace]
        bb[:, 1].clamp_(min=0, max=0.3)  # [inplace]
    loss = ((b - target) ** 2).sum()
    loss.backward()
    with torch.no_grad():
        b -= 0.1 * b.grad
        b.grad = None
print("loss", loss.item())
