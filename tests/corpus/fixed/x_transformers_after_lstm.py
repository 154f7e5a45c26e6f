# Fixed version of positive/x_transformers_after_lstm.py.
# Source: https://github.com/lucidrains/x-transformers/pull/55 (merged).
# Fix: the positional embedding is added out of place; the LSTM's saved output is untouched.
import torch
from torch import nn


class AbsolutePositionalEmbedding(nn.Module):
    def __init__(self, dim, max_seq_len):
        super().__init__()
        self.emb = nn.Embedding(max_seq_len, dim)

    def forward(self, x):
        return self.emb(torch.arange(x.shape[1]))[None]


class ContinuousTransformerWrapper(nn.Module):
    def __init__(self, max_seq_len, dim, depth=1, heads=4, dim_in=None):
        super().__init__()
        self.pos_emb = AbsolutePositionalEmbedding(dim, max_seq_len)
        self.project_in = nn.Linear(dim_in, dim) if dim_in is not None else nn.Identity()
        self.attn_layers = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(dim, heads, 2 * dim, batch_first=True), depth)

    def forward(self, x):
        x = self.project_in(x)
        x = x + self.pos_emb(x)  # [fix]
        return self.attn_layers(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(input_size=16, hidden_size=16, num_layers=1,
                           bidirectional=False, batch_first=True)
        self.transformer = ContinuousTransformerWrapper(max_seq_len=20, dim=16)

    def forward(self, x):
        x, _ = self.rnn(x)
        return self.transformer(x)


torch.manual_seed(0)
m = Model()
x = torch.randn(4, 10, 16)
loss = m(x).sum()
loss.backward()
print("loss", loss.item())
