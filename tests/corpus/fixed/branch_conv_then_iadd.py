# Fixed version of positive/branch_conv_then_iadd.py.
# Fix: the thread's: `x = x + some_layer`, a new tensor; the x that conv1_p saved is kept.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TwoBranchNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv1_p = nn.Conv2d(8, 8, 3, padding=1)
        self.skip = nn.Conv2d(3, 8, 1)
        self.head = nn.Linear(16, 10)

    def forward(self, input):
        some_layer = self.skip(input)
        x = self.conv1(input)  # main branch
        x_p = self.conv1_p(x)  # another branch
        x = x + some_layer  # main branch  # [fix]
        x = F.relu(x)
        pooled = torch.cat([x.mean((2, 3)), x_p.mean((2, 3))], 1)
        return self.head(pooled)


net = TwoBranchNet()
images = torch.randn(4, 3, 16, 16)
labels = torch.randint(0, 10, (4,))
loss = F.cross_entropy(net(images), labels)
loss.backward()
print("loss", loss.item())
