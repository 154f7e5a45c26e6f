"""torch_geometric 2.8.1, torch_geometric/nn/dense/linear.py:34 (GG005:
``torch.nn.init.uniform_(weight.data, ...)`` in ``reset_weight_``, reached from
``HeteroLinear.initialize_parameters`` after ``forward_naive``'s ``x @ self.weight[i]``
kept the weight).

Judged false. ``initialize_parameters`` is the forward pre-hook a lazy ``HeteroLinear``
(``in_channels=-1``) registers: it runs once, before the first forward, and removes
itself; no forward has saved the weight yet. The analysis ran it after ``forward`` as if
a caller had re-initialised the layer between forward and backward.

A write through ``.data`` raises nothing at backward: it changes the values backward
reads. So each run here compares the weight's gradient with the one computed from the
weight as it was when forward used it; a difference is reported as the in-place error.
"""

import torch
from judge import INPLACE_ERROR, judge
from torch_geometric.nn import HeteroLinear


def _check(lin: HeteroLinear, x: torch.Tensor, types: torch.Tensor) -> None:
    out = lin(x, types)
    used = lin.weight.detach().clone()  # the weight forward read
    out.sum().backward()
    expected = torch.zeros_like(used)
    for t in range(used.size(0)):
        expected[t] = x[types == t].sum(0, keepdim=True).t() @ torch.ones(1, used.size(2))
    if not torch.allclose(lin.weight.grad, expected, atol=1e-5):
        raise RuntimeError(f"{INPLACE_ERROR} (silently: the weight changed after forward)")


def lazy() -> None:
    torch.manual_seed(0)
    x, types = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
    _check(HeteroLinear(-1, 3, num_types=3), x, types)


def sized() -> None:
    torch.manual_seed(0)
    x, types = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
    _check(HeteroLinear(4, 3, num_types=3, is_sorted=False), x, types)


judge(lazy=lazy, sized=sized)
