# Source: https://github.com/voldemortX/pytorch-auto-drive/issues/121
# Report: training RESA (ResNet-18) for lane detection fails in backward with "...
#   [torch.cuda.FloatTensor [1, 128, 45, 80]], which is output 0 of ReluBackward0, is at
#   version 20; expected version 0". The channel reducer ends in F.relu, whose output RESA's
#   feature-shift aggregator then updates in place, `x.add_(...)`, 4 directions x 5
#   iterations = 20 writes. The maintainer's answer: replace every `.add_(` with `.add(`.
# In-place op: lines 42, 45, 48, 51 (`x.add_(...)` in the down, up, right and left passes).
# Saved by: line 26 (`F.relu(x)` in the reducer keeps its output for backward).
# Fix: fixed/resa_lane_add_relu_output.py, the maintainers' fix: `x = x + ...` out of place.
# Shrunk: the backbone replaced by one conv on random features; 8 channels on a 36 x 100
#   map; the lane head reduced to a 1x1 conv and an MSE on random targets.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RESAReducer(nn.Module):
    def __init__(self, in_channels=16, reduce=8):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, reduce, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(reduce)

    def forward(self, x):
        return F.relu(self.bn1(self.conv1(x)))  # [saves]


class RESA(nn.Module):
    def __init__(self, num_channels=8, iteration=5, alpha=2.0):
        super().__init__()
        self.iteration, self.alpha = iteration, alpha
        conv_h = [nn.Conv2d(num_channels, num_channels, (1, 9), padding=(0, 4), bias=False) for _ in range(2 * iteration)]
        conv_w = [nn.Conv2d(num_channels, num_channels, (9, 1), padding=(4, 0), bias=False) for _ in range(2 * iteration)]
        self.conv_d, self.conv_u = nn.ModuleList(conv_h[:iteration]), nn.ModuleList(conv_h[iteration:])
        self.conv_r, self.conv_l = nn.ModuleList(conv_w[:iteration]), nn.ModuleList(conv_w[iteration:])

    def forward(self, x):
        h, w = x.shape[-2:]
        for i in range(self.iteration):
            idx = (torch.arange(h) + h // 2 ** (self.iteration - i)) % h
            x.add_(self.alpha * F.relu(self.conv_d[i](x[:, :, idx, :])))  # [inplace]
        for i in range(self.iteration):
            idx = (torch.arange(h) - h // 2 ** (self.iteration - i)) % h
            x.add_(self.alpha * F.relu(self.conv_u[i](x[:, :, idx, :])))  # [inplace]
        for i in range(self.iteration):
            idx = (torch.arange(w) + w // 2 ** (self.iteration - i)) % w
            x.add_(self.alpha * F.relu(self.conv_r[i](x[:, :, :, idx])))  # [inplace]
        for i in range(self.iteration):
            idx = (torch.arange(w) - w // 2 ** (self.iteration - i)) % w
            x.add_(self.alpha * F.relu(self.conv_l[i](x[:, :, :, idx])))  # [inplace]
        return x


backbone = nn.Conv2d(3, 16, 3, padding=1)
reducer, resa, head = RESAReducer(), RESA(), nn.Conv2d(8, 5, 1)
images = torch.rand(2, 3, 36, 100)
out = head(resa(reducer(backbone(images))))
loss = F.mse_loss(out, torch.rand_like(out))
loss.backward()
print("loss", loss.item())
