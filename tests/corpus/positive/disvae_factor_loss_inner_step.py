# Source: https://github.com/YannDubs/disentangling-vae/issues/62
# Report: in disentangling-vae, FactorKLoss.__call__ computes the VAE's loss (with the total
#   correlation term from the discriminator on the sampled latents), steps the model's
#   optimizer inside the loss, and then backpropagates the discriminator's loss d_tc_loss,
#   which uses d_z = discriminator(latent_sample): backward runs back into the encoder whose
#   weights optimizer.step() has just changed ("... output 0 of TBackward, is at version 3;
#   expected version 2"). The reporter finds the error comes from the term
#   F.cross_entropy(d_z, zeros) and from the optimizer.step() call.
# In-place op: line 61 (`optimizer.step()` inside the loss).
# Saved by: line 52 (`self.model(data)`: the encoder's layers keep their weights, and
#   `d_z` is computed from its output).
# Fix: fixed/disvae_factor_loss_inner_step.py, the usual fix (the maintainer points to the
#   torch >= 1.5 change): the discriminator's loss uses d_z.detach(), so it does not reach
#   back into the model after the model's step.
# Shrunk: MLP encoder/decoder and discriminator; the loss object with its two optimizers;
#   one call on random data.
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
        recon_batch, (mean, logvar), latent_sample1 = model(data1)  # [saves]
        rec_loss = F.mse_loss(recon_batch, data1, reduction="sum") / batch_size
        kl_loss = (-0.5 * (1 + logvar - mean.pow(2) - logvar.exp())).sum(1).mean()
        d_z = self.discriminator(latent_sample1)
        tc_loss = (d_z[:, 0] - d_z[:, 1]).mean()
        vae_loss = rec_loss + kl_loss + self.gamma * tc_loss

        optimizer.zero_grad()
        vae_loss.backward(retain_graph=True)
        optimizer.step()  # [inplace]

        latent_sample2 = model(data2)[2]
        z_perm = _permute_dims(latent_sample2).detach()
        d_z_perm = self.discriminator(z_perm)
        ones = torch.ones(batch_size, dtype=torch.long)
        zeros = torch.zeros_like(ones)
        d_tc_loss = 0.5 * (F.cross_entropy(d_z, zeros) + F.cross_entropy(d_z_perm, ones))
        self.optimizer_d.zero_grad()
        d_tc_loss.backward()
        self.optimizer_d.step()
        return vae_loss


model = Model()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
loss = FactorKLoss()(torch.randn(64, 20), model, optimizer)
print("vae loss", loss.item())
