# Source: https://github.com/pytorch/pytorch/issues/24413
# Report: a custom Function clones its input, saves a transposed view of the clone
#   (`tensor3 = tensor2.t()`) and returns that view; the caller then adds to it in place
#   (`y += 1`). At the time nothing was raised and the saved tensor was silently changed;
#   torch 2.x raises at the write: the output is a view created inside a custom Function.
# In-place op: line 32 (`y += 1` on the Function's output).
# Saved by: none, a view error; line 20 (`ctx.save_for_backward(tensor3)`, a view that forward returns).
# Fix: fixed/function_saved_view_iadd.py, the usual fix: the caller adds out of place.
# Shrunk: the thread's first Function as written.
import torch


class f(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor1):
        # make sure we don't share storage with our input
        tensor2 = tensor1.clone()
        # tensor3 shares storage with tensor2
        tensor3 = tensor2.t()
        ctx.save_for_backward(tensor3)
        return tensor3

    @staticmethod
    def backward(ctx, grad):
        _ = ctx.saved_tensors
        return grad.t().clone()


torch.manual_seed(0)
x = torch.rand(2, 3, requires_grad=True)
y = f.apply(x)
y += 1  # [inplace]
y.backward(torch.rand_like(y))
print("grad", x.grad.sum().item())
