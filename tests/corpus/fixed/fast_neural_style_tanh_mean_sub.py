# Fixed version of positive/fast_neural_style_tanh_mean_sub.py.
# Source: https://github.com/abhiskk/fast-neural-style/issues/12 (the usual fix, as later
#   versions of the utils subtract the mean).
# Fix: subtract_imagenet_mean_batch returns a new tensor; Tanh's saved output is left alone.
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
        return self.tanh(y)


def subtract_imagenet_mean_batch(batch):
    """Subtract ImageNet mean pixel-wise from a BGR image."""
    mean = torch.zeros_like(batch)
    mean[:, 0, :, :] = 103.939
    mean[:, 1, :, :] = 116.779
    mean[:, 2, :, :] = 123.680
    return batch - mean  # [fix]


transformer = TransformerNet()
vgg_features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())
optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)

x = torch.rand(2, 3, 16, 16) * 255
optimizer.zero_grad()
y = transformer(x)
xc = x.clone()
y = subtract_imagenet_mean_batch(y)
xc = subtract_imagenet_mean_batch(xc)
content_loss = nn.functional.mse_loss(vgg_features(y), vgg_features(xc).detach())
content_loss.backward()
optimizer.step()
print("content loss", content_loss.item())
