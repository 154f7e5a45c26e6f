# Source: https://blog.csdn.net/odbej/article/details/125158288
# Report: a GAN training step computes g = G(t) and d = D(g) once, backpropagates the
#   discriminator's loss with retain_graph=True, steps D's optimizer, and then
#   backpropagates the generator's loss, computed from the same d: backward goes through D's
#   Linear layers, whose weights optimD.step() has just changed in place ("one of the
#   variables needed for gradient computation has been modified by an inplace operation").
# In-place op: line 33 (`optimD.step()` writes D's weights).
# Saved by: line 28 (`d = D(g)`: D's Linear layers save their weights for the backward of lossG).
# Fix: fixed/gan_lossd_step_then_lossg.py, the post's fix: after D's step the graph for lossG
#   is built again (d recomputed with the updated D).
# Shrunk: small fully connected G and D, random data, two steps.
import torch
import torch.nn as nn

torch.manual_seed(0)

G = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
D = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())
optimG = torch.optim.Adam(G.parameters(), lr=1e-3)
optimD = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCELoss()

for step in range(2):
    real = torch.randn(32, 16)
    t = torch.randn(32, 8)
    ones, zeros = torch.ones(32, 1), torch.zeros(32, 1)
    g = G(t)
    d = D(g)  # [saves]

    lossD = bce(D(real), ones) + bce(d, zeros)
    optimD.zero_grad()
    lossD.backward(retain_graph=True)
    optimD.step()  # [inplace]

    lossG = bce(d, ones)
    optimG.zero_grad()
    lossG.backward()
    optimG.step()

print("lossD", lossD.item(), "lossG", lossG.item())
