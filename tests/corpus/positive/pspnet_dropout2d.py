# Source: https://github.com/meetps/pytorch-semseg/issues/121
# Report: "PSP-Net Inplace modification of a variable with requires_grad=True": pspnet
#   cannot backward (segnet can). "Using Dropout inplace causes the problem": the
#   Dropout2d(p=0.1, inplace=True) after cbr_final, whose last layer is a ReLU.
# In-place op: lines 56, 65 (`nn.Dropout2d(p=0.1, inplace=True)`, run by `self.dropout(x)`).
# Saved by: line 23 (conv2DBatchNormRelu's ReLU, which saved its output).
# Fix: fixed/pspnet_dropout2d.py, the reporter's: `nn.Dropout2d(p=0.1, inplace=False)`.
# Shrunk: a 2-conv backbone, one pyramid pooling module with 2 levels, 32x32 input.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class conv2DBatchNormRelu(nn.Module):
    def __init__(self, in_channels, n_filters, k_size, stride, padding, bias=True):
        super().__init__()
        self.cbr_unit = nn.Sequential(
            nn.Conv2d(in_channels, n_filters, kernel_size=k_size, padding=padding,
                      stride=stride, bias=bias),
            nn.BatchNorm2d(n_filters),
            nn.ReLU(inplace=True),  # [saves]
        )

    def forward(self, inputs):
        return self.cbr_unit(inputs)


class pyramidPooling(nn.Module):
    def __init__(self, in_channels, pool_sizes):
        super().__init__()
        self.paths = nn.ModuleList([
            conv2DBatchNormRelu(in_channels, in_channels // len(pool_sizes), 1, 1, 0, bias=False)
            for _ in pool_sizes])
        self.pool_sizes = pool_sizes

    def forward(self, x):
        h, w = x.shape[2:]
        output_slices = [x]
        for module, pool_size in zip(self.paths, self.pool_sizes):
            out = F.adaptive_avg_pool2d(x, pool_size)
            out = module(out)
            out = F.interpolate(out, size=(h, w), mode="bilinear", align_corners=True)
            output_slices.append(out)
        return torch.cat(output_slices, dim=1)


class pspnet(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.convbnrelu1 = conv2DBatchNormRelu(3, 8, 3, 2, 1, bias=False)
        self.convbnrelu2 = conv2DBatchNormRelu(8, 16, 3, 1, 1, bias=False)
        self.pyramid_pooling = pyramidPooling(16, [1, 2])
        self.cbr_final = conv2DBatchNormRelu(32, 16, 3, 1, 1, bias=False)
        self.dropout = nn.Dropout2d(p=0.1, inplace=True)  # [inplace]
        self.classification = nn.Conv2d(16, n_classes, 1, 1, 0)

    def forward(self, x):
        inp_shape = x.shape[2:]
        x = self.convbnrelu1(x)
        x = self.convbnrelu2(x)
        x = self.pyramid_pooling(x)
        x = self.cbr_final(x)
        x = self.dropout(x)  # [inplace]
        x = self.classification(x)
        return F.interpolate(x, size=inp_shape, mode="bilinear", align_corners=True)


model = pspnet()
model.train()
images = torch.randn(2, 3, 32, 32)
labels = torch.randint(0, 4, (2, 32, 32))
loss = F.cross_entropy(model(images), labels)
loss.backward()
print("loss", loss.item())
