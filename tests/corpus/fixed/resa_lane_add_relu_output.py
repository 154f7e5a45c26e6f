# Fixed version of positive/resa_lane_add_relu_output.py.
# Source: https://github.com/voldemortX/pytorch-auto-drive/issues/121 (the maintainers' fix:
#   every `.add_(` replaced with `.add(`; RESA now writes `y = y + ...`).
# Fix: the aggregator adds out of place, so the reducer's ReLU output stays as it was saved.
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
        return F.relu(self.bn1(self.conv1(x)))


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
            x = x + self.alpha * F.relu(self.conv_d[i](x[:, :, idx, :]))  # [fix]
        for i in range(self.iteration):
            idx = (torch.arange(h) - h // 2 ** (self.iteration - i)) % h
            x = x + self.alpha * F.relu(self.conv_u[i](x[:, :, idx, :]))  # [fix]
        for i in range(self.iteration):
            idx = (torch.arange(w) + w // 2 ** (self.iteration - i)) % w
            x = x + self.alpha * F.relu(self.conv_r[i](x[:, :, :, idx]))  # [fix]
        for i in range(self.iteration):
            idx = (torch.arange(w) - w // 2 ** (self.iteration - i)) % w
            x = x + self.alpha * F.relu(self.conv_l[i](x[:, :, :, idx]))  # [fix]
        return x


backbone = nn.Conv2d(3, 16, 3, padding=1)
reducer, resa, head = RESAReducer(), RESA(), nn.Conv2d(8, 5, 1)
images = torch.rand(2, 3, 36, 100)
out = head(resa(reducer(backbone(images))))
loss = F.mse_loss(out, torch.rand_like(out))
loss.backward()
print("loss", loss.item())
