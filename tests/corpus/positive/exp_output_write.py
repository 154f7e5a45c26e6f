# Source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3
# Report: "When inplace operation are allowed and when not". The answer's example: exp
#   saves its output, not its input, so `u[0] = 666` after `uexp = u.exp()` is fine while
#   `uexp[0] = 666` makes the next backward fail.
# In-place op: line 16 (`uexp[0] = 666`).
# Saved by: line 12 (`uexp = u.exp()`).
# Fix: fixed/exp_output_write.py: the second write goes into a clone.
import torch

t = torch.arange(3.0, requires_grad=True)
u = 2 * t                             # (so it won't be a leaf variable)
uexp = u.exp()  # [saves]
loss = uexp.sum()                     # (some dummy loss)
u[0] = 666                            # inplace modification of u: exp did not save u
loss.backward(retain_graph=True)      # okay
uexp[0] = 666  # [inplace]
loss.backward()
print(t.grad)
