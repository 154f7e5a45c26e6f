# Fixed version of positive/dropout_after_leakyrelu.py.
# Source: https://github.com/pytorch/pytorch/issues/72992
# Fix: the dropout is out of place; the in-place LeakyReLUs stay (each is followed by an
#   op that only reads their output).
import torch
import torch.nn as nn

torch.manual_seed(0)


class Discriminator(nn.Module):
    def __init__(self, nc=3, ndf=8):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Dropout(0.25),  # [fix]
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 8, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input).view(-1)


netD = Discriminator()
netD.train()
criterion = nn.BCELoss()
real = torch.randn(4, 3, 32, 32)
errD = criterion(netD(real), torch.ones(4))
errD.backward()
print("errD", errD.item())
