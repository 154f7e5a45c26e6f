# Source: https://github.com/microsoft/nni/pull/4614
# Report: "Fix bug Issue4592": the multi-trial MNASNet example
#   (examples/nas/multi-trial/mnasnet/base_mnasnet.py) failed with "one of the variables
#   needed for gradient computation has been modified by an inplace operation"; the author
#   traced it to the classifier's `nn.Dropout(p=dropout, inplace=True)`, which follows
#   `x = F.relu(x)` in forward: ReLU saved its output, the dropout overwrites it.
# In-place op: lines 56, 64 (the classifier's `nn.Dropout(p=dropout, inplace=True)`, run by
#   `self.classifier(x)`).
# Saved by: line 63 (`x = F.relu(x)`: ReLU's backward needs its output).
# Fix: fixed/nni_mnasnet_dropout.py, the pull request: `nn.Dropout(p=dropout)`.
# Shrunk: the searched cells replaced by two fixed _InvertedResidual blocks, 32x32 input.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
_BN_MOMENTUM = 1 - 0.9997


class _InvertedResidual(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size, stride, expansion_factor, bn_momentum=0.1):
        super().__init__()
        mid_ch = in_ch * expansion_factor
        self.apply_residual = (in_ch == out_ch and stride == 1)
        self.layers = nn.Sequential(
            nn.Conv2d(in_ch, mid_ch, 1, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, mid_ch, kernel_size, padding=kernel_size // 2,
                      stride=stride, groups=mid_ch, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, out_ch, 1, bias=False),
            nn.BatchNorm2d(out_ch, momentum=bn_momentum))

    def forward(self, input):
        if self.apply_residual:
            return self.layers(input) + input
        return self.layers(input)


class MNASNet(nn.Module):
    def __init__(self, num_classes=10, dropout=0.2):
        super().__init__()
        layers = [
            nn.Conv2d(3, 8, 3, padding=1, stride=2, bias=False),
            nn.BatchNorm2d(8, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
            _InvertedResidual(8, 8, 3, 1, 3, _BN_MOMENTUM),
            _InvertedResidual(8, 16, 3, 2, 3, _BN_MOMENTUM),
            nn.Conv2d(16, 32, 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(32, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
        ]
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),  # [inplace]
                                        nn.Linear(32, num_classes))

    def forward(self, x):
        x = self.layers(x)
        # Equivalent to global avgpool and removing H and W dimensions.
        x = x.mean([2, 3])
        x = F.relu(x)  # [saves]
        return self.classifier(x)  # [inplace]


model = MNASNet()
model.train()
loss = F.cross_entropy(model(torch.randn(4, 3, 32, 32)), torch.tensor([0, 1, 2, 3]))
loss.backward()
print("loss", loss.item())
