# Mirrors: pytorch/examples, dcgan/main.py (Generator/Discriminator with ReLU(True) and
#   LeakyReLU(0.2, inplace=True), and the training step: D on real, D on fake.detach(),
#   optimizerD.step(), then G's loss on a new netD(fake), optimizerG.step())
# Safe in-place ops: in-place activations each followed by an op that only reads them;
#   optimizerD.step() runs before netD(fake) is evaluated for G's loss, so G's backward
#   goes through netD's updated weights in a fresh graph.
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
nz, ngf, ndf, nc = 8, 8, 8, 3


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh()
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid()
        )

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


netG, netD = Generator(), Discriminator()
criterion = nn.BCELoss()
optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
real_label, fake_label = 1, 0

for i in range(2):
    real_cpu = torch.rand(4, nc, 16, 16) * 2 - 1
    batch_size = real_cpu.size(0)
    ############################
    # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
    ###########################
    netD.zero_grad()
    label = torch.full((batch_size,), real_label, dtype=real_cpu.dtype)
    output = netD(real_cpu)
    errD_real = criterion(output, label)
    errD_real.backward()
    noise = torch.randn(batch_size, nz, 1, 1)
    fake = netG(noise)
    label.fill_(fake_label)
    output = netD(fake.detach())
    errD_fake = criterion(output, label)
    errD_fake.backward()
    errD = errD_real + errD_fake
    optimizerD.step()
    ############################
    # (2) Update G network: maximize log(D(G(z)))
    ###########################
    netG.zero_grad()
    label.fill_(real_label)  # fake labels are real for generator cost
    output = netD(fake)
    errG = criterion(output, label)
    errG.backward()
    optimizerG.step()
print("errD", errD.item(), "errG", errG.item())
