# Source: https://github.com/tfjgeorge/nngeometry/issues/40
# Report: computing a diagonal Fisher information matrix (nngeometry's FIM with PMatDiag)
#   for torchvision's resnet18 fails: nngeometry collects per-example gradients with module
#   backward hooks on the Conv2d, Linear and BatchNorm layers, and resnet's
#   ReLU(inplace=True) after each BatchNorm then writes into a hooked output. The
#   maintainer fixed it in pull request #42 with tensor backward hooks (pytorch#61519).
# In-place op: lines 38, 52 (the stem's ReLU(inplace=True), the first refused; run by `model(x)`).
# Saved by: none, a view error; line 49 (`register_full_backward_hook` on each Conv2d/BatchNorm2d/Linear).
# Fix: fixed/nngeometry_fim_resnet_backward_hooks.py, the maintainer's fix (pull request
#   #42): a forward hook registers a tensor hook on each layer's output.
# Shrunk: a resnet stem and one BasicBlock as torchvision writes them (torchvision is not
#   installed here); the FIM reduced to the squared output gradients the hooks see for
#   each sampled class; random images.
import torch
import torch.nn as nn

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8),
                      nn.ReLU(inplace=True), BasicBlock(8), nn.AdaptiveAvgPool2d(1),  # [inplace]
                      nn.Flatten(), nn.Linear(8, 10)).eval()
diag = {}


def accumulate(module, grad_input, grad_output):
    diag[module] = diag.get(module, 0) + grad_output[0].pow(2).sum(0)


for layer in model.modules():
    if isinstance(layer, (nn.Conv2d, nn.BatchNorm2d, nn.Linear)):
        layer.register_full_backward_hook(accumulate)

for x in torch.rand(3, 1, 3, 16, 16):
    logits = model(x)  # [inplace]
    probs = torch.softmax(logits, 1).detach()
    for c in range(logits.shape[1]):
        model.zero_grad()
        (probs[0, c].sqrt() * torch.log_softmax(logits, 1)[0, c]).backward(retain_graph=True)
print("layers", len(diag))
