# Source: https://github.com/buggyyang/CDC_compression/issues/1
# Report: training the conditional diffusion compression model on one's own data fails with
#   "one of the variables needed for gradient computation has been modified by an inplace
#   operation". The reporter finds in-place additions in modules/network_components.py and
#   replaces `h += ...` by `h = h + ...`; the maintainer confirms newer torch raises it. In
#   ResnetBlock the time embedding is added in place to the output of block1, whose last
#   layer is a ReLU that keeps its output for backward.
# In-place op: line 57 (`h += self.mlp(time_emb)[:, :, None, None]`).
# Saved by: line 56 (`h = self.block1(x)`: block1 ends with nn.ReLU()).
# Fix: fixed/cdc_resnet_block_time_emb_iadd.py, the reporter's fix the maintainer confirms:
#   the addition out of place.
# Shrunk: the repository's Block and ResnetBlock (its LayerNorm over channels) and a
#   sinusoidal time embedding; one denoising step of an epsilon-prediction loss on random
#   images, no U-Net around the block.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.g = nn.Parameter(torch.ones(1, dim, 1, 1))
        self.b = nn.Parameter(torch.zeros(1, dim, 1, 1))

    def forward(self, x):
        var = torch.var(x, dim=1, unbiased=False, keepdim=True)
        mean = torch.mean(x, dim=1, keepdim=True)
        return (x - mean) / (var + self.eps).sqrt() * self.g + self.b


class Block(nn.Module):
    def __init__(self, dim, dim_out):
        super().__init__()
        self.block = nn.Sequential(nn.Conv2d(dim, dim_out, 3, padding=1), LayerNorm(dim_out),
                                   nn.ReLU())

    def forward(self, x):
        return self.block(x)


class ResnetBlock(nn.Module):
    def __init__(self, dim, dim_out, time_emb_dim):
        super().__init__()
        self.mlp = nn.Sequential(nn.LeakyReLU(0.2), nn.Linear(time_emb_dim, dim_out))
        self.block1 = Block(dim, dim_out)
        self.block2 = Block(dim_out, dim_out)
        self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()

    def forward(self, x, time_emb):
        h = self.block1(x)  # [saves]
        h += self.mlp(time_emb)[:, :, None, None]  # [inplace]
        h = self.block2(h)
        return h + self.res_conv(x)


def time_embedding(t, dim=16):
    half = dim // 2
    freqs = torch.exp(torch.arange(half) * -(math.log(10000) / (half - 1)))
    args = t[:, None] * freqs[None, :]
    return torch.cat((args.sin(), args.cos()), dim=-1)


block = ResnetBlock(3, 8, 16)
to_eps = nn.Conv2d(8, 3, 1)
x0 = torch.rand(4, 3, 16, 16)
t = torch.randint(1, 1000, (4,)).float()
alpha_bar = torch.cos(t / 1000 * math.pi / 2)[:, None, None, None] ** 2
noise = torch.randn_like(x0)
x_t = alpha_bar.sqrt() * x0 + (1 - alpha_bar).sqrt() * noise
loss = F.mse_loss(to_eps(block(x_t, time_embedding(t))), noise)
loss.backward()
print("loss", loss.item())
