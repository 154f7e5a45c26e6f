# Source: https://github.com/osmr/imgclsmob/issues/13
# Report: "Inplace ReLU's are unnecessary and wrong": training Xception from imgclsmob
#   (pytorchcv) fails in loss.backward() with the in-place error. Code like
#   `self.activ = nn.ReLU(inplace=True) ... x = self.activ(x)` modifies the block's input;
#   in XceptionUnit the identity convolution has already saved that input for its
#   backward. "Removing of inplace=True fixes this."
# In-place op: lines 53, 59 (DwsConvBlock's `nn.ReLU(inplace=True)`, applied to the unit's
#   input by `x = self.activ(x)`).
# Saved by: line 82 (`identity = self.identity_conv(x)`: the 1x1 conv saves its input).
# Fix: fixed/xception_dws_relu.py: the reporter's fix, inplace=True removed.
# Shrunk: init block, two stages of one unit each, small channels, 32x32 input.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, activate):
        super().__init__()
        self.activate = activate
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=False)
        self.bn = nn.BatchNorm2d(num_features=out_channels)
        if self.activate:
            self.activ = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        if self.activate:
            x = self.activ(x)
        return x


class DwsConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super().__init__()
        self.dw_conv = nn.Conv2d(in_channels, in_channels, kernel_size, stride, padding,
                                 groups=in_channels, bias=False)
        self.pw_conv = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)

    def forward(self, x):
        x = self.dw_conv(x)
        x = self.pw_conv(x)
        return x


class DwsConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, activate):
        super().__init__()
        self.activate = activate
        if self.activate:
            self.activ = nn.ReLU(inplace=True)  # [inplace]
        self.conv = DwsConv(in_channels, out_channels, kernel_size, stride, padding)
        self.bn = nn.BatchNorm2d(num_features=out_channels)

    def forward(self, x):
        if self.activate:
            x = self.activ(x)  # [inplace]
        x = self.conv(x)
        x = self.bn(x)
        return x


class XceptionUnit(nn.Module):
    def __init__(self, in_channels, out_channels, stride, reps, start_with_relu=True):
        super().__init__()
        self.resize_identity = (in_channels != out_channels) or (stride != 1)
        if self.resize_identity:
            self.identity_conv = ConvBlock(in_channels, out_channels, 1, stride, 0, activate=False)
        self.body = nn.Sequential()
        for i in range(reps):
            in_channels_i = in_channels if i == 0 else out_channels
            activate = start_with_relu if (i == 0) else True
            self.body.add_module("block{}".format(i + 1), DwsConvBlock(
                in_channels_i, out_channels, 3, 1, 1, activate=activate))
        if stride != 1:
            self.body.add_module("pool", nn.MaxPool2d(kernel_size=3, stride=stride, padding=1))

    def forward(self, x):
        if self.resize_identity:
            identity = self.identity_conv(x)  # [saves]
        else:
            identity = x.clone()
        x = self.body(x)
        x = x + identity
        return x


class Xception(nn.Module):
    def __init__(self, channels, in_channels=3, num_classes=10):
        super().__init__()
        self.features = nn.Sequential()
        self.features.add_module("init_block", nn.Sequential(
            ConvBlock(in_channels, 8, 3, 2, 0, activate=True),
            ConvBlock(8, 16, 3, 1, 0, activate=True)))
        in_channels = 16
        for i, out_channels in enumerate(channels):
            self.features.add_module("stage{}".format(i + 1), XceptionUnit(
                in_channels, out_channels, stride=2, reps=2, start_with_relu=(i != 0)))
            in_channels = out_channels
        self.features.add_module("final_pool", nn.AdaptiveAvgPool2d(1))
        self.output = nn.Linear(in_channels, num_classes)

    def forward(self, x):
        x = self.features(x)
        x = x.view(x.size(0), -1)
        x = self.output(x)
        return x


net = Xception(channels=[16, 32])
loss = nn.functional.cross_entropy(net(torch.randn(2, 3, 32, 32)), torch.tensor([0, 3]))
loss.backward()
print("loss", loss.item())
