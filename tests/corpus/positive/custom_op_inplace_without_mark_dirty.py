# Source: https://github.com/pytorch/pytorch/issues/30454
# Report: a custom autograd Function multiplies its input in place in forward (`x *= 2.0`)
#   and returns it, without ctx.mark_dirty; the module then scales the Function's output in
#   place (`logits *= self.s`). The reporter saw the custom backward never run; torch 2.x
#   rejects the write: the output is the input returned as-is, a view created inside a
#   custom Function, and it may not be modified in place.
# In-place op: line 42 (`logits *= self.s` on the Function's output).
# Saved by: none, a view error; line 21 (`CustomOp.forward` returns its input, written in place, without marking
#   it dirty).
# Fix: fixed/custom_op_inplace_without_mark_dirty.py, the usual fix for an in-place custom
#   Function (the thread's answer points to the docs): `ctx.mark_dirty(x)` in forward.
# Shrunk: the thread's script, smaller sizes.
import torch
import torch.nn as nn


class CustomOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x *= 2.0
        return x

    @staticmethod
    def backward(ctx, grad_output):
        print("Running in backward...")
        return grad_output * 2.0


def custom_op(x):
    return CustomOp.apply(x)


class Net(nn.Module):
    def __init__(self, in_channel, out_channel, scale=400.0):
        super().__init__()
        self.fc = nn.Linear(in_channel, out_channel)
        self.s = scale

    def forward(self, input):
        x = self.fc(input)
        logits = custom_op(x)
        logits *= self.s  # [inplace]
        return logits


if __name__ == "__main__":
    torch.manual_seed(0)
    net = Net(16, 32)
    x = net(torch.rand(8, 16))
    x.mean().backward()
    print("grad norm", net.fc.weight.grad.norm().item())
