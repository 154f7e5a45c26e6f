# Source: https://github.com/AggMan96/RK-Net/issues/9
# Report: training RK-Net fails with "[torch.cuda.FloatTensor [8, 1, 96, 96]], which is
#   output 0 of ReluBackward0, is at version ...". The answer: USAM.__call__ in model.py
#   modifies the att tensor in place (att[:, :, :, 0] = 0 and the three lines after it)
#   right after self.relu, which saved it; add `att = att.clone()` under `if self.polish:`.
# In-place op: line 39 (`att[:, :, :, 0] = 0`, first of four border writes).
# Saved by: line 37 (`att = self.relu(att)`: ReLU's backward needs its output).
# Fix: fixed/rknet_usam_polish.py, the answer's `att = att.clone()`.
# Shrunk: a 2-conv stem instead of ResNet-50, one USAM, 32x32 input.
import torch
import torch.nn as nn
from torch.nn import functional as F

torch.manual_seed(0)


class USAM(nn.Module):
    def __init__(self, kernel_size=3, padding=1, polish=True):
        super().__init__()
        kernel = torch.ones((kernel_size, kernel_size))
        kernel = kernel.unsqueeze(0).unsqueeze(0)
        self.weight = nn.Parameter(data=kernel, requires_grad=False)
        kernel2 = torch.ones((1, 1)) * (kernel_size * kernel_size)
        kernel2 = kernel2.unsqueeze(0).unsqueeze(0)
        self.weight2 = nn.Parameter(data=kernel2, requires_grad=False)
        self.polish = polish
        self.pad = padding
        self.relu = nn.ReLU()
        self.bn = nn.BatchNorm2d(1)

    def __call__(self, x):
        fmap = x.sum(1, keepdim=True)
        x1 = F.conv2d(fmap, self.weight, padding=self.pad)
        x2 = F.conv2d(fmap, self.weight2, padding=0)
        att = x2 - x1
        att = self.bn(att)
        att = self.relu(att)  # [saves]
        if self.polish:
            att[:, :, :, 0] = 0  # [inplace]
            att[:, :, :, -1] = 0
            att[:, :, 0, :] = 0
            att[:, :, -1, :] = 0
        output = x + att * x
        return output


class ft_net(nn.Module):
    def __init__(self, class_num=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 2, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.usam_1 = USAM()
        self.layer1 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.avgpool2 = nn.AdaptiveAvgPool2d((1, 1))
        self.classifier = nn.Linear(16, class_num)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.usam_1(x)
        x = self.layer1(x)
        x = self.avgpool2(x)
        x = x.view(x.size(0), x.size(1))
        return self.classifier(x)


model = ft_net()
loss = F.cross_entropy(model(torch.randn(2, 3, 32, 32)), torch.tensor([1, 7]))
loss.backward()
print("loss", loss.item())
