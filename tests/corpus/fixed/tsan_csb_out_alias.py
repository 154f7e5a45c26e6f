# Fixed version of positive/tsan_csb_out_alias.py.
# Fix: the reporter's, `out = x.clone()` in CSB.forward: the slice assignments then write
#   into a copy, and the block's input that the DRB branch saved stays as it was.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class make_dense(nn.Module):
    def __init__(self, n_channels, n_feats=8):
        super().__init__()
        self.conv_1_1 = nn.Conv2d(n_channels, n_feats, 1, padding=0, stride=1)
        self.conv_3_1 = nn.Conv2d(n_feats, n_feats, 3, padding=1, stride=1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out1x1 = self.relu(self.conv_1_1(x))
        output = self.relu(self.conv_3_1(out1x1))
        return torch.cat([output, x], 1)


class DRB(nn.Module):
    def __init__(self, n_channels, n_feats=8):
        super().__init__()
        self.dense_layers = nn.Sequential(make_dense(n_channels, n_feats))
        self.conv_1x1 = nn.Conv2d(n_channels + n_feats, n_feats, kernel_size=1, bias=False)

    def forward(self, x):
        out = self.dense_layers(x)
        out = self.conv_1x1(out)
        return x + out


class CSB(nn.Module):
    def __init__(self, n_feats):
        super().__init__()
        self.conv1 = nn.Conv2d(n_feats * 4, n_feats * 4, kernel_size=1, padding=0, bias=False)

    def forward(self, x):
        h, w = x.size(2) // 2, x.size(3) // 2
        f1 = x[:, :, 0:h, 0:w]
        f2 = x[:, :, h:, 0:w]
        f3 = x[:, :, 0:h, w:]
        f4 = x[:, :, h:, w:]
        f_all = self.conv1(torch.cat([f1, f2, f3, f4], 1))
        c = f_all.size(1) // 4
        out = x.clone()  # [fix]
        out[:, :, 0:h, 0:w] = f_all[:, 0:c]
        out[:, :, h:, 0:w] = f_all[:, c:2 * c]
        out[:, :, 0:h, w:] = f_all[:, 2 * c:3 * c]
        out[:, :, h:, w:] = f_all[:, 3 * c:]
        return out


class MCAB(nn.Module):
    def __init__(self, n_channels=8, n_feats=8):
        super().__init__()
        self.drb = DRB(n_channels, n_feats)
        self.csb = CSB(n_feats)
        self.conv3 = nn.Conv2d(n_feats, n_feats, kernel_size=3, padding=1, bias=False)

    def forward(self, x):
        down_b = self.drb(x)
        top_b = self.csb(x)
        top_b = torch.sigmoid(self.conv3(top_b))
        return down_b * top_b


first_conv = nn.Conv2d(3, 8, 1)
body = MCAB()
lr = torch.randn(2, 3, 16, 16)
hr = torch.randn(2, 8, 16, 16)
first_out = F.relu(first_conv(lr), inplace=True)
loss = F.l1_loss(body(first_out), hr)
loss.backward()
print("loss", loss.item())
