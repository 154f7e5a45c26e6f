"""segmentation-models-pytorch 0.6.0, decoders/upernet/decoder.py:177 (GG001:
``features[i] = norm(features[i])`` taken for a write into a tensor layer_norm saved).

Judged false. ``features`` is the encoder's list of feature maps, and ``features[2:]``
a new list: the assignment replaces a list slot, no tensor is written.
"""

import segmentation_models_pytorch as smp
import torch
from judge import judge


def training() -> None:
    model = smp.UPerNet(encoder_name="resnet18", encoder_weights=None, classes=2).train()
    model(torch.randn(2, 3, 64, 64)).sum().backward()


judge(training=training)
