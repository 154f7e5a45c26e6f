# Mirrors: jacobgil/pytorch-grad-cam, pytorch_grad_cam/activations_and_gradients.py
#   (ActivationsAndGradients since pull request #183: a forward hook that stores the
#   activation and registers a tensor hook on it) over torchvision's resnet BasicBlock
#   (torchvision/models/resnet.py: ReLU(inplace=True), `out += identity`).
# Safe in-place ops: no module backward hook wraps the target layer's output in a custom
#   Function, so the block's in-place ReLU and residual add may write into it; the tensor
#   hook receives the gradient of the value the graph uses.
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


class ActivationsAndGradients:
    def __init__(self, model, target_layers):
        self.model = model
        self.gradients, self.activations = [], []
        for target_layer in target_layers:
            target_layer.register_forward_hook(self.save_activation)

    def save_activation(self, module, inputs, output):
        self.activations.append(output.cpu().detach())

        def _store_grad(grad):
            self.gradients = [grad.cpu().detach()] + self.gradients

        output.register_hook(_store_grad)

    def __call__(self, x):
        self.gradients, self.activations = [], []
        return self.model(x)


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                      BasicBlock(8), BasicBlock(8), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(8, 4)).eval()
cam = ActivationsAndGradients(model, [model[3].bn2])
scores = cam(torch.rand(2, 3, 12, 12))
scores[:, 1].sum().backward()
weights = cam.gradients[0].mean((2, 3), keepdim=True)
print("cam", tuple(torch.relu((weights * cam.activations[0]).sum(1)).shape))
