# Mirrors: huggingface/pytorch-image-models, timm/data/mixup.py (Mixup._mix_batch:
#   `x_flipped = x.flip(0).mul_(1. - lam); x.mul_(lam).add_(x_flipped)`, and
#   mixup_target / one_hot building the soft targets with scatter_)
# Safe in-place ops: mixing writes into the input batch and target tensors, which do not
#   require grad, before the model's forward; the training step follows.
import torch
import torch.nn as nn

torch.manual_seed(0)


def one_hot(x, num_classes, on_value=1., off_value=0.):
    x = x.long().view(-1, 1)
    return torch.full((x.size()[0], num_classes), off_value).scatter_(1, x, on_value)


def mixup_target(target, num_classes, lam=1., smoothing=0.0):
    off_value = smoothing / num_classes
    on_value = 1. - smoothing + off_value
    y1 = one_hot(target, num_classes, on_value=on_value, off_value=off_value)
    y2 = one_hot(target.flip(0), num_classes, on_value=on_value, off_value=off_value)
    return y1 * lam + y2 * (1. - lam)


class Mixup:
    def __init__(self, mixup_alpha=1., label_smoothing=0.1, num_classes=10):
        self.mixup_alpha = mixup_alpha
        self.label_smoothing = label_smoothing
        self.num_classes = num_classes

    def _mix_batch(self, x):
        lam = float(torch.distributions.Beta(self.mixup_alpha, self.mixup_alpha).sample())
        if lam == 1.:
            return 1.
        x_flipped = x.flip(0).mul_(1. - lam)
        x.mul_(lam).add_(x_flipped)
        return lam

    def __call__(self, x, target):
        assert len(x) % 2 == 0, 'Batch size should be even when using this'
        lam = self._mix_batch(x)
        target = mixup_target(target, self.num_classes, lam, self.label_smoothing)
        return x, target


mixup_fn = Mixup(num_classes=10)
model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(8, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
input, target = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
input, target = mixup_fn(input, target)
output = model(input)
loss = torch.sum(-target * nn.functional.log_softmax(output, dim=-1), dim=-1).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("loss", loss.item())
