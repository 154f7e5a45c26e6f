# Source: https://github.com/pytorch/tutorials/pull/1594
# Report: writing the "fusing convolution and batch norm" custom Function tutorial, a
#   reviewer suggests that a once-differentiable backward may reuse buffers by working in
#   place; the author tries it and finds that modifying the saved input X in place breaks
#   gradcheck, which runs the backward more than once: the second backward finds X modified
#   ("one of the variables needed for gradient computation has been modified by an inplace
#   operation").
# In-place op: line 35 (`X.sub_(...)`: the backward centres the saved input in place).
# Saved by: line 23 (`ctx.save_for_backward(X)`).
# Fix: fixed/fused_bn_backward_inplace_saved.py, what the tutorial kept: the backward
#   computes the centred input out of place.
# Shrunk: the tutorial's batch-norm Function on a 2-d input (no convolution), and two
#   backward passes over one graph (retain_graph), as gradcheck makes.
import torch
from torch.autograd.function import once_differentiable


class BatchNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, eps=1e-3):
        mean = X.mean(0)
        var = X.var(0, unbiased=True)
        ctx.save_for_backward(X)  # [saves]
        ctx.eps = eps
        ctx.sqrt_var = torch.sqrt(var)
        return (X - mean) / (ctx.sqrt_var + eps)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (X,) = ctx.saved_tensors
        N = X.shape[0]
        denom = ctx.sqrt_var + ctx.eps
        # reuse X's buffer for the centred input to save memory
        X.sub_(X.mean(0))  # [inplace]
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
