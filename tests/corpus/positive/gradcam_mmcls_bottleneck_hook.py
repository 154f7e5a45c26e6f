# Source: https://github.com/jacobgil/pytorch-grad-cam/pull/183
# Report: an mmclassification developer visualising CAMs of mmcls models with
#   pytorch-grad-cam got "Output 0 of BackwardHookFunctionBackward is a view and is being
#   modified inplace": ActivationsAndGradients put a full backward hook on the target layer,
#   and the model writes into that layer's output in place further on.
# In-place op: line 36 (`out += identity` writes into the hooked norm layer's output).
# Saved by: none, a view error; line 45 (`register_full_backward_hook` makes the target layer's output an output of
#   BackwardHookFunction).
# Fix: fixed/gradcam_mmcls_bottleneck_hook.py, the merged pull request: a forward hook that
#   registers a tensor hook on the output (pytorch/pytorch#61519's workaround).
# Shrunk: an mmcls/mmcv-style ResNet bottleneck (conv, norm, ReLU(inplace), residual
#   `out += identity`) stands for the model; the thread does not name the target layer, so
#   the block's last norm layer, whose output the block adds to in place, is the one hooked.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Bottleneck(nn.Module):
    def __init__(self, channels, mid):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, mid, 1, bias=False)
        self.norm1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, padding=1, bias=False)
        self.norm2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, channels, 1, bias=False)
        self.norm3 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        out = self.relu(self.norm1(self.conv1(x)))
        out = self.relu(self.norm2(self.conv2(out)))
        out = self.norm3(self.conv3(out))
        out += identity  # [inplace]
        return self.relu(out)


class ActivationsAndGradients:
    def __init__(self, model, target_layer):
        self.model = model
        self.activations, self.gradients = [], []
        target_layer.register_forward_hook(self.save_activation)
        target_layer.register_full_backward_hook(self.save_gradient)

    def save_activation(self, module, inputs, output):
        self.activations.append(output.detach())

    def save_gradient(self, module, grad_input, grad_output):
        self.gradients = [grad_output[0].detach()] + self.gradients

    def __call__(self, x):
        return self.model(x)


model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), Bottleneck(16, 4),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5))
cam_model = ActivationsAndGradients(model, model[1].norm3)
scores = cam_model(torch.rand(2, 3, 12, 12))
scores[:, 3].sum().backward()
weights = cam_model.gradients[0].mean((2, 3), keepdim=True)
print("cam", tuple((weights * cam_model.activations[0]).sum(1).shape))
