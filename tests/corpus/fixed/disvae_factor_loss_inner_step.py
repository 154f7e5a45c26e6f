# Fixed version of positive/disvae_factor_loss_inner_step.py.
# Source: https://github.com/YannDubs/disentangling-vae/issues/62 (the usual fix).
# Fix: the discriminator's loss takes d_z.detach(); its backward stays in the discriminator.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self, latent_dim=5):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 2 * latent_dim))
        self.decoder = nn.Sequential(nn.Linear(latent_dim, 32), nn.ReLU(), nn.Linear(32, 20))

    def forward(self, x):
        mean, logvar = self.encoder(x).chunk(2, dim=-1)
        sample = mean + torch.randn_like(mean) * torch.exp(0.5 * logvar)
        return self.decoder(sample), (mean, logvar), sample


def _permute_dims(latent_sample):
    perm = torch.zeros_like(latent_sample)
    for z in range(latent_sample.size(1)):
        perm[:, z] = latent_sample[torch.randperm(latent_sample.size(0)), z]
    return perm


class FactorKLoss:
    def __init__(self, gamma=10.0):
        self.gamma = gamma
        self.discriminator = nn.Sequential(nn.Linear(5, 32), nn.LeakyReLU(0.2), nn.Linear(32, 2))
        self.optimizer_d = torch.optim.Adam(self.discriminator.parameters(), lr=5e-5)

    def __call__(self, data, model, optimizer):
        batch_size = data.size(0) // 2
        data1, data2 = data[:batch_size], data[batch_size:]
        recon_batch, (mean, logvar), latent_sample1 = model(data1)
        rec_loss = F.mse_loss(recon_batch, data1, reduction="sum") / batch_size
        kl_loss = (-0.5 * (1 + logvar - mean.pow(2) - logvar.exp())).sum(1).mean()
        d_z = self.discriminator(latent_sample1)
        tc_loss = (d_z[:, 0] - d_z[:, 1]).mean()
        vae_loss = rec_loss + kl_loss + self.gamma * tc_loss

        optimizer.zero_grad()
        vae_loss.backward(retain_graph=True)
        optimizer.step()

        latent_sample2 = model(data2)[2]
        z_perm = _permute_dims(latent_sample2).detach()
        d_z_perm = self.discriminator(z_perm)
        ones = torch.ones(batch_size, dtype=torch.long)
        zeros = torch.zeros_like(ones)
        d_tc_loss = 0.5 * (F.cross_entropy(d_z.detach(), zeros)  # [fix]
                           + F.cross_entropy(d_z_perm, ones))
        self.optimizer_d.zero_grad()
        d_tc_loss.backward()
        self.optimizer_d.step()
        return vae_loss


model = Model()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
loss = FactorKLoss()(torch.randn(64, 20), model, optimizer)
print("vae loss", loss.item())
