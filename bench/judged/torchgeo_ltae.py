"""torchgeo 0.8.1, torchgeo/models/ltae.py:124 (GG001: ``self.dropout``, a
``Dropout(inplace=True)``, writes the output of the ``nn.ReLU(inplace=True)`` that ends
``self.mlp``, which ReLU's backward needs).

Judged true. In training mode dropout multiplies its input in place; the input is the
ReLU's output, saved for its backward: ``loss.backward()`` raises.
"""

import torch
from judge import judge
from torchgeo.models import LTAE


def training() -> None:
    model = LTAE(in_channels=8, n_head=2, d_k=4, n_neurons=(16, 8), d_model=16,
                 len_max_seq=6).train()
    model(torch.randn(2, 6, 8)).sum().backward()


judge(training=training)
