# Source: https://github.com/leftthomas/SRGAN/issues/74
# Report: train.py fails in g_loss.backward() on torch >= 1.5 ("[1, 1024, 1, 1] is at
#   version 2; expected version 1"): d_loss.backward(retain_graph=True) and
#   optimizerD.step() run first, then the generator loss is computed from the fake_out
#   of the same forward, which goes back through netD's old weights. The repository's
#   layout: the networks in model.py, the loss in loss.py, the loop in train.py.
# In-place op: line 65 (`optimizerD.step()` updates netD in place).
# Saved by: model.py line 58 (the Discriminator's last conv, whose weight [1, 1024, 1, 1]
#   the error names; netD's other layers keep theirs too), through `netD(fake_img)` at
#   line 62.
# Fix: fixed/srgan_split/train.py, the answer in the thread (and the repository's own
#   later train.py): compute fake_img and fake_out again after optimizerD.step(), before
#   the generator loss.
# Shrunk: tiny Generator (2 residual blocks) and Discriminator, a small frozen conv stack
#   instead of VGG16 in the perception loss, random images instead of DIV2K, no argparse,
#   validation, checkpoints or statistics.
import torch
import torch.optim as optim

from loss import GeneratorLoss
from model import Generator, Discriminator

UPSCALE_FACTOR = 2
NUM_EPOCHS = 1


def random_loader(n_batches=2, batch_size=2, crop_size=32):
    """Stands in for TrainDatasetFromFolder: (low-res, high-res) pairs of random images."""
    g = torch.Generator().manual_seed(0)
    for _ in range(n_batches):
        target = torch.rand(batch_size, 3, crop_size, crop_size, generator=g)
        data = torch.rand(batch_size, 3, crop_size // UPSCALE_FACTOR, crop_size // UPSCALE_FACTOR,
                          generator=g)
        yield data, target


if __name__ == '__main__':
    torch.manual_seed(0)
    netG = Generator(UPSCALE_FACTOR)
    print('# generator parameters:', sum(param.numel() for param in netG.parameters()))
    netD = Discriminator()
    print('# discriminator parameters:', sum(param.numel() for param in netD.parameters()))

    generator_criterion = GeneratorLoss()

    optimizerG = optim.Adam(netG.parameters())
    optimizerD = optim.Adam(netD.parameters())

    for epoch in range(1, NUM_EPOCHS + 1):
        netG.train()
        netD.train()
        for data, target in random_loader():
            ############################
            # (1) Update D network: maximize D(x)-1-D(G(z))
            ###########################
            real_img = target
            z = data
            fake_img = netG(z)

            netD.zero_grad()
            real_out = netD(real_img).mean()
            fake_out = netD(fake_img).mean()
            d_loss = 1 - real_out + fake_out
            d_loss.backward(retain_graph=True)
            optimizerD.step()  # [inplace]

            ############################
            # (2) Update G network: minimize 1-D(G(z)) + Perception Loss + Image Loss + TV Loss
            ###########################
            netG.zero_grad()
            g_loss = generator_criterion(fake_out, fake_img, real_img)
            g_loss.backward()

            fake_img = netG(z)
            fake_out = netD(fake_img).mean()

            optimizerG.step()

        print('[%d/%d] Loss_D: %.4f Loss_G: %.4f' % (epoch, NUM_EPOCHS, d_loss.item(), g_loss.item()))
