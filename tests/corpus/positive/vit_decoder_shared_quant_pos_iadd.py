# Source: https://github.com/thuanz123/enhancing-transformers/issues/11
# Report: the library's ViTDecoder adds its positional embedding to its input in place
#   (`token += self.de_pos_embedding`). A user decoding one quantized code with two
#   decoders, `rec_a = decoder_a(quant)` and `rec_b = decoder_b(quant)`, gets "one of the
#   variables needed for gradient computation has been modified by an inplace operation":
#   the second decoder's write changes quant after the first decoder's layers saved it. The
#   maintainer changed it to `token = token + self.de_pos_embedding`.
# In-place op: line 42 (`token += self.de_pos_embedding` in the library's ViTDecoder.forward).
# Saved by: line 43 (decoder_a's first layer norm and attention keep `token`, which is quant).
# Fix: fixed/vit_decoder_shared_quant_pos_iadd.py, the maintainer's change.
# Shrunk: enhancing-transformers (not installed here) is rebuilt as its ViTDecoder's shape:
#   a positional embedding, pre-norm transformer blocks and a linear head, small sizes; the
#   quantizer is a straight-through rounding of an encoder's output.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class ViTDecoder(nn.Module):
    def __init__(self, num_tokens, dim, depth, heads, patch_dim):
        super().__init__()
        self.de_pos_embedding = nn.Parameter(torch.randn(1, num_tokens, dim) * 0.02)
        self.transformer = nn.Sequential(*[Block(dim, heads) for _ in range(depth)])
        self.to_pixel = nn.Linear(dim, patch_dim)

    def forward(self, token):
        token += self.de_pos_embedding  # [inplace]
        return self.to_pixel(self.transformer(token))  # [saves]


encoder = nn.Linear(48, 16)
decoder_a = ViTDecoder(num_tokens=9, dim=16, depth=1, heads=2, patch_dim=48)
decoder_b = ViTDecoder(num_tokens=9, dim=16, depth=1, heads=2, patch_dim=24)
patches = torch.randn(2, 9, 48)
z = encoder(patches)
quant = z + (torch.round(z * 4) / 4 - z).detach()
rec_a = decoder_a(quant)
rec_b = decoder_b(quant)
loss = (rec_a - patches).pow(2).mean() + (rec_b - patches[..., :24]).pow(2).mean()
loss.backward()
print("loss", loss.item())
