# Mirrors: pytorch/vision, torchvision/models/densenet.py (_DenseLayer, _DenseBlock,
#   _Transition)
# Safe in-place ops: norm -> relu (inplace=True) -> conv on the concatenation of the
#   previous features; batch norm saves its input (the concatenation), not its output,
#   so the in-place ReLU on its output is safe.
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class _DenseLayer(nn.Module):
    def __init__(self, num_input_features, growth_rate, bn_size, drop_rate):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1,
                               stride=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, stride=1,
                               padding=1, bias=False)
        self.drop_rate = float(drop_rate)

    def bn_function(self, inputs):
        concated_features = torch.cat(inputs, 1)
        bottleneck_output = self.conv1(self.relu1(self.norm1(concated_features)))
        return bottleneck_output

    def forward(self, input):
        if isinstance(input, torch.Tensor):
            prev_features = [input]
        else:
            prev_features = input
        bottleneck_output = self.bn_function(prev_features)
        new_features = self.conv2(self.relu2(self.norm2(bottleneck_output)))
        if self.drop_rate > 0:
            new_features = F.dropout(new_features, p=self.drop_rate, training=self.training)
        return new_features


class _DenseBlock(nn.ModuleDict):
    def __init__(self, num_layers, num_input_features, bn_size, growth_rate, drop_rate):
        super().__init__()
        for i in range(num_layers):
            layer = _DenseLayer(num_input_features + i * growth_rate, growth_rate, bn_size, drop_rate)
            self.add_module("denselayer%d" % (i + 1), layer)

    def forward(self, init_features):
        features = [init_features]
        for name, layer in self.items():
            new_features = layer(features)
            features.append(new_features)
        return torch.cat(features, 1)


class _Transition(nn.Sequential):
    def __init__(self, num_input_features, num_output_features):
        super().__init__()
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_input_features, num_output_features, kernel_size=1, stride=1, bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)


features = nn.Sequential(OrderedDict([
    ("conv0", nn.Conv2d(3, 8, kernel_size=3, padding=1, bias=False)),
    ("norm0", nn.BatchNorm2d(8)),
    ("relu0", nn.ReLU(inplace=True)),
    ("denseblock1", _DenseBlock(3, 8, 2, 4, 0.1)),
    ("transition1", _Transition(20, 10)),
]))
out = F.relu(features(torch.randn(2, 3, 16, 16)), inplace=True)
out = F.adaptive_avg_pool2d(out, (1, 1)).flatten(1)
loss = nn.functional.cross_entropy(nn.Linear(10, 3)(out), torch.tensor([0, 2]))
loss.backward()
print("loss", loss.item())
