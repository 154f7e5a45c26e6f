# Source: https://github.com/pytorch/pytorch/issues/15428
# Report: "Maybe this is something about computing graph?": a residual Block whose
#   forward computes the shortcut first, `sc = self.shortcut(x)` (a strided 1x1 conv when
#   the shape changes, else x itself), then `resd = self.residual(x)`, fails in backward
#   with the in-place error; computing the residual branch first works. The answer: the
#   first layer of self.residual modifies x in place, and the shortcut's convolution
#   needs x for its backward; remove that layer's inplace=True.
# In-place op: lines 26 and 46 (the residual branch's leading in-place ReLU, built and
#   called through the Sequential).
# Saved by: line 43 (`self.shortcut(x)`, a convolution that saves its input x).
# Fix: fixed/shortcut_then_preact_residual.py, the answer's: drop inplace=True from the
#   residual branch's first layer.
# Shrunk: two Blocks (one that changes the shape, one that does not), 8 and 16 channels,
#   a pooled linear head, random images and labels for one training step.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, in_chan, out_chan, stride=1):
        super().__init__()
        self.residual = nn.Sequential(
            nn.ReLU(inplace=True),  # [inplace]
            nn.Conv2d(in_chan, out_chan, 3, stride, 1, bias=False),
            nn.BatchNorm2d(out_chan),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_chan, out_chan, 3, 1, 1, bias=False),
            nn.BatchNorm2d(out_chan),
        )
        self.shortcut = nn.Sequential(
            nn.Conv2d(in_chan, out_chan, 1, stride, bias=False),
            nn.BatchNorm2d(out_chan),
        )
        self.stride = stride
        self.in_chan = in_chan
        self.out_chan = out_chan

    def forward(self, x):
        if not self.stride == 1 or not self.in_chan == self.out_chan:
            sc = self.shortcut(x)  # [saves]
        else:
            sc = x
        resd = self.residual(x)  # [inplace]
        out = resd + sc
        return out


net = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), Block(8, 8), Block(8, 16, stride=2),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))
images = torch.randn(4, 3, 16, 16)
labels = torch.randint(0, 10, (4,))
loss = F.cross_entropy(net(images), labels)
loss.backward()
print("loss", loss.item())
