# Fixed version of positive/morvan_gan_406.py.
# Source: https://github.com/MorvanZhou/PyTorch-Tutorial/issues/89 (fixed in the
#   repository by the pull request the maintainer mentions in the thread).
# Fix: G is updated first (its loss goes through D before D changes); D is then trained
#   on G_paintings.detach(), so no backward runs through D after opt_D.step().
import torch
import torch.nn as nn

torch.manual_seed(1)

BATCH_SIZE = 64
LR_G = 0.0001           # learning rate for generator
LR_D = 0.0001           # learning rate for discriminator
N_IDEAS = 5             # number of ideas for generating an art work (Generator)
ART_COMPONENTS = 15     # total points G can draw in the canvas
PAINT_POINTS = torch.linspace(-1, 1, ART_COMPONENTS).repeat(BATCH_SIZE, 1)


def artist_works():     # painting from the famous artist (real target)
    a = torch.rand(BATCH_SIZE, 1) + 1
    paintings = a * PAINT_POINTS.pow(2) + (a - 1)
    return paintings


G = nn.Sequential(                      # Generator
    nn.Linear(N_IDEAS, 128),
    nn.ReLU(),
    nn.Linear(128, ART_COMPONENTS),
)

D = nn.Sequential(                      # Discriminator
    nn.Linear(ART_COMPONENTS, 128),
    nn.ReLU(),
    nn.Linear(128, 1),
    nn.Sigmoid(),
)

opt_D = torch.optim.Adam(D.parameters(), lr=LR_D)
opt_G = torch.optim.Adam(G.parameters(), lr=LR_G)

for step in range(3):
    artist_paintings = artist_works()
    G_ideas = torch.randn(BATCH_SIZE, N_IDEAS)
    G_paintings = G(G_ideas)
    prob_artist1 = D(G_paintings)
    G_loss = torch.mean(torch.log(1. - prob_artist1))
    opt_G.zero_grad()
    G_loss.backward()
    opt_G.step()

    prob_artist0 = D(artist_paintings)
    prob_artist1 = D(G_paintings.detach())  # [fix]
    D_loss = - torch.mean(torch.log(prob_artist0) + torch.log(1. - prob_artist1))
    opt_D.zero_grad()
    D_loss.backward(retain_graph=True)
    opt_D.step()

print("trained", step + 1, "steps")
