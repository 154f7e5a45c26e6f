# Source: https://github.com/abhiskk/fast-neural-style/issues/12
# Report: adding nn.Tanh() as the transformer network's last layer makes training fail with
#   "one of the variables needed for gradient computation has been modified by an inplace
#   operation" (also asked in pytorch/pytorch#1321: nn.Tanh itself is out of place). The
#   training step subtracts the ImageNet mean from the network's output in place
#   (utils.subtract_imagenet_mean_batch: `batch -= mean`) before the VGG loss; Tanh keeps
#   its output for backward, the last convolution did not. The maintainer fixed it in the
#   `tanh-fix` branch.
# In-place op: line 40 (`batch -= mean` on the stylised output).
# Saved by: line 31 (`self.tanh(...)`: tanh's backward needs its output).
# Fix: fixed/fast_neural_style_tanh_mean_sub.py, the usual fix (the branch's diff is not in
#   the thread): the mean is subtracted out of place, as later versions of the utils do.
# Shrunk: a two-convolution transformer net ending in Tanh, a
#   one-layer stand-in for VGG's features, the content loss only; random images, one step.
import torch
import torch.nn as nn

torch.manual_seed(0)


class TransformerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.relu = nn.ReLU()
        self.deconv = nn.Conv2d(8, 3, 3, padding=1)
        self.tanh = nn.Tanh()

    def forward(self, x):
        y = self.deconv(self.relu(self.conv1(x)))
        return self.tanh(y)  # [saves]


def subtract_imagenet_mean_batch(batch):
    """Subtract ImageNet mean pixel-wise from a BGR image."""
    mean = torch.zeros_like(batch)
    mean[:, 0, :, :] = 103.939
    mean[:, 1, :, :] = 116.779
    mean[:, 2, :, :] = 123.680
    batch -= mean  # [inplace]


transformer = TransformerNet()
vgg_features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())
optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)

x = torch.rand(2, 3, 16, 16) * 255
optimizer.zero_grad()
y = transformer(x)
xc = x.clone()
subtract_imagenet_mean_batch(y)
subtract_imagenet_mean_batch(xc)
content_loss = nn.functional.mse_loss(vgg_features(y), vgg_features(xc).detach())
content_loss.backward()
optimizer.step()
print("content loss", content_loss.item())
