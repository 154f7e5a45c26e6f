# Fixed version of positive/custom_op_inplace_without_mark_dirty.py.
# Source: https://github.com/pytorch/pytorch/issues/30454 (the usual fix).
# Fix: forward marks its input dirty; autograd then treats the Function as an in-place op,
#   and its output may be scaled in place like any other tensor.
import torch
import torch.nn as nn


class CustomOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x *= 2.0
        ctx.mark_dirty(x)  # [fix]
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
        logits *= self.s
        return logits


if __name__ == "__main__":
    torch.manual_seed(0)
    net = Net(16, 32)
    x = net(torch.rand(8, 16))
    x.mean().backward()
    print("grad norm", net.fc.weight.grad.norm().item())
