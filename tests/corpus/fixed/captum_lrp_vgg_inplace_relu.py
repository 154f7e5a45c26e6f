# Fixed version of positive/captum_lrp_vgg_inplace_relu.py.
# Source: https://github.com/pytorch/vision/issues/6699 (the usual fix; the issue is open).
# Fix: every ReLU of the model is made out-of-place before the backward hooks are put on.
import torch
import torch.nn as nn

torch.manual_seed(0)


def make_features(cfg):
    layers, channels = [], 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            layers += [nn.Conv2d(channels, v, 3, padding=1),
                       nn.ReLU(inplace=True)]
            channels = v
    return nn.Sequential(*layers)


class VGG(nn.Module):
    def __init__(self, features, num_classes=10):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(nn.Linear(16 * 4, 32), nn.ReLU(True),
                                        nn.Linear(32, num_classes))

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(torch.flatten(x, 1))


model = VGG(make_features([8, "M", 16, "M"])).eval()
for layer in model.modules():
    if isinstance(layer, nn.ReLU):
        layer.inplace = False  # [fix]
relevance = {}


def keep_relevance(name):
    def hook(module, grad_input, grad_output):
        relevance[name] = grad_output[0].detach()
    return hook


for name, layer in model.named_modules():
    if isinstance(layer, (nn.Conv2d, nn.Linear)):
        layer.register_full_backward_hook(keep_relevance(name))

image = torch.rand(1, 3, 16, 16, requires_grad=True)
output = model(image)
output[0, output.argmax()].backward()
print("layers attributed:", sorted(relevance))
