# Fixed version of positive/function_saved_view_iadd.py.
# Source: https://github.com/pytorch/pytorch/issues/24413 (the usual fix).
# Fix: `y = y + 1` leaves the Function's output, and the view it saved, as they were.
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
y = y + 1  # [fix]
y.backward(torch.rand_like(y))
print("grad", x.grad.sum().item())
