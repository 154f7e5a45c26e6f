# Fixed version of positive/mmdet_pafpn_act_cfg_relu.py.
# Fix: the PR's: both additions out of place (`laterals[i - 1] = laterals[i - 1] + ...`,
#   `inter_outs[i + 1] = inter_outs[i + 1] + ...`), so the ReLU outputs stay as saved.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 norm_cfg=None, act_cfg=dict(type='ReLU'), inplace=True):
        super().__init__()
        self.with_norm = norm_cfg is not None
        self.with_activation = act_cfg is not None
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
                              bias=not self.with_norm)
        if self.with_norm:
            self.bn = nn.BatchNorm2d(out_channels)
        if self.with_activation:
            self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        x = self.conv(x)
        if self.with_norm:
            x = self.bn(x)
        if self.with_activation:
            x = self.activate(x)
        return x


class PAFPN(nn.Module):
    def __init__(self, in_channels, out_channels, norm_cfg=None, act_cfg=None):
        super().__init__()
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        self.downsample_convs = nn.ModuleList()
        self.pafpn_convs = nn.ModuleList()
        for i, in_ch in enumerate(in_channels):
            self.lateral_convs.append(ConvModule(in_ch, out_channels, 1, norm_cfg=norm_cfg,
                                                 act_cfg=act_cfg, inplace=False))
            self.fpn_convs.append(ConvModule(out_channels, out_channels, 3, padding=1,
                                             norm_cfg=norm_cfg, act_cfg=act_cfg, inplace=False))
        for i in range(len(in_channels) - 1):
            self.downsample_convs.append(ConvModule(out_channels, out_channels, 3, stride=2,
                                                    padding=1, norm_cfg=norm_cfg,
                                                    act_cfg=act_cfg, inplace=False))
            self.pafpn_convs.append(ConvModule(out_channels, out_channels, 3, padding=1,
                                               norm_cfg=norm_cfg, act_cfg=act_cfg,
                                               inplace=False))

    def forward(self, inputs):
        laterals = [conv(inputs[i]) for i, conv in enumerate(self.lateral_convs)]
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=prev_shape, mode='nearest')  # [fix]
        inter_outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]
        for i in range(0, used_backbone_levels - 1):
            inter_outs[i + 1] = inter_outs[i + 1] + self.downsample_convs[i](inter_outs[i])  # [fix]
        outs = [inter_outs[0]]
        outs.extend([self.pafpn_convs[i - 1](inter_outs[i])
                     for i in range(1, used_backbone_levels)])
        return tuple(outs)


neck = PAFPN([4, 8, 16], 8, act_cfg=dict(type='ReLU'))
feats = [torch.randn(2, 4, 32, 32), torch.randn(2, 8, 16, 16), torch.randn(2, 16, 8, 8)]
loss = sum(o.mean() for o in neck(feats))
loss.backward()
print("loss", loss.item())
