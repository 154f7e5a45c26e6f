# Source: https://github.com/zijundeng/BDRAR/issues/2
# Report: with pytorch 0.4 training fails with the in-place error (it ran on 0.3). The
#   author's answer: model.py turns on inplace for every ReLU and Dropout,
#   `if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout): m.inplace = True`; leave
#   Dropout out of it. The predict heads are conv -> BN -> ReLU -> Dropout -> conv, so the
#   in-place dropout overwrites the ReLU output that ReLU saved.
# In-place op: lines 30, 34, 41 (the predict head's `nn.Dropout(0.1)`, made in-place by
#   `m.inplace = True`, run by `self.predict(...)`).
# Saved by: line 29 (the predict head's `nn.ReLU()`).
# Fix: fixed/bdrar_inplace_loop.py, the author's: only ReLUs are made in-place.
# Shrunk: a 2-level backbone, one refinement, one predict head, 32x32 input.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BDRAR(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer0 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.layer1 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.down1 = nn.Sequential(nn.Conv2d(16, 8, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.refine = nn.Sequential(
            nn.Conv2d(16, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 8, 1), nn.BatchNorm2d(8))
        self.predict = nn.Sequential(
            nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),  # [saves]
            nn.Dropout(0.1), nn.Conv2d(8, 1, 1))  # [inplace]

        for m in self.modules():
            if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout):
                m.inplace = True  # [inplace]

    def forward(self, x):
        layer0 = self.layer0(x)
        layer1 = self.layer1(layer0)
        down1 = self.down1(layer1)
        refine = F.relu(self.refine(torch.cat((down1, down1), 1)) + down1, True)
        predict = self.predict(refine)  # [inplace]
        return F.interpolate(predict, size=x.size()[2:], mode='bilinear', align_corners=False)


net = BDRAR()
net.train()
inputs = torch.randn(2, 3, 32, 32)
labels = (torch.rand(2, 1, 32, 32) > 0.5).float()
loss = F.binary_cross_entropy_with_logits(net(inputs), labels)
loss.backward()
print("loss", loss.item())
