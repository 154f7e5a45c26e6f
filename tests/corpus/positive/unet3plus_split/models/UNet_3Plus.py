# -*- coding: utf-8 -*-
import torch
import torch.nn as nn

from .layers import unetConv2
from .init_weights import init_weights

channel_ratio = 0.0625


class Decoder(nn.Module):
    """One full-scale skip of the decoder (pooled down or upsampled, then conv, BN,
    ReLU(inplace=True)): the repository's hX_PT_hdY / hdX_UT_hdY layers, as the reporter
    grouped them."""

    def __init__(self, in_channels, out_channels, down=None, up=None):
        super(Decoder, self).__init__()
        layers = []
        if down:
            layers.append(nn.MaxPool2d(kernel_size=down, stride=down, ceil_mode=True))
        elif up:
            layers.append(nn.Upsample(scale_factor=up, mode='bilinear'))
        layers.extend([
            nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=1, padding=1),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True)
        ])
        self.decoder = nn.Sequential(*layers)

    def forward(self, x):
        return self.decoder(x)


class UNet_3Plus(nn.Module):

    def __init__(self, in_channels=3, n_classes=2, is_batchnorm=True):
        super(UNet_3Plus, self).__init__()
        self.in_channels = in_channels
        self.is_batchnorm = is_batchnorm
        filters = [int(x * channel_ratio) for x in (64, 128, 256, 512, 1024)]

        ## -------------Encoder--------------
        self.conv1 = unetConv2(self.in_channels, filters[0], self.is_batchnorm)
        self.maxpool1 = nn.MaxPool2d(kernel_size=2)

        self.conv2 = unetConv2(filters[0], filters[1], self.is_batchnorm)
        self.maxpool2 = nn.MaxPool2d(kernel_size=2)

        self.conv3 = unetConv2(filters[1], filters[2], self.is_batchnorm)
        self.maxpool3 = nn.MaxPool2d(kernel_size=2)

        self.conv4 = unetConv2(filters[2], filters[3], self.is_batchnorm)
        self.maxpool4 = nn.MaxPool2d(kernel_size=2)

        self.conv5 = unetConv2(filters[3], filters[4], self.is_batchnorm)

        ## -------------Decoder--------------
        self.CatChannels = filters[0]
        self.CatBlocks = 5
        self.UpChannels = self.CatChannels * self.CatBlocks
        cat, up = self.CatChannels, self.UpChannels

        # stage 4d
        self.h1_PT_hd4 = Decoder(filters[0], cat, down=8)
        self.h2_PT_hd4 = Decoder(filters[1], cat, down=4)
        self.h3_PT_hd4 = Decoder(filters[2], cat, down=2)
        self.h4_Cat_hd4 = Decoder(filters[3], cat)
        self.hd5_UT_hd4 = Decoder(filters[4], cat, up=2)
        self.conv4d_1 = Decoder(up, up)
        # stage 3d
        self.h1_PT_hd3 = Decoder(filters[0], cat, down=4)
        self.h2_PT_hd3 = Decoder(filters[1], cat, down=2)
        self.h3_Cat_hd3 = Decoder(filters[2], cat)
        self.hd4_UT_hd3 = Decoder(up, cat, up=2)
        self.hd5_UT_hd3 = Decoder(filters[4], cat, up=4)
        self.conv3d_1 = Decoder(up, up)
        # stage 2d
        self.h1_PT_hd2 = Decoder(filters[0], cat, down=2)
        self.h2_Cat_hd2 = Decoder(filters[1], cat)
        self.hd3_UT_hd2 = Decoder(up, cat, up=2)
        self.hd4_UT_hd2 = Decoder(up, cat, up=4)
        self.hd5_UT_hd2 = Decoder(filters[4], cat, up=8)
        self.conv2d_1 = Decoder(up, up)
        # stage 1d
        self.h1_Cat_hd1 = Decoder(filters[0], cat)
        self.hd2_UT_hd1 = Decoder(up, cat, up=2)
        self.hd3_UT_hd1 = Decoder(up, cat, up=4)
        self.hd4_UT_hd1 = Decoder(up, cat, up=8)
        self.hd5_UT_hd1 = Decoder(filters[4], cat, up=16)
        self.conv1d_1 = Decoder(up, up)

        self.outconv1 = nn.Conv2d(up, n_classes, 3, padding=1)

        # -------------Classification-guided Module--------------
        self.cls = nn.Sequential(
            nn.Dropout(p=0.5, inplace=True),  # [inplace]
            nn.Conv2d(filters[4], 2, 1),
            nn.AdaptiveMaxPool2d(1),
            nn.Sigmoid())

        # initialise weights
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                init_weights(m, init_type='kaiming')
            elif isinstance(m, nn.BatchNorm2d):
                init_weights(m, init_type='kaiming')

    def dotProduct(self, seg, cls):
        B, N, H, W = seg.size()
        seg = seg.view(B, N, H * W)
        final = torch.einsum("ijk,ij->ijk", [seg, cls])
        final = final.view(B, N, H, W)
        return final

    def forward(self, inputs):
        ## -------------Encoder-------------
        h1 = self.conv1(inputs)

        h2 = self.maxpool1(h1)
        h2 = self.conv2(h2)

        h3 = self.maxpool2(h2)
        h3 = self.conv3(h3)

        h4 = self.maxpool3(h3)
        h4 = self.conv4(h4)

        h5 = self.maxpool4(h4)
        hd5 = self.conv5(h5)

        # -------------Classification-------------
        cls_branch = self.cls(hd5).squeeze(3).squeeze(2)  # [inplace]

        ## -------------Decoder-------------
        hd4 = self.conv4d_1(torch.cat((self.h1_PT_hd4(h1), self.h2_PT_hd4(h2), self.h3_PT_hd4(h3),
                                       self.h4_Cat_hd4(h4), self.hd5_UT_hd4(hd5)), 1))
        hd3 = self.conv3d_1(torch.cat((self.h1_PT_hd3(h1), self.h2_PT_hd3(h2), self.h3_Cat_hd3(h3),
                                       self.hd4_UT_hd3(hd4), self.hd5_UT_hd3(hd5)), 1))
        hd2 = self.conv2d_1(torch.cat((self.h1_PT_hd2(h1), self.h2_Cat_hd2(h2), self.hd3_UT_hd2(hd3),
                                       self.hd4_UT_hd2(hd4), self.hd5_UT_hd2(hd5)), 1))
        hd1 = self.conv1d_1(torch.cat((self.h1_Cat_hd1(h1), self.hd2_UT_hd1(hd2), self.hd3_UT_hd1(hd3),
                                       self.hd4_UT_hd1(hd4), self.hd5_UT_hd1(hd5)), 1))

        d1 = self.outconv1(hd1)
        return self.dotProduct(d1, cls_branch)
