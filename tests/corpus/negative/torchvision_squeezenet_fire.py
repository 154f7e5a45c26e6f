# Mirrors: pytorch/vision, torchvision/models/squeezenet.py (Fire, and the classifier's
#   Dropout -> final conv -> ReLU(inplace=True) -> AdaptiveAvgPool2d)
# Safe in-place ops: every ReLU(inplace=True) follows a convolution; the squeeze output is
#   read by both expand convolutions after its ReLU, and then left alone.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Fire(nn.Module):
    def __init__(self, inplanes, squeeze_planes, expand1x1_planes, expand3x3_planes):
        super().__init__()
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return torch.cat(
            [self.expand1x1_activation(self.expand1x1(x)),
             self.expand3x3_activation(self.expand3x3(x))], 1)


num_classes = 5
final_conv = nn.Conv2d(16, num_classes, kernel_size=1)
model = nn.Sequential(
    nn.Conv2d(3, 8, kernel_size=3, stride=2),
    nn.ReLU(inplace=True),
    nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
    Fire(8, 4, 8, 8),
    nn.Dropout(p=0.5), final_conv, nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d((1, 1)),
    nn.Flatten(),
)
loss = nn.functional.cross_entropy(model(torch.randn(2, 3, 32, 32)), torch.tensor([1, 4]))
loss.backward()
print("loss", loss.item())
