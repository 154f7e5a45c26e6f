"""lightly 1.6.0, lightly/loss/barlow_twins_loss.py:86 (GG001: ``_off_diagonal(c).pow_()``
after ``torch.diagonal(c).add_(-1).pow_(2)``).

Judged false. ``pow_`` keeps its own copy of the input it needs; the diagonal's
``add_`` and the off-diagonal ``pow_`` write into ``c``, which no backward reads.
"""

import torch
from judge import judge
from lightly.loss import BarlowTwinsLoss


def with_gradients() -> None:
    z_a = torch.randn(8, 16, requires_grad=True)
    z_b = torch.randn(8, 16, requires_grad=True)
    BarlowTwinsLoss()(z_a, z_b).backward()


judge(with_gradients=with_gradients)
