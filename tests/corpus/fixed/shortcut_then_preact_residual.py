# Fixed version of positive/shortcut_then_preact_residual.py.
# Fix: the answer's: the residual branch's first ReLU without inplace=True, so the block
#   input that the shortcut convolution saved is left alone.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, in_chan, out_chan, stride=1):
        super().__init__()
        self.residual = nn.Sequential(
            nn.ReLU(),  # [fix]
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
            sc = self.shortcut(x)
        else:
            sc = x
        resd = self.residual(x)
        out = resd + sc
        return out


net = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), Block(8, 8), Block(8, 16, stride=2),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))
images = torch.randn(4, 3, 16, 16)
labels = torch.randint(0, 10, (4,))
loss = F.cross_entropy(net(images), labels)
loss.backward()
print("loss", loss.item())
