# Source: https://github.com/pytorch/pytorch/issues/24413
# Report: a custom Function saves the tensor it returns (`ctx.save_for_backward(tensor2)`)
#   and the caller adds to that output in place (`y += 1`); backward then finds the saved
#   tensor modified ("... which is output 0 of ff, is at version 1; expected version 0").
#   The report contrasts it with a Function that saves and returns a transposed view, whose
#   write went unnoticed at the time (see function_saved_view_iadd.py).
# In-place op: line 30 (`y += 1` on the Function's output).
# Saved by: line 18 (`ctx.save_for_backward(tensor2)`, the tensor forward returns).
# Fix: fixed/function_saved_output_iadd.py, the usual fix: the caller adds out of place.
# Shrunk: the thread's second Function as written.
import torch


class ff(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor1):
        tensor2 = tensor1.clone()
        ctx.save_for_backward(tensor2)  # [saves]
        return tensor2

    @staticmethod
    def backward(ctx, grad):
        _ = ctx.saved_tensors
        return grad.clone()


torch.manual_seed(0)
x = torch.rand(2, 3, requires_grad=True)
y = ff.apply(x)
y += 1  # [inplace]
y.backward(torch.rand_like(y))
print("grad", x.grad.sum().item())
