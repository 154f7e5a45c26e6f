# Mirrors: open-mmlab/mmdetection, mmdet/models/necks/fpn.py (FPN, as in mmdet 1.x/2.x:
#   lateral ConvModules with act_cfg=None, and the top-down path
#   `laterals[i - 1] += F.interpolate(laterals[i], ...)`)
# Safe in-place ops: the laterals are plain convolution outputs (no activation), which no
#   op saved, so the in-place top-down sum is safe (compare
#   positive/nwpu_moc_fpn_laterals.py, whose laterals end in a ReLU).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FPN(nn.Module):
    def __init__(self, in_channels, out_channels, num_outs):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_ins = len(in_channels)
        self.num_outs = num_outs
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for i in range(self.num_ins):
            self.lateral_convs.append(nn.Conv2d(in_channels[i], out_channels, 1))
            self.fpn_convs.append(nn.Conv2d(out_channels, out_channels, 3, padding=1))

    def forward(self, inputs):
        assert len(inputs) == len(self.in_channels)
        # build laterals
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]

        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            laterals[i - 1] += F.interpolate(laterals[i], scale_factor=2, mode='nearest')

        # build outputs
        outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]
        if self.num_outs > len(outs):
            for i in range(self.num_outs - used_backbone_levels):
                outs.append(F.max_pool2d(outs[-1], 1, stride=2))
        return tuple(outs)


neck = FPN([4, 8, 16], 8, num_outs=4)
inputs = [torch.randn(2, 4, 32, 32), torch.randn(2, 8, 16, 16), torch.randn(2, 16, 8, 8)]
loss = sum(o.pow(2).mean() for o in neck(inputs))
loss.backward()
print("loss", loss.item())
