# Mirrors: huggingface/pytorch-image-models, timm/models/_efficientnet_blocks.py
#   (DepthwiseSeparableConv, InvertedResidual) with timm/layers/norm_act.py
#   (BatchNormAct2d: batch norm followed by an activation created with inplace=True)
# Safe in-place ops: SiLU(inplace=True) after batch norm (silu_ keeps a copy of its input
#   for backward), and the residual `x = self.drop_path(x) + shortcut` out of place.
import torch
import torch.nn as nn

torch.manual_seed(0)


class BatchNormAct2d(nn.BatchNorm2d):
    def __init__(self, num_features, apply_act=True, act_layer=nn.SiLU, inplace=True):
        super().__init__(num_features)
        self.act = act_layer(inplace=inplace) if apply_act else nn.Identity()

    def forward(self, x):
        x = super().forward(x)
        return self.act(x)


class DepthwiseSeparableConv(nn.Module):
    def __init__(self, in_chs, out_chs, dw_kernel_size=3, stride=1, noskip=False):
        super().__init__()
        self.has_skip = (stride == 1 and in_chs == out_chs) and not noskip
        self.conv_dw = nn.Conv2d(in_chs, in_chs, dw_kernel_size, stride, dw_kernel_size // 2,
                                 groups=in_chs, bias=False)
        self.bn1 = BatchNormAct2d(in_chs, inplace=True)
        self.conv_pw = nn.Conv2d(in_chs, out_chs, 1, bias=False)
        self.bn2 = BatchNormAct2d(out_chs, inplace=True, apply_act=False)
        self.drop_path = nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.conv_dw(x)
        x = self.bn1(x)
        x = self.conv_pw(x)
        x = self.bn2(x)
        if self.has_skip:
            x = self.drop_path(x) + shortcut
        return x


class InvertedResidual(nn.Module):
    def __init__(self, in_chs, out_chs, dw_kernel_size=3, stride=1, exp_ratio=4.0):
        super().__init__()
        mid_chs = int(in_chs * exp_ratio)
        self.has_skip = in_chs == out_chs and stride == 1
        self.conv_pw = nn.Conv2d(in_chs, mid_chs, 1, bias=False)
        self.bn1 = BatchNormAct2d(mid_chs, inplace=True)
        self.conv_dw = nn.Conv2d(mid_chs, mid_chs, dw_kernel_size, stride, dw_kernel_size // 2,
                                 groups=mid_chs, bias=False)
        self.bn2 = BatchNormAct2d(mid_chs, inplace=True)
        self.conv_pwl = nn.Conv2d(mid_chs, out_chs, 1, bias=False)
        self.bn3 = BatchNormAct2d(out_chs, apply_act=False)
        self.drop_path = nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.conv_pw(x)
        x = self.bn1(x)
        x = self.conv_dw(x)
        x = self.bn2(x)
        x = self.conv_pwl(x)
        x = self.bn3(x)
        if self.has_skip:
            x = self.drop_path(x) + shortcut
        return x


conv_stem = nn.Conv2d(3, 8, 3, 2, 1, bias=False)
bn1 = BatchNormAct2d(8, inplace=True)
blocks = nn.Sequential(DepthwiseSeparableConv(8, 8), InvertedResidual(8, 16, stride=2),
                       InvertedResidual(16, 16))
x = blocks(bn1(conv_stem(torch.randn(2, 3, 32, 32))))
loss = x.mean(dim=(2, 3)).pow(2).sum()
loss.backward()
print("loss", loss.item())
