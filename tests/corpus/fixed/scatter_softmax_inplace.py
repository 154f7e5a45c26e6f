# Fixed version of positive/scatter_softmax_inplace.py.
# Source: https://github.com/rusty1s/pytorch_scatter/issues/119
# Fix: divide out of place. The exp_() can stay in place: nothing saved its input (the
#   subtraction's output), and its own saved output is no longer written to. The add_ on
#   the scatter sum stays too: scatter_add saves only the index.
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
    recentered_scores_exp = recentered_scores.exp_()
    sum_per_index = scatter_sum(recentered_scores_exp, index, dim)
    normalizing_constants = sum_per_index.add_(eps).gather(dim, index)
    return recentered_scores_exp.div(normalizing_constants)  # [fix]


# Generate src and index tensors
src = torch.randn(6, requires_grad=True)
index = torch.tensor([0, 1, 0, 1, 2, 1])
# Get softmax
softmax_out = scatter_softmax(src, index)
# Sum to allow backward call (weighted, so that the gradient is not zero)
out = torch.sum(softmax_out * torch.arange(6.0))
out.backward()
print(src.grad)
