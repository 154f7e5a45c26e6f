# Fixed version of positive/exp_output_write.py.
# Source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3
# Fix: the write that broke backward goes into a copy of exp's output; the write into u
#   stays (exp's backward does not need its input).
import torch

t = torch.arange(3.0, requires_grad=True)
u = 2 * t                             # (so it won't be a leaf variable)
uexp = u.exp()
loss = uexp.sum()                     # (some dummy loss)
u[0] = 666                            # inplace modification of u: exp did not save u
loss.backward(retain_graph=True)      # okay
uexp_copy = uexp.clone()  # [fix]
uexp_copy[0] = 666
loss.backward()
print(t.grad)
