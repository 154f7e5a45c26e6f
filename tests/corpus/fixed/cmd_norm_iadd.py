# Fixed version of positive/cmd_norm_iadd.py.
# Source: https://github.com/pytorch/pytorch/issues/78140
# Fix: the usual one: add the second norm out of place, so the first norm's saved result
#   stays as it was.
import torch

torch.manual_seed(0)

x = torch.randn((100, 100), requires_grad=True)
y = torch.randn((100, 100), requires_grad=True)

mean_x = x.mean(dim=0, keepdim=True)
mean_y = y.mean(dim=0, keepdim=True)

offsets_x = x - mean_x
offsets_y = y - mean_y

cmd = (mean_x - mean_y).squeeze().norm(p=2)

central_moment_x = offsets_x.pow(2).mean(dim=0)
central_moment_y = offsets_y.pow(2).mean(dim=0)

cmd = cmd + (central_moment_x - central_moment_y).norm(p=2)  # [fix]

cmd.backward()
print("cmd", cmd.item())
