# Source: https://github.com/argusswift/YOLOv4-pytorch/issues/247
# Report: with `activate='relu'` set as the default of Convolutional in
#   model/backbones/CSPDarknet53.py (line 35; the repository's default is "mish"),
#   training fails in loss.backward(): "[12, 512, 13, 13]], which is output 0 of
#   ReluBackward0, is at version 2; expected version 1". The reporter's fix: in
#   CSPBlock.forward, `out += residual` -> `out = out + residual`. With the default Mish
#   (x * tanh(softplus(x))) nothing saved the block's output; ReLU(inplace=True) saves it.
# In-place op: line 73 (`out += residual`).
# Saved by: line 56 (the ReLU of the block's last Convolutional, which saves its output).
# Fix: fixed/yolov4_csp_relu_residual.py, the reporter's: `out = out + residual`.
# Shrunk: one CSP stage (downsample conv, two split convs, one CSPBlock, concat conv) of
#   8 channels, no attention module, random data for one training step.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Mish(nn.Module):
    def forward(self, x):
        return x * torch.tanh(F.softplus(x))


norm_name = {"bn": nn.BatchNorm2d}
activate_name = {
    "relu": nn.ReLU,
    "leaky": nn.LeakyReLU,
    "mish": Mish(),
}


class Convolutional(nn.Module):
    def __init__(self, filters_in, filters_out, kernel_size, stride=1, norm="bn",
                 activate="relu"):
        super().__init__()
        self.norm = norm
        self.activate = activate
        self.__conv = nn.Conv2d(filters_in, filters_out, kernel_size, stride,
                                padding=kernel_size // 2, bias=not norm)
        if norm:
            self.__norm = norm_name[norm](num_features=filters_out)
        if activate:
            if activate == "leaky":
                self.__activate = activate_name[activate](negative_slope=0.1, inplace=True)
            if activate == "relu":
                self.__activate = activate_name[activate](inplace=True)
            if activate == "mish":
                self.__activate = activate_name[activate]

    def forward(self, x):
        x = self.__conv(x)
        if self.norm:
            x = self.__norm(x)
        if self.activate:
            x = self.__activate(x)  # [saves]
        return x


class CSPBlock(nn.Module):
    def __init__(self, in_channels, out_channels, hidden_channels=None):
        super().__init__()
        if hidden_channels is None:
            hidden_channels = out_channels
        self.block = nn.Sequential(
            Convolutional(in_channels, hidden_channels, 1),
            Convolutional(hidden_channels, out_channels, 3),
        )

    def forward(self, x):
        residual = x
        out = self.block(x)
        out += residual  # [inplace]
        return out


class CSPFirstStage(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.downsample_conv = Convolutional(in_channels, out_channels, 3, stride=2)
        self.split_conv0 = Convolutional(out_channels, out_channels, 1)
        self.split_conv1 = Convolutional(out_channels, out_channels, 1)
        self.blocks_conv = nn.Sequential(
            CSPBlock(out_channels, out_channels, in_channels),
            Convolutional(out_channels, out_channels, 1),
        )
        self.concat_conv = Convolutional(out_channels * 2, out_channels, 1)

    def forward(self, x):
        x = self.downsample_conv(x)
        x0 = self.split_conv0(x)
        x1 = self.split_conv1(x)
        x1 = self.blocks_conv(x1)
        x = torch.cat([x0, x1], dim=1)
        return self.concat_conv(x)


stage = CSPFirstStage(4, 8)
images = torch.randn(2, 4, 16, 16)
loss = stage(images).pow(2).mean()
loss.backward()
print("loss", loss.item())
