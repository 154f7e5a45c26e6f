# Mirrors: karpathy/nanoGPT, model.py (CausalSelfAttention, manual attention path, and
#   Block with `x = x + self.attn(self.ln_1(x))`)
# No in-place op at all on the graph: split() gives three views that are only read,
#   masked_fill is out of place, residuals are `x = x + ...`. A precision check for
#   views and masks.
import math

import torch
import torch.nn as nn
from torch.nn import functional as F

torch.manual_seed(0)


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd=16, n_head=2, block_size=8, dropout=0.1):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.n_head = n_head
        self.n_embd = n_embd
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                             .view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble all head outputs side by side
        y = self.resid_dropout(self.c_proj(y))
        return y


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(16)
        self.attn = CausalSelfAttention()
        self.ln_2 = nn.LayerNorm(16)
        self.mlp = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 16), nn.Dropout(0.1))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


block = Block()
loss = block(torch.randn(2, 8, 16)).pow(2).mean()
loss.backward()
print("loss", loss.item())
