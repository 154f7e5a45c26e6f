# Source: https://github.com/linkedin/Liger-Kernel/issues/254
# Report: Liger's SwiGLU Function does its backward in place, into the tensors it saved in
#   forward (its inputs). The reporter asks what happens when such an input is the saved
#   OUTPUT of another custom Function, an Exponential that keeps `exp(x)` for its backward:
#   SwiGLU's backward overwrites it before Exponential's backward reads it. Autograd's
#   version check catches it ("... output 0 of ExponentialBackward ... is at version 1").
#   The maintainers answer that the in-place backward is intended; the reporter recommends
#   doing it out of place.
# In-place op: line 45 (`a.mul_(...)`: SwiGLU's backward writes into its saved input).
# Saved by: line 23 (`ctx.save_for_backward(out)`: Exponential keeps its output).
# Fix: fixed/liger_swiglu_backward_writes_saved_exp.py, the reporter's recommendation:
#   SwiGLU's backward computes its gradients out of place.
# Shrunk: SwiGLU's Triton kernel written in torch (silu(a) * b and its gradient), the
#   thread's Exponential, a squared loss on random data.
import torch
import torch.nn.functional as F


class Exponential(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.exp(x)
        ctx.save_for_backward(out)  # [saves]
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
        # like the kernel: da is written into the buffer of a, to save memory
        a.mul_(1 - sig).add_(1).mul_(sig).mul_(dc).mul_(b)  # [inplace]
        return a, db


torch.manual_seed(0)
x = torch.randn(4, 8, requires_grad=True)
gate = torch.randn(4, 8, requires_grad=True)
x_exp = Exponential.apply(x)
y = SwiGLU.apply(x_exp, gate)
loss = (y - torch.randn(4, 8)).pow(2).mean()
loss.backward()
print("grad", x.grad.norm().item())
