# Source: https://github.com/MorvanZhou/PyTorch-Tutorial/issues/89
# Report: tutorial-contents/406_GAN.py stopped working with torch 1.5: the discriminator
#   loss is backpropagated with retain_graph=True, opt_D.step() then updates D in place,
#   and G_loss.backward() goes back through D(G_paintings), whose Linear layers saved
#   D's weights at the old version ("output 0 of TBackward ... is at version 2").
# In-place op: line 58 (`opt_D.step()` writes D's parameters in place).
# Saved by: line 51 (`D(G_paintings)`: D's Linear layers keep their weights for G_loss).
# Fix: fixed/morvan_gan_406.py, the order the repository adopted after the thread
#   (update G first, then train D on G_paintings.detach()).
# Shrunk: numpy painting data replaced by torch, 3 steps, no plotting.
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
    prob_artist0 = D(artist_paintings)
    prob_artist1 = D(G_paintings)  # [saves]

    D_loss = - torch.mean(torch.log(prob_artist0) + torch.log(1. - prob_artist1))
    G_loss = torch.mean(torch.log(1. - prob_artist1))

    opt_D.zero_grad()
    D_loss.backward(retain_graph=True)      # reusing computational graph
    opt_D.step()  # [inplace]

    opt_G.zero_grad()
    G_loss.backward()
    opt_G.step()

print("trained", step + 1, "steps")
