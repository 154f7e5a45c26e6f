# Mirrors: pytorch/vision, torchvision/models/vgg.py (VGG, make_layers)
# Safe in-place ops: Conv2d -> ReLU(inplace=True) (a convolution's backward needs its
#   input and weight, not its output) and, in the classifier, Linear -> ReLU(True) ->
#   Dropout (out of place).
import torch
import torch.nn as nn

torch.manual_seed(0)


class VGG(nn.Module):
    def __init__(self, features, num_classes=10, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(
            nn.Linear(32 * 2 * 2, 64),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(64, 64),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(64, num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x


def make_layers(cfg, batch_norm=False):
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


for batch_norm in (False, True):
    model = VGG(make_layers([8, "M", 16, 16, "M", 32], batch_norm=batch_norm))
    model.train()
    loss = nn.functional.cross_entropy(model(torch.randn(2, 3, 16, 16)), torch.tensor([3, 4]))
    loss.backward()
    print("batch_norm", batch_norm, "loss", loss.item())
