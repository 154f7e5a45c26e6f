# Source: https://github.com/idiap/fast-transformers/pull/10
# Report: "Replace inplace operations in recurrent linear attention": the recurrent
#   linear attention updated its state Si, Zi in place; chaining several steps to other
#   modules and calling backward fails with the in-place error.
# In-place op: lines 39, 40 (`Zi += K`, and `Si += ...` below it, on the state the previous
#   step's einsums saved).
# Saved by: line 42, 43 (the einsums of the previous step save Zi and Si).
# Fix: fixed/fast_transformers_recurrent_state.py, the pull request's change: the state is
#   updated out of place (Zi = Zi + K; Si = Si + ...).
# Shrunk: the elu feature map inline, 4 time steps of random queries/keys/values.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def elu_feature_map(x):
    return F.elu(x) + 1


class RecurrentLinearAttention(nn.Module):
    def __init__(self, eps=1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, query, key, value, state=None):
        Q = elu_feature_map(query)
        K = elu_feature_map(key)
        N, H, D = Q.shape
        _, _, M = value.shape

        if state is None:
            Si = query.new_zeros((N, H, D, M))
            Zi = query.new_zeros((N, H, D))
        else:
            Si, Zi = state

        Zi += K  # [inplace]
        Si += torch.einsum("nhd,nhm->nhdm", K, value)  # [inplace]

        Z = 1. / (torch.einsum("nhd,nhd->nh", Q, Zi) + self.eps)  # [saves]
        V = torch.einsum("nhd,nhdm,nh->nhm", Q, Si, Z)  # [saves]
        return V, [Si, Zi]


attention = RecurrentLinearAttention()
proj = nn.Linear(8, 3 * 2 * 8)
state = None
outputs = []
for step in range(4):
    x = torch.randn(2, 8)
    query, key, value = proj(x).view(2, 3, 2, 8).unbind(1)
    out, state = attention(query, key, value, state)
    outputs.append(out)
loss = torch.stack(outputs).pow(2).mean()
loss.backward()
print("loss", loss.item())
