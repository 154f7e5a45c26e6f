# Fixed version of positive/fused_bn_backward_inplace_saved.py.
# Source: https://github.com/pytorch/tutorials/pull/1594 (the tutorial kept the out-of-place
#   backward).
# Fix: the centred input is a new tensor; the saved X is not written, so a second backward
#   (gradcheck's) reads it as forward saved it.
import torch
from torch.autograd.function import once_differentiable


class BatchNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, eps=1e-3):
        mean = X.mean(0)
        var = X.var(0, unbiased=True)
        ctx.save_for_backward(X)
        ctx.eps = eps
        ctx.sqrt_var = torch.sqrt(var)
        return (X - mean) / (ctx.sqrt_var + eps)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (X,) = ctx.saved_tensors
        N = X.shape[0]
        denom = ctx.sqrt_var + ctx.eps
        X = X - X.mean(0)  # [fix]
        grad_var = -(grad_out * X).sum(0) / (denom ** 2) / (2 * ctx.sqrt_var)
        grad_mean = -grad_out.sum(0) / denom
        grad_X = grad_out / denom + grad_var * 2 * X / (N - 1) + grad_mean / N
        return grad_X, None


torch.manual_seed(0)
weight = torch.randn(6, 4, requires_grad=True)
X = torch.randn(10, 6) @ weight
out = BatchNorm.apply(X)
loss = (out * torch.randn(10, 4)).sum()
first = torch.autograd.grad(loss, weight, retain_graph=True)[0]
second = torch.autograd.grad(loss, weight)[0]
print("same gradient twice:", torch.allclose(first, second))
