# Source: https://github.com/pytorch/pytorch/issues/26596
# Report: "nn.Embedding with max_norm shows unstable behavior and causes sometimes
#   runtime error": `a = embedding.weight @ W.t()` followed by `b = embedding(idx) @ W.t()`
#   fails in backward when the Embedding has max_norm; removing max_norm or swapping the
#   two lines avoids it. With max_norm, Embedding.forward renormalizes the looked-up rows
#   of its weight in place (embedding_renorm_, under no_grad), and the matmul of line a
#   saved that weight. The fix was documented (PR #45595): clone the weight first.
# In-place op: line 29 (`embedding(idx)` renormalizes embedding.weight in place).
# Saved by: line 28 (`embedding.weight @ W.t()` keeps the weight for W's gradient).
# Fix: fixed/embedding_max_norm_renorm.py, the one now in nn.Embedding's docstring:
#   `a = embedding.weight.clone() @ W.t()`.
# Shrunk: the reporter's script as posted.
import torch
import torch.nn as nn

torch.manual_seed(0)

n, d, m = 3, 5, 7
batch_size = 11

embedding = nn.Embedding(n, d, max_norm=True)
W = torch.randn((m, d), requires_grad=True)
optimizer = torch.optim.Adam(list(embedding.parameters()) + [W], lr=1e-3)

optimizer.zero_grad()
idx = torch.tensor([1, 2])

a = embedding.weight @ W.t()  # Line a  # [saves]
b = embedding(idx) @ W.t()    # Line b  # [inplace]

out = (a.unsqueeze(0) + b.unsqueeze(1))
loss = out.sigmoid().prod()
loss.backward()
optimizer.step()
print("loss", loss.item())
