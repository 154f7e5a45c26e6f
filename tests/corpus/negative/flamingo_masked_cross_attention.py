# Mirrors: lucidrains/flamingo-pytorch, flamingo_pytorch/flamingo_pytorch.py
#   (MaskedCrossAttention.forward: text_to_media_mask via masked_fill on the similarity,
#   softmax, then `attn = attn.masked_fill(text_without_media_mask, 0.)`, the line fixed in
#   issue #10 to assign its result)
# Safe: both masks are applied out of place, so the softmax output its backward needs is
#   not overwritten; sim is stabilised with a detached amax.
import torch
from torch import nn, einsum

torch.manual_seed(0)


class MaskedCrossAttention(nn.Module):
    def __init__(self, dim, dim_head=8, heads=2):
        super().__init__()
        self.scale = dim_head ** -0.5
        self.heads = heads
        inner_dim = dim_head * heads
        self.norm = nn.LayerNorm(dim)
        self.to_q = nn.Linear(dim, inner_dim, bias=False)
        self.to_kv = nn.Linear(dim, inner_dim * 2, bias=False)
        self.to_out = nn.Linear(inner_dim, dim, bias=False)

    def forward(self, x, media, media_locations):
        b, t, m = media.shape[:3]
        h = self.heads
        x = self.norm(x)
        q = self.to_q(x)
        media = media.reshape(b, t * m, -1)
        k, v = self.to_kv(media).chunk(2, dim=-1)
        q, k, v = (z.reshape(b, z.shape[1], h, -1).transpose(1, 2) for z in (q, k, v))
        q = q * self.scale

        sim = einsum('... i d, ... j d -> ... i j', q, k)

        text_time = media_locations.cumsum(dim=-1)  # at each boolean of True, increment the time counter (relative to media time)
        media_time = torch.arange(t) + 1
        text_to_media_mask = text_time[:, None, :, None] == media_time.repeat_interleave(m)[None, None, None, :]
        sim = sim.masked_fill(~text_to_media_mask, -torch.finfo(sim.dtype).max)

        sim = sim - sim.amax(dim=-1, keepdim=True).detach()
        attn = sim.softmax(dim=-1)

        text_without_media_mask = text_time == 0
        text_without_media_mask = text_without_media_mask[:, None, :, None]
        attn = attn.masked_fill(text_without_media_mask, 0.)

        out = einsum('... i j, ... j d -> ... i d', attn, v)
        out = out.transpose(1, 2).reshape(b, -1, h * out.shape[-1])
        return self.to_out(out)


xattn = MaskedCrossAttention(16)
x = torch.randn(2, 6, 16)
media = torch.randn(2, 2, 3, 16)
media_locations = torch.tensor([[False, True, False, False, True, False],
                                [True, False, False, False, False, False]])
loss = xattn(x, media, media_locations).pow(2).mean()
loss.backward()
print("loss", loss.item())
