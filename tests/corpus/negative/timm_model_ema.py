# Mirrors: huggingface/pytorch-image-models, timm/utils/model_ema.py (ModelEmaV2: a
#   deep-copied teacher updated under torch.no_grad() with ema_v.copy_(update_fn(...)))
# Safe in-place ops: the EMA copy_ runs under no_grad, on the teacher's own tensors,
#   after optimizer.step(); the next student forward builds a new graph.
from copy import deepcopy

import torch
import torch.nn as nn

torch.manual_seed(0)


class ModelEmaV2(nn.Module):
    def __init__(self, model, decay=0.9999, device=None):
        super().__init__()
        # make a copy of the model for accumulating moving average of weights
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        self.device = device  # perform ema on different device from model if set

    def _update(self, model, update_fn):
        with torch.no_grad():
            for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                if self.device is not None:
                    model_v = model_v.to(device=self.device)
                ema_v.copy_(update_fn(ema_v, model_v))

    def update(self, model):
        self._update(model, update_fn=lambda e, m: self.decay * e + (1. - self.decay) * m)

    def set(self, model):
        self._update(model, update_fn=lambda e, m: m)


model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))
model_ema = ModelEmaV2(model, decay=0.99)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 4, (4,))
    loss = nn.functional.cross_entropy(model(x), y)
    # mean-teacher style consistency on the EMA model's (no-grad) prediction
    with torch.no_grad():
        teacher = model_ema.module(x).softmax(-1)
    loss = loss + (model(x).softmax(-1) - teacher).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    model_ema.update(model)
print("loss", loss.item())
