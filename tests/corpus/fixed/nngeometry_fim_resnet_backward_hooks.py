# Fixed version of positive/nngeometry_fim_resnet_backward_hooks.py.
# Source: https://github.com/tfjgeorge/nngeometry/issues/40 (fixed by pull request #42).
# Fix: forward hooks register tensor hooks on the layers' outputs; no custom Function wraps
#   them, so resnet's in-place ReLU may write into them.
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
                      nn.ReLU(inplace=True), BasicBlock(8), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(8, 10)).eval()
diag = {}


def hook_output(module, inputs, output):
    def accumulate(grad):
        diag[module] = diag.get(module, 0) + grad.pow(2).sum(0)
    output.register_hook(accumulate)


for layer in model.modules():
    if isinstance(layer, (nn.Conv2d, nn.BatchNorm2d, nn.Linear)):
        layer.register_forward_hook(hook_output)  # [fix]

for x in torch.rand(3, 1, 3, 16, 16):
    logits = model(x)
    probs = torch.softmax(logits, 1).detach()
    for c in range(logits.shape[1]):
        model.zero_grad()
        (probs[0, c].sqrt() * torch.log_softmax(logits, 1)[0, c]).backward(retain_graph=True)
print("layers", len(diag))
