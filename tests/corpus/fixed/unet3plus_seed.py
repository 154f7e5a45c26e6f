"""Seed case 1, fixed: the UNet3+ of examples/unet3plus_seed.py, minus one argument.

The only change is in the cls branch (same line number as in the original):

    nn.Dropout(p=0.5, inplace=True)   ->   nn.Dropout(p=0.5)

The in-place dropout overwrote the bottom encoder's output, which the encoder's last
ReLU had saved for its backward; out of place, it leaves that tensor alone.
Every ReLU(inplace=True) of Encoder and Decoder is kept: each follows a BatchNorm,
whose backward does not need its output, so they were never the problem (the
accepted answer removed them all). One training step now runs backward cleanly.
The docstring has as many lines as the original's, so that every line of code
keeps its line number:
examples/unet3plus_seed.py and this file differ only in the docstring and line 117.
"""

import math

import torch
import torch.nn as nn

channel_ratio = 0.0625


def make_divisible(x, divisor=8):
    return int(math.ceil(x / divisor) * divisor)


class Encoder(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
        self.conv_1 = nn.Conv2d(in_channels, out_channels,
                                kernel_size=3, stride=1, padding=1, bias=False)
        self.norm_1 = nn.BatchNorm2d(out_channels)
        self.conv_2 = nn.Conv2d(out_channels, out_channels,
                                kernel_size=3, stride=1, padding=1, bias=False)
        self.norm_2 = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        x = self.conv_1(x)
        x = self.norm_1(x)
        x = self.relu(x)
        x = self.conv_2(x)
        x = self.norm_2(x)
        x = self.relu(x)
        return x


class Decoder(nn.Module):
    def __init__(self, in_channels, out_channels, down=None, up=None):
        super(Decoder, self).__init__()
        layers = []
        if down:
            layers.append(nn.MaxPool2d(kernel_size=down, stride=down))
        elif up:
            layers.append(nn.Upsample(scale_factor=up, mode='bilinear'))
        layers.extend([
            nn.Conv2d(in_channels, out_channels,
                      kernel_size=3, stride=1, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True)
        ])
        self.decoder = nn.Sequential(*layers)

    def forward(self, x):
        return self.decoder(x)


class UNet3Plus(nn.Module):
    def __init__(self, in_channels=3, n_classes=2):
        super().__init__()
        f = [make_divisible(c * channel_ratio) for c in (64, 128, 256, 512, 1024)]
        cat = f[0]          # channels of each full-scale skip
        up = cat * 5        # channels of each fused decoder stage

        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.encoder_1 = Encoder(in_channels, f[0])
        self.encoder_2 = Encoder(f[0], f[1])
        self.encoder_3 = Encoder(f[1], f[2])
        self.encoder_4 = Encoder(f[2], f[3])
        self.encoder_5 = Encoder(f[3], f[4])

        # stage 4d: e1, e2, e3 pooled down, e4 as is, e5 upsampled
        self.d4_e1 = Decoder(f[0], cat, down=8)
        self.d4_e2 = Decoder(f[1], cat, down=4)
        self.d4_e3 = Decoder(f[2], cat, down=2)
        self.d4_e4 = Decoder(f[3], cat)
        self.d4_e5 = Decoder(f[4], cat, up=2)
        self.d4 = Decoder(up, up)
        # stage 3d
        self.d3_e1 = Decoder(f[0], cat, down=4)
        self.d3_e2 = Decoder(f[1], cat, down=2)
        self.d3_e3 = Decoder(f[2], cat)
        self.d3_d4 = Decoder(up, cat, up=2)
        self.d3_e5 = Decoder(f[4], cat, up=4)
        self.d3 = Decoder(up, up)
        # stage 2d
        self.d2_e1 = Decoder(f[0], cat, down=2)
        self.d2_e2 = Decoder(f[1], cat)
        self.d2_d3 = Decoder(up, cat, up=2)
        self.d2_d4 = Decoder(up, cat, up=4)
        self.d2_e5 = Decoder(f[4], cat, up=8)
        self.d2 = Decoder(up, up)
        # stage 1d
        self.d1_e1 = Decoder(f[0], cat)
        self.d1_d2 = Decoder(up, cat, up=2)
        self.d1_d3 = Decoder(up, cat, up=4)
        self.d1_d4 = Decoder(up, cat, up=8)
        self.d1_e5 = Decoder(f[4], cat, up=16)
        self.d1 = Decoder(up, up)

        self.out_conv = nn.Conv2d(up, n_classes, kernel_size=3, stride=1, padding=1)

        # classification-guided module on the bottom encoder output
        self.cls = nn.Sequential(
            nn.Dropout(p=0.5),  # [fix]
            nn.Conv2d(make_divisible(1024 * channel_ratio), 2,
                      kernel_size=1, stride=1, padding=0),
            nn.AdaptiveMaxPool2d(1),
            nn.Sigmoid()
        )

    @staticmethod
    def _dot_product(seg, cls):
        b, c, h, w = seg.size()
        seg = seg.view(b, c, h * w)
        x = torch.einsum("ijk,ij->ijk", [seg, cls])
        x = x.view(b, c, h, w)
        return x

    def forward(self, x):
        e1 = self.encoder_1(x)
        e2 = self.encoder_2(self.pool(e1))
        e3 = self.encoder_3(self.pool(e2))
        e4 = self.encoder_4(self.pool(e3))
        e5 = self.encoder_5(self.pool(e4))

        cls = self.cls(e5).squeeze(3).squeeze(2)

        d4 = self.d4(torch.cat([self.d4_e1(e1), self.d4_e2(e2), self.d4_e3(e3),
                                self.d4_e4(e4), self.d4_e5(e5)], dim=1))
        d3 = self.d3(torch.cat([self.d3_e1(e1), self.d3_e2(e2), self.d3_e3(e3),
                                self.d3_d4(d4), self.d3_e5(e5)], dim=1))
        d2 = self.d2(torch.cat([self.d2_e1(e1), self.d2_e2(e2), self.d2_d3(d3),
                                self.d2_d4(d4), self.d2_e5(e5)], dim=1))
        d1 = self.d1(torch.cat([self.d1_e1(e1), self.d1_d2(d2), self.d1_d3(d3),
                                self.d1_d4(d4), self.d1_e5(e5)], dim=1))

        seg = self.out_conv(d1)
        return self._dot_product(seg, cls)


def main():
    torch.manual_seed(0)
    model = UNet3Plus(in_channels=3, n_classes=2)
    loss_fc = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    in_data = torch.randn(2, 3, 64, 64)
    out_data = torch.rand(2, 2, 64, 64)

    model.train()
    pred_data = model(in_data)
    optimizer.zero_grad()
    loss = loss_fc(pred_data, out_data)
    loss.backward()
    optimizer.step()
    print(f"loss {loss.item():.4f}: backward ran")


if __name__ == "__main__":
    main()
