# Mirrors: facebookresearch/fairseq, fairseq/modules/multihead_attention.py
#   (MultiheadAttention.forward with separate q_proj/k_proj/v_proj: `q = self.q_proj(query)`
#   then `q *= self.scaling`)
# Safe in-place ops: `q *= self.scaling` on the output of a Linear, which nothing has
#   saved and which is not one of several views (compare positive/mult_q_scaling.py, where
#   q is a chunk of a fused projection).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, query, key, value, key_padding_mask=None):
        tgt_len, bsz, embed_dim = query.size()
        q = self.q_proj(query)
        k = self.k_proj(key)
        v = self.v_proj(value)
        q *= self.scaling

        q = q.contiguous().view(tgt_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        k = k.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        v = v.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        src_len = k.size(1)

        attn_weights = torch.bmm(q, k.transpose(1, 2))
        if key_padding_mask is not None:
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len)
            attn_weights = attn_weights.masked_fill(
                key_padding_mask.unsqueeze(1).unsqueeze(2).to(torch.bool), float("-inf"))
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)
        attn_weights_float = F.softmax(attn_weights, dim=-1)
        attn_probs = F.dropout(attn_weights_float, p=self.dropout, training=self.training)
        attn = torch.bmm(attn_probs, v)
        attn = attn.transpose(0, 1).contiguous().view(tgt_len, bsz, embed_dim)
        return self.out_proj(attn)


attn = MultiheadAttention(8, 2)
x = torch.randn(5, 2, 8)
key_padding_mask = torch.tensor([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]])
loss = attn(x, x, x, key_padding_mask=key_padding_mask).pow(2).mean()
loss.backward()
print("loss", loss.item())
