# Fixed version of positive/yolov5_gradcam_full_hook_silu.py.
# Source: https://github.com/pooya-mohammadi/yolov5-gradcam/issues/7 (the usual fix; the
#   thread has none): the one pytorch-grad-cam adopted (jacobgil/pytorch-grad-cam pull
#   request 183).
# Fix: the gradient is taken by a forward hook that registers a hook on the layer's output
#   tensor; nothing wraps the SiLU's input, so its in-place write is legal.
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def initialize_weights(model):
    for m in model.modules():
        t = type(m)
        if t is nn.BatchNorm2d:
            m.eps = 1e-3
            m.momentum = 0.03
        elif t in [nn.Hardswish, nn.LeakyReLU, nn.ReLU, nn.ReLU6, nn.SiLU]:
            m.inplace = True


class Conv(nn.Module):
    def __init__(self, c1, c2, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c1, c2):
        super().__init__()
        self.cv1 = Conv(c1, c2, 1, 1)
        self.cv2 = Conv(c2, c2, 3, 1)

    def forward(self, x):
        return x + self.cv2(self.cv1(x))


class C3(nn.Module):
    def __init__(self, c1, c2, n=1):
        super().__init__()
        c_ = c2 // 2
        self.cv1 = Conv(c1, c_, 1, 1)
        self.cv2 = Conv(c1, c_, 1, 1)
        self.cv3 = Conv(2 * c_, c2, 1)
        self.m = nn.Sequential(*(Bottleneck(c_, c_) for _ in range(n)))

    def forward(self, x):
        return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), dim=1))


class Model(nn.Module):
    def __init__(self, nc=4):
        super().__init__()
        self.model = nn.Sequential(Conv(3, 8, 3, 2), C3(8, 8), Conv(8, 16, 3, 2), C3(16, 16),
                                   nn.Conv2d(16, nc, 1))
        initialize_weights(self)

    def forward(self, x):
        return self.model(x).flatten(2).amax(2)


def find_yolo_layer(model, layer_name):
    hierarchy = layer_name.split("_")
    target_layer = model.model._modules[hierarchy[0]]
    for h in hierarchy[1:]:
        target_layer = target_layer._modules[h]
    return target_layer


class YOLOV5GradCAM:
    def __init__(self, model, layer_name, img_size=(32, 32)):
        self.model = model
        self.gradients = dict()
        self.activations = dict()

        def backward_hook(module, input, output):
            def _store_grad(grad):
                self.gradients["value"] = grad

            output.register_hook(_store_grad)  # [fix]
            return None

        def forward_hook(module, input, output):
            self.activations["value"] = output
            return None

        target_layer = find_yolo_layer(self.model, layer_name)
        target_layer.register_forward_hook(forward_hook)
        target_layer.register_forward_hook(backward_hook)  # [fix]
        self.model(torch.zeros(1, 3, *img_size))
        print("[INFO] saliency_map size :", self.activations["value"].shape[2:])

    def forward(self, input_img):
        b, c, h, w = input_img.size()
        tic = time.time()
        logits = self.model(input_img)
        score = logits[0].max()
        self.model.zero_grad()
        score.backward(retain_graph=True)
        print("[INFO] model-backward took: ", round(time.time() - tic, 4), "seconds")
        gradients, activations = self.gradients["value"], self.activations["value"]
        weights = gradients.view(b, gradients.size(1), -1).mean(2).view(b, -1, 1, 1)
        saliency_map = F.relu((weights * activations).sum(1, keepdim=True))
        return F.interpolate(saliency_map, size=(h, w), mode="bilinear", align_corners=False)

    def __call__(self, input_img):
        return self.forward(input_img)


class YOLOV5TorchObjectDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Model().eval()

    def forward(self, img):
        return self.model(img)


model = YOLOV5TorchObjectDetector()
saliency_method = YOLOV5GradCAM(model=model, layer_name="model_3_cv3_act", img_size=(32, 32))
masks = saliency_method(torch.rand(1, 3, 32, 32))
print("saliency", masks.shape)
