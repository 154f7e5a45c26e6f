# Source: https://github.com/lucidrains/x-transformers/pull/55
# Report: stacking x-transformers' ContinuousTransformerWrapper on top of an nn.LSTM fails in
#   backward: "... which is output 0 of CudnnRnnBackward, is at version 1; expected version
#   0". With dim_in equal to the model's dimension the wrapper's input projection is an
#   identity, so the wrapper adds its positional embedding in place into the LSTM's output,
#   which the LSTM's backward needs. The pull request replaces the library's in-place
#   operations by out-of-place ones (on CPU the LSTM's backward, MkldnnRnnLayerBackward,
#   needs its output too).
# In-place op: line 38 (`x += self.pos_emb(x)` in the library's wrapper).
# Saved by: line 50 (`x, _ = self.rnn(x)`: the LSTM keeps its output for backward).
# Fix: fixed/x_transformers_after_lstm.py, the pull request's change (out of place).
# Shrunk: x-transformers (not installed here) rebuilt as the wrapper's path for this call:
#   identity projection in, absolute positional embedding, a torch encoder layer standing for
#   its attention layers, identity projection out; the reporter's model and sizes, smaller.
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
        x += self.pos_emb(x)  # [inplace]
        return self.attn_layers(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(input_size=16, hidden_size=16, num_layers=1,
                           bidirectional=False, batch_first=True)
        self.transformer = ContinuousTransformerWrapper(max_seq_len=20, dim=16)

    def forward(self, x):
        x, _ = self.rnn(x)  # [saves]
        return self.transformer(x)


torch.manual_seed(0)
m = Model()
x = torch.randn(4, 10, 16)
loss = m(x).sum()
loss.backward()
print("loss", loss.item())
