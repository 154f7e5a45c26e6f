# Fixed version of positive/gan_lossd_step_then_lossg.py.
# Source: https://blog.csdn.net/odbej/article/details/125158288 (the post's fix).
# Fix: D trains on g.detach(); after D's step the generator's loss is computed from a new
#   D(g), whose graph holds D's weights as they are now.
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
    lossD = bce(D(real), ones) + bce(D(g.detach()), zeros)
    optimD.zero_grad()
    lossD.backward()
    optimD.step()

    lossG = bce(D(g), ones)  # [fix]
    optimG.zero_grad()
    lossG.backward()
    optimG.step()

print("lossD", lossD.item(), "lossG", lossG.item())
