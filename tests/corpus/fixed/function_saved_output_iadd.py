# Fixed version of positive/function_saved_output_iadd.py.
# Source: https://github.com/pytorch/pytorch/issues/24413 (the usual fix).
# Fix: `y = y + 1` makes a new tensor; the one the Function saved keeps its version.
import torch


class ff(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor1):
        tensor2 = tensor1.clone()
        ctx.save_for_backward(tensor2)
        return tensor2

    @staticmethod
    def backward(ctx, grad):
        _ = ctx.saved_tensors
        return grad.clone()


torch.manual_seed(0)
x = torch.rand(2, 3, requires_grad=True)
y = ff.apply(x)
y = y + 1  # [fix]
y.backward(torch.rand_like(y))
print("grad", x.grad.sum().item())
