# Mirrors: huggingface/pytorch-image-models, timm/models/vision_transformer.py (Attention
#   with `q, k, v = qkv.unbind(0)` and `q = q * self.scale`; Block with
#   `x = x + self.drop_path1(self.ls1(self.attn(self.norm1(x))))`; LayerScale with
#   `x.mul_(self.gamma) if self.inplace else x * self.gamma`)
# Safe in-place ops: the unbind outputs are only read; LayerScale(inplace=True) multiplies
#   the output of the attention's projection Linear in place, which nothing saved.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self, dim, num_heads=2, qkv_bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.q_norm = nn.Identity()
        self.k_norm = nn.Identity()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q, k = self.q_norm(q), self.k_norm(k)
        q = q * self.scale
        attn = q @ k.transpose(-2, -1)
        attn = attn.softmax(dim=-1)
        x = attn @ v
        x = x.transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        return x


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5, inplace=False):
        super().__init__()
        self.inplace = inplace
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x.mul_(self.gamma) if self.inplace else x * self.gamma


class Block(nn.Module):
    def __init__(self, dim, num_heads, init_values=1e-5):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, num_heads=num_heads)
        self.ls1 = LayerScale(dim, init_values=init_values, inplace=True)
        self.drop_path1 = nn.Identity()
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.ls2 = LayerScale(dim, init_values=init_values)
        self.drop_path2 = nn.Identity()

    def forward(self, x):
        x = x + self.drop_path1(self.ls1(self.attn(self.norm1(x))))
        x = x + self.drop_path2(self.ls2(self.mlp(self.norm2(x))))
        return x


blocks = nn.Sequential(Block(16, 2), Block(16, 2))
loss = blocks(torch.randn(2, 5, 16)).pow(2).mean()
loss.backward()
print("loss", loss.item())
