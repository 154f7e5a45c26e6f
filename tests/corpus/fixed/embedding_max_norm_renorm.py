# Fixed version of positive/embedding_max_norm_renorm.py.
# Source: https://github.com/pytorch/pytorch/issues/26596
# Fix: the one nn.Embedding's docstring now gives (PR #45595): clone the weight before
#   using it outside the embedding, so the in-place renorm does not touch what the
#   matmul saved.
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

a = embedding.weight.clone() @ W.t()  # Line a  # [fix]
b = embedding(idx) @ W.t()    # Line b

out = (a.unsqueeze(0) + b.unsqueeze(1))
loss = out.sigmoid().prod()
loss.backward()
optimizer.step()
print("loss", loss.item())
