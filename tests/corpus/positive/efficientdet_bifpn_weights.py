# Source: https://github.com/tristandb/EfficientDet-PyTorch/issues/7
# Report: training fails with "[torch.cuda.FloatTensor [3, 4]], which is output 0 of
#   ReluBackward0, is at version 1; expected version 0". The reporter narrowed it down to
#   BiFPNBlock.forward in bifpn.py: the fusion weights are normalised in place,
#   `w1 /= torch.sum(w1, dim=0) + self.epsilon`, right after the ReLU that saved them.
# In-place op: line 60 (`w1 /= ...`; `w2 /= ...` two lines below is the same bug).
# Saved by: line 59 (`w1 = self.w1_relu(self.w1)`: ReLU's backward needs its output).
# Fix: fixed/efficientdet_bifpn_weights.py: these lines changed to normalise out of place.
# Shrunk: one BiFPN block, 8 channels, feature maps of 32x32 down to 2x2.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DepthwiseConvBlock(nn.Module):
    """Depthwise separable convolution."""

    def __init__(self, in_channels, out_channels, kernel_size=1, stride=1, padding=0, dilation=1):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, stride,
                                   padding, dilation, groups=in_channels, bias=False)
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1,
                                   stride=1, padding=0, dilation=1, groups=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels, momentum=0.9997, eps=4e-5)
        self.act = nn.ReLU()

    def forward(self, inputs):
        x = self.depthwise(inputs)
        x = self.pointwise(x)
        x = self.bn(x)
        return self.act(x)


class BiFPNBlock(nn.Module):
    """Bi-directional Feature Pyramid Network"""

    def __init__(self, feature_size=64, epsilon=0.0001):
        super().__init__()
        self.epsilon = epsilon
        self.p3_td = DepthwiseConvBlock(feature_size, feature_size)
        self.p4_td = DepthwiseConvBlock(feature_size, feature_size)
        self.p5_td = DepthwiseConvBlock(feature_size, feature_size)
        self.p6_td = DepthwiseConvBlock(feature_size, feature_size)
        self.p4_out = DepthwiseConvBlock(feature_size, feature_size)
        self.p5_out = DepthwiseConvBlock(feature_size, feature_size)
        self.p6_out = DepthwiseConvBlock(feature_size, feature_size)
        self.p7_out = DepthwiseConvBlock(feature_size, feature_size)
        self.w1 = nn.Parameter(torch.rand(2, 4))
        self.w1_relu = nn.ReLU()
        self.w2 = nn.Parameter(torch.rand(3, 4))
        self.w2_relu = nn.ReLU()

    def forward(self, inputs):
        p3_x, p4_x, p5_x, p6_x, p7_x = inputs

        # Calculate Top-Down Pathway
        w1 = self.w1_relu(self.w1)  # [saves]
        w1 /= torch.sum(w1, dim=0) + self.epsilon  # [inplace]
        w2 = self.w2_relu(self.w2)
        w2 /= torch.sum(w2, dim=0) + self.epsilon

        p7_td = p7_x
        p6_td = self.p6_td(w1[0, 0] * p6_x + w1[1, 0] * F.interpolate(p7_td, scale_factor=2))
        p5_td = self.p5_td(w1[0, 1] * p5_x + w1[1, 1] * F.interpolate(p6_td, scale_factor=2))
        p4_td = self.p4_td(w1[0, 2] * p4_x + w1[1, 2] * F.interpolate(p5_td, scale_factor=2))
        p3_td = self.p3_td(w1[0, 3] * p3_x + w1[1, 3] * F.interpolate(p4_td, scale_factor=2))

        # Calculate Bottom-Up Pathway
        p3_out = p3_td
        p4_out = self.p4_out(w2[0, 0] * p4_x + w2[1, 0] * p4_td + w2[2, 0] * nn.Upsample(scale_factor=0.5)(p3_out))
        p5_out = self.p5_out(w2[0, 1] * p5_x + w2[1, 1] * p5_td + w2[2, 1] * nn.Upsample(scale_factor=0.5)(p4_out))
        p6_out = self.p6_out(w2[0, 2] * p6_x + w2[1, 2] * p6_td + w2[2, 2] * nn.Upsample(scale_factor=0.5)(p5_out))
        p7_out = self.p7_out(w2[0, 3] * p7_x + w2[1, 3] * p7_td + w2[2, 3] * nn.Upsample(scale_factor=0.5)(p6_out))

        return [p3_out, p4_out, p5_out, p6_out, p7_out]


bifpn = BiFPNBlock(feature_size=8)
features = [torch.randn(2, 8, s, s) for s in (32, 16, 8, 4, 2)]
loss = sum(f.mean() for f in bifpn(features))
loss.backward()
print("loss", loss.item())
