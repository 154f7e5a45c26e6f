# Source: https://github.com/pytorch/pytorch/issues/72992
# Report: "dropout(inplace=True) raises error": a discriminator built as
#   nn.Sequential(nn.Conv2d(...), nn.LeakyReLU(0.2, inplace=True),
#   nn.Dropout(0.25, inplace=True), nn.Conv2d(...), ...) crashes in training with the
#   in-place error. The in-place LeakyReLU keeps its output for backward (unlike the
#   out-of-place one); the in-place dropout then overwrites it.
# In-place op: lines 24, 32 (`nn.Dropout(0.25, inplace=True)`, run by `self.main(input)`).
# Saved by: line 23 (`nn.LeakyReLU(0.2, inplace=True)`: leaky_relu_ saves its output).
# Fix: fixed/dropout_after_leakyrelu.py: the dropout out of place (the issue was closed
#   without a patch to PyTorch; this is the change that makes backward run).
# Shrunk: two conv stages, 32x32 inputs, one discriminator step.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Discriminator(nn.Module):
    def __init__(self, nc=3, ndf=8):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),  # [saves]
            nn.Dropout(0.25, inplace=True),  # [inplace]
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 8, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input).view(-1)  # [inplace]


netD = Discriminator()
netD.train()
criterion = nn.BCELoss()
real = torch.randn(4, 3, 32, 32)
errD = criterion(netD(real), torch.ones(4))
errD.backward()
print("errD", errD.item())
