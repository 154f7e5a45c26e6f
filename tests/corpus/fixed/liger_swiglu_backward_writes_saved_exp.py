# Fixed version of positive/liger_swiglu_backward_writes_saved_exp.py.
# Source: https://github.com/linkedin/Liger-Kernel/issues/254 (the reporter's
#   recommendation: do the backward out of place).
# Fix: SwiGLU's backward makes a new tensor for da; the Exponential's saved output is left
#   as forward wrote it.
import torch
import torch.nn.functional as F


class Exponential(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.exp(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, out_grad):
        (out,) = ctx.saved_tensors
        return out_grad * out


class SwiGLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return F.silu(a) * b

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        sig = torch.sigmoid(a)
        silu = a * sig
        db = dc * silu
        da = dc * b * sig * (1 + a * (1 - sig))  # [fix]
        return da, db


torch.manual_seed(0)
x = torch.randn(4, 8, requires_grad=True)
gate = torch.randn(4, 8, requires_grad=True)
x_exp = Exponential.apply(x)
y = SwiGLU.apply(x_exp, gate)
loss = (y - torch.randn(4, 8)).pow(2).mean()
loss.backward()
print("grad", x.grad.norm().item())
