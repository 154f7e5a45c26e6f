# Source: https://github.com/pytorch/pytorch/issues/78140
# Report: "backward error for sum of vector norm": computing the central moment
#   discrepancy as `cmd = (mean_x - mean_y).squeeze().norm(p=2)` followed by
#   `cmd += (central_moment_x - central_moment_y).norm(p=2)` fails in backward, anomaly
#   detection naming NormBackward1 of the first norm. A 2-norm keeps its own result for
#   backward (grad = x * g / norm), and += overwrites that result.
# In-place op: line 29 (`cmd += ...`).
# Saved by: line 24 (`.norm(p=2)`, which saves its result, the tensor cmd).
# Fix: fixed/cmd_norm_iadd.py, the usual one: add out of place (`cmd = cmd + ...`).
# Shrunk: the reporter's script as posted, without set_detect_anomaly.
import torch

torch.manual_seed(0)

x = torch.randn((100, 100), requires_grad=True)
y = torch.randn((100, 100), requires_grad=True)

mean_x = x.mean(dim=0, keepdim=True)
mean_y = y.mean(dim=0, keepdim=True)

offsets_x = x - mean_x
offsets_y = y - mean_y

cmd = (mean_x - mean_y).squeeze().norm(p=2)  # [saves]

central_moment_x = offsets_x.pow(2).mean(dim=0)
central_moment_y = offsets_y.pow(2).mean(dim=0)

cmd += (central_moment_x - central_moment_y).norm(p=2)  # [inplace]

cmd.backward()
print("cmd", cmd.item())
