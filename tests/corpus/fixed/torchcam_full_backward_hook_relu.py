# Fixed version of positive/torchcam_full_backward_hook_relu.py.
# Source: https://github.com/pytorch/pytorch/issues/61519 (the workaround a maintainer gave).
# Fix: no module backward hook; the forward hook registers a tensor hook on the output.
import torch
from torch import nn

torch.manual_seed(0)

mod = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                    nn.Conv2d(8, 8, 3, padding=1),
                    nn.ReLU(inplace=True))


class CamExtractor:
    def __init__(self, target_layer):
        self.activations = None
        self.gradients = None
        target_layer.register_forward_hook(self._store_activations)

    def _store_activations(self, module, inputs, output):
        self.activations = output.detach()
        output.register_hook(self._store_gradients)  # [fix]

    def _store_gradients(self, grad):
        self.gradients = grad.detach()


extractor = CamExtractor(mod[2])
x = torch.rand(1, 3, 16, 16)
scores = mod(x)
scores.mean().backward()
cam = (extractor.gradients.mean((2, 3), keepdim=True) * extractor.activations).sum(1)
print("cam", tuple(cam.shape))
