"""espnet 202511, espnet2/asr/state_spaces/components.py:390 (GG001: ``self.s += 1e-4``
writes the standard deviation ``torch.std_mean`` returned, which its backward needs).

Judged true. ``std_mean``'s backward reads its first output (derivatives.yaml:
``std_mean_backward(grads[0], grads[1], self, result0, ...)``); the in-place add bumps
its version, and ``loss.backward()`` raises whenever the input requires grad.
"""

import torch
from espnet2.asr.state_spaces.components import ReversibleInstanceNorm1dInput
from judge import judge


def training() -> None:
    norm = ReversibleInstanceNorm1dInput(4).train()
    x = torch.randn(2, 6, 4, requires_grad=True)
    norm(x).sum().backward()


judge(training=training)
