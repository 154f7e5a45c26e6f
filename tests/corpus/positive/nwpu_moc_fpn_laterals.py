# Source: https://github.com/lyongo/NWPU-MOC/issues/4
# Report: `python3 train.py` fails with "[torch.cuda.FloatTensor [4, 128, 64, 64]], which
#   is output 0 of ReluBackward0, is at version 1"; setting inplace=False everywhere did
#   not help. The answer: line 101 of models/FPN/FPN_Head.py,
#   `laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode='nearest')`,
#   must not use +=: the lateral convolutions end in a ReLU, which saved its output.
# In-place op: line 45 (`laterals[i - 1] += F.interpolate(...)`).
# Saved by: line 26 (the lateral ConvModule's ReLU, whose output each lateral is).
# Fix: fixed/nwpu_moc_fpn_laterals.py: `laterals[i - 1] = laterals[i - 1] + ...`.
# Shrunk: 3 levels, 8 channels, 32x32 down to 8x8.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.activate = nn.ReLU()

    def forward(self, x):
        return self.activate(self.bn(self.conv(x)))  # [saves]


class FPN(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for in_ch in in_channels:
            self.lateral_convs.append(ConvModule(in_ch, out_channels, 1))
            self.fpn_convs.append(ConvModule(out_channels, out_channels, 3, padding=1))

    def forward(self, inputs):
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]

        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode='nearest')  # [inplace]

        outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]
        return tuple(outs)


neck = FPN(in_channels=[4, 8, 16], out_channels=8)
inputs = [torch.randn(2, 4, 32, 32), torch.randn(2, 8, 16, 16), torch.randn(2, 16, 8, 8)]
loss = sum(o.mean() for o in neck(inputs))
loss.backward()
print("loss", loss.item())
