# Source: https://github.com/pytorch/pytorch/issues/61519
# Report: torch-cam gets a layer's feature maps and gradients with hooks; after a torch
#   update, a model whose hooked Conv2d is followed by ReLU(inplace=True) raises as soon as
#   the model runs (first seen on torchvision's densenet). The gradient itself would flow; it
#   is the module backward hook that makes the in-place write illegal.
# In-place op: lines 20, 39 (`nn.ReLU(inplace=True)` after the hooked conv, run by `mod(x)`).
# Saved by: none, a view error; line 28 (`register_full_backward_hook` on the target conv: its output becomes a
#   BackwardHookFunction output, a view that must not be modified in place).
# Fix: fixed/torchcam_full_backward_hook_relu.py, the workaround given in the thread by a
#   maintainer: a forward hook that registers a tensor hook on the output.
# Shrunk: torch-cam's extractor is reduced to the two hooks; the thread's small Sequential,
#   random input.
import torch
from torch import nn

torch.manual_seed(0)

mod = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                    nn.Conv2d(8, 8, 3, padding=1),
                    nn.ReLU(inplace=True))  # [inplace]


class CamExtractor:
    def __init__(self, target_layer):
        self.activations = None
        self.gradients = None
        target_layer.register_forward_hook(self._store_activations)
        target_layer.register_full_backward_hook(self._store_gradients)

    def _store_activations(self, module, inputs, output):
        self.activations = output.detach()

    def _store_gradients(self, module, grad_input, grad_output):
        self.gradients = grad_output[0].detach()


extractor = CamExtractor(mod[2])
x = torch.rand(1, 3, 16, 16)
scores = mod(x)  # [inplace]
scores.mean().backward()
cam = (extractor.gradients.mean((2, 3), keepdim=True) * extractor.activations).sum(1)
print("cam", tuple(cam.shape))
