# Source: https://discuss.pytorch.org/t/when-would-the-error-one-of-the-variables-needed-for-gradient-computation-has-been-modified-occur/11976
# Report: a network that bifurcates its data flow, `x = self.conv1(input)` on the main
#   branch, `x_p = self.conv1_p(x)` on another branch, then `x += some_layer` on the main
#   branch, fails with "one of the variables needed for gradient computation has been
#   modified by an inplace operation"; `x = x + some_layer` works. The answer: conv1_p
#   saved x for its backward (its input), and `+=` overwrites that very tensor.
# In-place op: line 31 (`x += some_layer`).
# Saved by: line 30 (`self.conv1_p(x)`, which saves its input x).
# Fix: fixed/branch_conv_then_iadd.py, the thread's: `x = x + some_layer`.
# Shrunk: the two branches of the thread with a 1x1 conv as `some_layer` and a pooled
#   linear head over both branches; random images and labels for one training step.
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
        x_p = self.conv1_p(x)  # another branch  # [saves]
        x += some_layer  # main branch  # [inplace]
        x = F.relu(x)
        pooled = torch.cat([x.mean((2, 3)), x_p.mean((2, 3))], 1)
        return self.head(pooled)


net = TwoBranchNet()
images = torch.randn(4, 3, 16, 16)
labels = torch.randint(0, 10, (4,))
loss = F.cross_entropy(net(images), labels)
loss.backward()
print("loss", loss.item())
