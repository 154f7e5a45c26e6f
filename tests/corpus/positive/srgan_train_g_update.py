# Source: https://github.com/leftthomas/SRGAN/issues/74
# Report: train.py fails in g_loss.backward() on torch >= 1.5 ("[1, 1024, 1, 1] is at
#   version 2; expected version 1"): d_loss.backward(retain_graph=True) and
#   optimizerD.step() run first, then the generator loss is computed from the fake_out
#   of the same forward, which goes back through netD's old weights.
# In-place op: line 83 (`optimizerD.step()` updates netD in place).
# Saved by: line 80 (`netD(fake_img)`: netD's convolutions keep their weights).
# Fix: fixed/srgan_train_g_update.py, the answer in the thread: recompute fake_img and
#   fake_out after optimizerD.step(), before the generator loss.
# Shrunk: tiny Generator/Discriminator, no VGG perception loss, random images.
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, scale_factor=2):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(3, 16, kernel_size=9, padding=4), nn.PReLU())
        self.block2 = nn.Sequential(nn.Conv2d(16, 16, kernel_size=3, padding=1),
                                    nn.BatchNorm2d(16), nn.PReLU())
        self.upsample = nn.Sequential(nn.Conv2d(16, 16 * scale_factor ** 2, 3, padding=1),
                                      nn.PixelShuffle(scale_factor), nn.PReLU())
        self.block3 = nn.Conv2d(16, 3, kernel_size=9, padding=4)

    def forward(self, x):
        block1 = self.block1(x)
        block2 = self.block2(block1)
        block3 = self.block3(self.upsample(block1 + block2))
        return (torch.tanh(block3) + 1) / 2


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1),
            nn.LeakyReLU(0.2),
            nn.Conv2d(8, 16, kernel_size=3, stride=2, padding=1),
            nn.BatchNorm2d(16),
            nn.LeakyReLU(0.2),
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(16, 32, kernel_size=1),
            nn.LeakyReLU(0.2),
            nn.Conv2d(32, 1, kernel_size=1),
        )

    def forward(self, x):
        batch_size = x.size(0)
        return torch.sigmoid(self.net(x).view(batch_size))


class GeneratorLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.mse_loss = nn.MSELoss()

    def forward(self, out_labels, out_images, target_images):
        adversarial_loss = torch.mean(1 - out_labels)
        image_loss = self.mse_loss(out_images, target_images)
        return image_loss + 0.001 * adversarial_loss


netG = Generator()
netD = Discriminator()
generator_criterion = GeneratorLoss()
optimizerG = optim.Adam(netG.parameters())
optimizerD = optim.Adam(netD.parameters())

train_loader = [(torch.rand(2, 3, 16, 16), torch.rand(2, 3, 32, 32)) for _ in range(2)]
for data, target in train_loader:
    real_img = target
    z = data
    fake_img = netG(z)

    netD.zero_grad()
    real_out = netD(real_img).mean()
    fake_out = netD(fake_img).mean()  # [saves]
    d_loss = 1 - real_out + fake_out
    d_loss.backward(retain_graph=True)
    optimizerD.step()  # [inplace]

    netG.zero_grad()
    g_loss = generator_criterion(fake_out, fake_img, real_img)
    g_loss.backward()

    fake_img = netG(z)
    fake_out = netD(fake_img).mean()

    optimizerG.step()

print("d_loss", d_loss.item(), "g_loss", g_loss.item())
