# Source: https://php.bkmy88.com/faq/1575425.html
# Report: a GAN's loss function (`loss_nonsaturating(d, g, x_real)`) computes the
#   discriminator's and the generator's losses from one forward pass, gz = g(z) and
#   d(gz); the training step backpropagates d_loss (retain_graph=True), steps D's optimizer,
#   then backpropagates g_loss through the same d(gz), whose saved weights the step changed:
#   "one of the variables needed for gradient computation has been modified by an inplace
#   operation".
# In-place op: line 53 (`d_optimizer.step()`).
# Saved by: line 33 (`dgz = torch.sigmoid(d(gz))`: d's layers save their weights).
# Fix: fixed/gan_loss_nonsaturating_shared_graph.py, the article's fix: d_loss is computed on
#   gz.detach(), and g_loss from d(gz) evaluated after D's update.
# Shrunk: small MLPs for d and g with a z_dim attribute, random "real" data, two steps.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, z_dim=4, out=6):
        super().__init__()
        self.z_dim = z_dim
        self.net = nn.Sequential(nn.Linear(z_dim, 16), nn.ReLU(), nn.Linear(16, out))

    def forward(self, z):
        return self.net(z)


def loss_nonsaturating(d, g, x_real):
    z = torch.randn(x_real.shape[0], g.z_dim)
    gz = g(z)
    dgz = torch.sigmoid(d(gz))  # [saves]
    dx = d(x_real)
    real_label = torch.ones(x_real.shape[0], 1)
    fake_label = torch.zeros(x_real.shape[0], 1)
    d_loss = (F.binary_cross_entropy_with_logits(dx, real_label)
              + F.binary_cross_entropy(dgz, fake_label))
    g_loss = -torch.log(dgz + 1e-8).mean()
    return d_loss, g_loss


d = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
g = Generator()
d_optimizer = torch.optim.Adam(d.parameters(), lr=1e-3)
g_optimizer = torch.optim.Adam(g.parameters(), lr=1e-3)

for step in range(2):
    x_real = torch.randn(16, 6)
    d_loss, g_loss = loss_nonsaturating(d, g, x_real)
    d_optimizer.zero_grad()
    d_loss.backward(retain_graph=True)
    d_optimizer.step()  # [inplace]
    g_optimizer.zero_grad()
    g_loss.backward()
    g_optimizer.step()

print("d_loss", d_loss.item(), "g_loss", g_loss.item())
