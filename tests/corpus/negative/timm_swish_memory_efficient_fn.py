# Mirrors: huggingface/pytorch-image-models, timm/layers/activations_me.py (SwishAutoFn:
#   a memory-efficient Swish as a custom autograd.Function that saves only its input and
#   recomputes the sigmoid in backward) used in a conv block with an in-place residual add.
# Safe in-place ops: the Function saves its input x, not its output; the block's
#   `x += shortcut` writes into the Function's output, a new tensor made in forward, which
#   nothing saved.
import torch
import torch.nn as nn

torch.manual_seed(0)


def swish_fwd(x):
    return x.mul(torch.sigmoid(x))


def swish_bwd(x, grad_output):
    x_sigmoid = torch.sigmoid(x)
    return grad_output * (x_sigmoid * (1 + x * (1 - x_sigmoid)))


class SwishAutoFn(torch.autograd.Function):
    """ optimised Swish w/ memory-efficient checkpoint """

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return swish_fwd(x)

    @staticmethod
    def backward(ctx, grad_output):
        x = ctx.saved_tensors[0]
        return swish_bwd(x, grad_output)


class SwishMe(nn.Module):
    def forward(self, x):
        return SwishAutoFn.apply(x)


class ConvBnAct(nn.Module):
    def __init__(self, chs):
        super().__init__()
        self.conv = nn.Conv2d(chs, chs, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(chs)
        self.act = SwishMe()

    def forward(self, x):
        shortcut = x
        x = self.act(self.bn(self.conv(x)))
        x += shortcut
        return x


block = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), ConvBnAct(8), ConvBnAct(8))
out = block(torch.rand(2, 3, 10, 10))
out.mean().backward()
print("grad", block[0].weight.grad.norm().item())
