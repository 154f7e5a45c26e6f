# Fixed version of positive/gan_loss_nonsaturating_shared_graph.py.
# Source: https://php.bkmy88.com/faq/1575425.html (the article's fix).
# Fix: the discriminator's loss sees gz.detach(); the generator's loss is computed after D's
#   step, from a new d(gz).
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
    dgz = torch.sigmoid(d(gz.detach()))  # [fix]
    dx = d(x_real)
    real_label = torch.ones(x_real.shape[0], 1)
    fake_label = torch.zeros(x_real.shape[0], 1)
    d_loss = (F.binary_cross_entropy_with_logits(dx, real_label)
              + F.binary_cross_entropy(dgz, fake_label))
    return d_loss, gz


def generator_loss(d, gz):
    return -torch.log(torch.sigmoid(d(gz)) + 1e-8).mean()


d = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
g = Generator()
d_optimizer = torch.optim.Adam(d.parameters(), lr=1e-3)
g_optimizer = torch.optim.Adam(g.parameters(), lr=1e-3)

for step in range(2):
    x_real = torch.randn(16, 6)
    d_loss, gz = loss_nonsaturating(d, g, x_real)
    d_optimizer.zero_grad()
    d_loss.backward()
    d_optimizer.step()
    g_loss = generator_loss(d, gz)
    g_optimizer.zero_grad()
    g_loss.backward()
    g_optimizer.step()

print("d_loss", d_loss.item(), "g_loss", g_loss.item())
