# Source: https://github.com/pytorch/vision/issues/6699
# Report: torchvision's AlexNet, VGG, ResNet, DenseNet, ... build their activations with
#   nn.ReLU(inplace=True); attribution libraries such as Captum (LRP, layer attribution) put
#   full backward hooks on the layers, and the in-place ReLUs then write into the hooks'
#   BackwardHookFunction outputs ("Output 0 of BackwardHookFunctionBackward is a view and is
#   being modified inplace"). The reporter asks for a switch to build the models without
#   in-place activations.
# In-place op: lines 27, 41 (the features' `nn.ReLU(inplace=True)`, run at `self.features(x)`).
# Saved by: none, a view error; line 57 (the attribution's `register_full_backward_hook` on every Conv2d/Linear).
# Fix: fixed/captum_lrp_vgg_inplace_relu.py, the usual fix (the issue is open): the model's
#   ReLUs set to inplace=False before the hooks are put on.
# Shrunk: a VGG-style model as torchvision builds it (features, avgpool, classifier), small
#   and untrained; the attribution reduced to hooks that keep the layers' output gradients.
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
                       nn.ReLU(inplace=True)]  # [inplace]
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
        x = self.avgpool(self.features(x))  # [inplace]
        return self.classifier(torch.flatten(x, 1))


model = VGG(make_features([8, "M", 16, "M"])).eval()
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
