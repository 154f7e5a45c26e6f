# Mirrors: pytorch/vision, torchvision/models/mnasnet.py (MNASNet.forward and classifier)
# Safe in-place ops: the classifier's nn.Dropout(p=dropout, inplace=True) follows
#   `x.mean([2, 3])`, whose backward needs nothing it could overwrite (compare
#   positive/nni_mnasnet_dropout.py, where an F.relu sits in between).
import torch
import torch.nn as nn

torch.manual_seed(0)
_BN_MOMENTUM = 1 - 0.9997


class MNASNet(nn.Module):
    def __init__(self, num_classes=10, dropout=0.2):
        super().__init__()
        layers = [
            nn.Conv2d(3, 8, 3, padding=1, stride=2, bias=False),
            nn.BatchNorm2d(8, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
            nn.Conv2d(8, 8, 3, padding=1, stride=1, groups=8, bias=False),
            nn.BatchNorm2d(8, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
            nn.Conv2d(8, 32, 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(32, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
        ]
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(32, num_classes))

    def forward(self, x):
        x = self.layers(x)
        # Equivalent to global avgpool and removing H and W dimensions.
        x = x.mean([2, 3])
        return self.classifier(x)


model = MNASNet()
model.train()
loss = nn.functional.cross_entropy(model(torch.randn(4, 3, 32, 32)), torch.tensor([0, 1, 2, 3]))
loss.backward()
print("loss", loss.item())
