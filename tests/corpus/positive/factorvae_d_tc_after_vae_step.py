# Source: https://github.com/1Konny/FactorVAE/issues/15
# Report: FactorVAE trains a VAE and a discriminator D of the total correlation. The VAE's
#   loss includes D(z) (D_z) and is backpropagated with retain_graph=True; optim_VAE.step()
#   then updates the VAE; D's loss reuses D_z, whose graph runs back into the VAE's encoder,
#   whose weights the step has changed ("... output 0 of TBackward, is at version 2;
#   expected version 1"). Removing D_z's term, or detaching it, makes it run.
# In-place op: line 58 (`self.optim_VAE.step()`).
# Saved by: line 49 (`z = self.VAE.encode(x)` ... `D_z = self.D(z)`: the encoder's Linear layers
#   keep their weights for D_tc_loss's backward).
# Fix: fixed/factorvae_d_tc_after_vae_step.py, the reporter's fix, confirmed in the thread:
#   D's loss uses D_z.detach() (D is trained on its own, not through the VAE).
# Shrunk: an MLP VAE and discriminator on random 16-d data; the solver's step as a method,
#   one step.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, z_dim=6):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2 * z_dim))
        self.decoder = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, 16))
        self.z_dim = z_dim

    def forward(self, x):
        mu, logvar = self.encoder(x).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.decoder(z), mu, logvar, z


def permute_dims(z):
    return torch.stack([col[torch.randperm(z.size(0))] for col in z.t()], dim=1)


class Solver:
    def __init__(self):
        self.VAE = VAE()
        self.D = nn.Sequential(nn.Linear(6, 32), nn.LeakyReLU(0.2), nn.Linear(32, 2))
        self.optim_VAE = torch.optim.Adam(self.VAE.parameters(), lr=1e-3)
        self.optim_D = torch.optim.Adam(self.D.parameters(), lr=1e-3)
        self.gamma = 6.4

    def train_step(self, x_true1, x_true2):
        ones = torch.ones(x_true1.size(0), dtype=torch.long)
        zeros = torch.zeros(x_true1.size(0), dtype=torch.long)
        x_recon, mu, logvar, z = self.VAE(x_true1)  # [saves]
        vae_recon_loss = F.mse_loss(x_recon, x_true1, reduction="sum") / x_true1.size(0)
        vae_kld = -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(1).mean()
        D_z = self.D(z)
        vae_tc_loss = (D_z[:, :1] - D_z[:, 1:]).mean()
        vae_loss = vae_recon_loss + vae_kld + self.gamma * vae_tc_loss

        self.optim_VAE.zero_grad()
        vae_loss.backward(retain_graph=True)
        self.optim_VAE.step()  # [inplace]

        z_prime = self.VAE(x_true2)[3]
        z_pperm = permute_dims(z_prime).detach()
        D_z_pperm = self.D(z_pperm)
        D_tc_loss = 0.5 * (F.cross_entropy(D_z, zeros) + F.cross_entropy(D_z_pperm, ones))

        self.optim_D.zero_grad()
        D_tc_loss.backward()
        self.optim_D.step()
        return vae_loss.item(), D_tc_loss.item()


print(Solver().train_step(torch.randn(32, 16), torch.randn(32, 16)))
