# Source: https://github.com/rusty1s/pytorch_scatter/issues/119
# Report: "RuntimeError on backward pass through scatter_softmax": with torch_scatter
#   2.0.3, backward through scatter_softmax fails with the in-place error; "this seems to
#   be a result of scatter_softmax calling in-place functions". The composite computes
#   recentered_scores.exp_() and then divides that result in place with div_, but exp's
#   backward needs its output.
# In-place op: line 37 (`recentered_scores_exp.div_(normalizing_constants)`).
# Saved by: line 34 (`recentered_scores.exp_()` keeps its result for backward).
# Fix: fixed/scatter_softmax_inplace.py: the division done out of place.
# Shrunk: scatter_max/scatter_sum written with torch's own scatter_reduce/scatter_add;
#   the reporter's minimal example (6 scores, 3 groups) as the driver.
import torch

torch.manual_seed(0)


def scatter_sum(src, index, dim=-1):
    out = torch.zeros(int(index.max()) + 1, dtype=src.dtype)
    return out.scatter_add(dim, index, src)


def scatter_max(src, index, dim=-1):
    out = torch.zeros(int(index.max()) + 1, dtype=src.dtype)
    return out.scatter_reduce(dim, index, src, reduce="amax", include_self=False), None


def scatter_softmax(src, index, dim=-1, eps=1e-12):
    if not torch.is_floating_point(src):
        raise ValueError('`scatter_softmax` can only be computed over tensors with '
                         'floating point data types.')
    max_value_per_index = scatter_max(src, index, dim=dim)[0]
    max_per_src_element = max_value_per_index.gather(dim, index)
    recentered_scores = src - max_per_src_element
    recentered_scores_exp = recentered_scores.exp_()  # [saves]
    sum_per_index = scatter_sum(recentered_scores_exp, index, dim)
    normalizing_constants = sum_per_index.add_(eps).gather(dim, index)
    return recentered_scores_exp.div_(normalizing_constants)  # [inplace]


# Generate src and index tensors
src = torch.randn(6, requires_grad=True)
index = torch.tensor([0, 1, 0, 1, 2, 1])
# Get softmax
softmax_out = scatter_softmax(src, index)
# Sum to allow backward call (weighted, so that the gradient is not zero)
out = torch.sum(softmax_out * torch.arange(6.0))
out.backward()
print(src.grad)
