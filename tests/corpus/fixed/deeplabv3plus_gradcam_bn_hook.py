# Fixed version of positive/deeplabv3plus_gradcam_bn_hook.py.
# Source: https://github.com/WZMIAOMIAO/deep-learning-for-image-processing/issues/689 (the
#   usual fix; the thread has none): the one pytorch-grad-cam adopted (jacobgil/pytorch-grad-cam
#   pull request 183).
# Fix: the gradient is taken by a forward hook that registers a hook on the target layer's
#   output tensor, so the module's output is not wrapped and the in-place ReLU after it is safe.
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
            nn.ReLU(inplace=True),
            nn.Dropout(0.1),
        )
        self.cls_conv = nn.Conv2d(c, num_classes, 1, stride=1)

    def forward(self, x):
        H, W = x.size(2), x.size(3)
        low_level_features = self.low(x)
        x = self.aspp(self.high(low_level_features))
        low_level_features = self.shortcut_conv(low_level_features)
        x = F.interpolate(x, size=low_level_features.shape[2:], mode="bilinear", align_corners=True)
        x = self.cat_conv(torch.cat((x, low_level_features), dim=1))
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
            self.handles.append(target_layer.register_forward_hook(self.save_gradient))  # [fix]

    def save_activation(self, module, input, output):
        self.activations.append(output.cpu().detach())

    def save_gradient(self, module, input, output):
        def _store_grad(grad):
            self.gradients = [grad.cpu().detach()] + self.gradients

        output.register_hook(_store_grad)  # [fix]

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
