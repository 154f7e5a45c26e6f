# Source: https://github.com/WZMIAOMIAO/deep-learning-for-image-processing/issues/689
# Report: running the repository's Grad-CAM on the reporter's own DeepLabV3+ (MobileNetV2
#   backbone), with a BatchNorm2d(256) of the decoder as the target layer, fails in forward
#   with "Output 0 of BackwardHookFunctionBackward is a view and is being modified inplace".
#   The Grad-CAM helper registers `register_full_backward_hook` on the target layer, which
#   wraps its output, and the decoder's next layer, ReLU(inplace=True), writes into it.
#   Editing torch's activation.py did not help the reporter.
# In-place op: lines 39, 50 (`nn.ReLU(inplace=True)` after the target BatchNorm in cat_conv; it
#   runs in `self.cat_conv(...)`).
# Saved by: none, a view error; line 63 (the full backward hook wraps the BatchNorm's output
#   in BackwardHookFunction).
# Fix: fixed/deeplabv3plus_gradcam_bn_hook.py, the usual fix (the thread has none), the one
#   pytorch-grad-cam adopted: a forward hook that registers a hook on the output tensor
#   instead of a full backward hook on the module.
# Shrunk: the MobileNetV2 backbone and the ASPP reduced to a few convs with the same roles
#   (low-level and high-level features), 16 channels instead of 256, a 32 x 32 random image;
#   the CAM's weighting and scaling left out (only the activations and gradients are taken).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DeepLab(nn.Module):
    def __init__(self, num_classes=3, c=16):
        super().__init__()
        self.low = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU6(inplace=True))
        self.high = nn.Sequential(nn.Conv2d(8, c, 3, 2, 1), nn.BatchNorm2d(c), nn.ReLU6(inplace=True))
        self.aspp = nn.Sequential(nn.Conv2d(c, c, 1), nn.BatchNorm2d(c), nn.ReLU(inplace=True))
        self.shortcut_conv = nn.Sequential(nn.Conv2d(8, 4, 1), nn.BatchNorm2d(4), nn.ReLU(inplace=True))
        self.cat_conv = nn.Sequential(
            nn.Conv2d(4 + c, c, 3, 1, padding=1),
            nn.BatchNorm2d(c),
            nn.ReLU(inplace=True),
            nn.Dropout(0.5),
            nn.Conv2d(c, c, 3, 1, padding=1),
            nn.BatchNorm2d(c),
            nn.ReLU(inplace=True),  # [inplace]
            nn.Dropout(0.1),
        )
        self.cls_conv = nn.Conv2d(c, num_classes, 1, stride=1)

    def forward(self, x):
        H, W = x.size(2), x.size(3)
        low_level_features = self.low(x)
        x = self.aspp(self.high(low_level_features))
        low_level_features = self.shortcut_conv(low_level_features)
        x = F.interpolate(x, size=low_level_features.shape[2:], mode="bilinear", align_corners=True)
        x = self.cat_conv(torch.cat((x, low_level_features), dim=1))  # [inplace]
        x = self.cls_conv(x)
        return F.interpolate(x, size=(H, W), mode="bilinear", align_corners=True)


class ActivationsAndGradients:
    def __init__(self, model, target_layers):
        self.model = model
        self.gradients = []
        self.activations = []
        self.handles = []
        for target_layer in target_layers:
            self.handles.append(target_layer.register_forward_hook(self.save_activation))
            self.handles.append(target_layer.register_full_backward_hook(self.save_gradient))

    def save_activation(self, module, input, output):
        self.activations.append(output.cpu().detach())

    def save_gradient(self, module, grad_input, grad_output):
        self.gradients = [grad_output[0].cpu().detach()] + self.gradients

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)


model = DeepLab().eval()
target_layers = [model.cat_conv[-3]]
print(target_layers)
cam = ActivationsAndGradients(model, target_layers)
output = cam(torch.rand(1, 3, 32, 32))
mask = output.argmax(1) == 1
loss = (output[:, 1] * mask).sum()
loss.backward()
print("cam weights", cam.gradients[0].mean(dim=(2, 3)).shape)
