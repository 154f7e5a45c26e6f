# Fixed version of positive/singan_gsteps.py.
# Source: https://github.com/tamarott/SinGAN/issues/148
# Fix (the issue's one-line solution, also proposed in pull request #117's review): create
#   a new fake with the current netG at the start of each generator step.
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class Opt:
    nc_im = 3
    nfc = 8
    ker_size = 3
    num_layer = 3
    niter = 1
    Dsteps = 2
    Gsteps = 2
    lr_g = 0.0005
    lr_d = 0.0005
    beta1 = 0.5
    alpha = 10
    noise_amp = 0.1


class ConvBlock(nn.Sequential):
    def __init__(self, in_channel, out_channel, ker_size, padd, stride):
        super().__init__()
        self.add_module('conv', nn.Conv2d(in_channel, out_channel, kernel_size=ker_size,
                                          stride=stride, padding=padd))
        self.add_module('norm', nn.BatchNorm2d(out_channel))
        self.add_module('LeakyRelu', nn.LeakyReLU(0.2, inplace=True))


class WDiscriminator(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.head = ConvBlock(opt.nc_im, opt.nfc, opt.ker_size, 0, 1)
        self.body = ConvBlock(opt.nfc, opt.nfc, opt.ker_size, 0, 1)
        self.tail = nn.Conv2d(opt.nfc, 1, kernel_size=opt.ker_size, stride=1, padding=0)

    def forward(self, x):
        return self.tail(self.body(self.head(x)))


class GeneratorConcatSkip2CleanAdd(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.head = ConvBlock(opt.nc_im, opt.nfc, opt.ker_size, 0, 1)
        self.body = ConvBlock(opt.nfc, opt.nfc, opt.ker_size, 0, 1)
        self.tail = nn.Sequential(
            nn.Conv2d(opt.nfc, opt.nc_im, kernel_size=opt.ker_size, stride=1, padding=0),
            nn.Tanh())

    def forward(self, x, y):
        x = self.head(x)
        x = self.body(x)
        x = self.tail(x)
        ind = int((y.shape[2] - x.shape[2]) / 2)
        y = y[:, :, ind:(y.shape[2] - ind), ind:(y.shape[3] - ind)]
        return x + y


def train_single_scale(netD, netG, real, opt):
    pad = nn.ZeroPad2d(int(((opt.ker_size - 1) * opt.num_layer) / 2))
    optimizerD = optim.Adam(netD.parameters(), lr=opt.lr_d, betas=(opt.beta1, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=opt.lr_g, betas=(opt.beta1, 0.999))
    z_opt = pad(torch.randn(1, opt.nc_im, real.shape[2], real.shape[3]))
    alpha = opt.alpha

    for epoch in range(opt.niter):
        noise = pad(torch.randn(1, opt.nc_im, real.shape[2], real.shape[3]))
        prev = pad(torch.zeros_like(real))
        z_prev = pad(torch.zeros_like(real))

        # (1) Update D network: maximize D(x) + D(G(z))
        for j in range(opt.Dsteps):
            netD.zero_grad()
            output = netD(real)
            errD_real = -output.mean()
            errD_real.backward(retain_graph=True)

            fake = netG(noise.detach(), prev)
            output = netD(fake.detach())
            errD_fake = output.mean()
            errD_fake.backward(retain_graph=True)
            optimizerD.step()

        # (2) Update G network: maximize D(G(z))
        for j in range(opt.Gsteps):
            netG.zero_grad()
            fake = netG(noise.detach(), prev)  # [fix]
            output = netD(fake)
            errG = -output.mean()
            errG.backward(retain_graph=True)
            if alpha != 0:
                loss = nn.MSELoss()
                Z_opt = opt.noise_amp * z_opt + z_prev
                rec_loss = alpha * loss(netG(Z_opt.detach(), z_prev), real)
                rec_loss.backward(retain_graph=True)
                rec_loss = rec_loss.detach()
            optimizerG.step()
    return errG.item(), rec_loss.item()


opt = Opt()
real = torch.rand(1, 3, 16, 16) * 2 - 1
print(train_single_scale(WDiscriminator(opt), GeneratorConcatSkip2CleanAdd(opt), real, opt))
