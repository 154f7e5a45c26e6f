# Mirrors: argusswift/YOLOv4-pytorch, model/backbones/CSPDarknet53.py (Convolutional,
#   CSPBlock, CSPFirstStage, with the repository's default activate="mish")
# Safe in-place ops: CSPBlock's `out += residual` adds into the output of the block's last
#   Convolutional, a Mish, `x * torch.tanh(F.softplus(x))`: the product's backward needs
#   its two operands, not the product, so the in-place sum is safe (compare
#   positive/yolov4_csp_relu_residual.py, the same stage with activate="relu", whose
#   ReLU saves its output). One training step of one CSP stage.
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
                 activate="mish"):
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
            x = self.__activate(x)
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
        out += residual
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
