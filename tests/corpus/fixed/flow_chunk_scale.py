# Fixed version of positive/flow_chunk_scale.py.
# Source: https://github.com/pytorch/pytorch/issues/46820
# Fix: the reporter's own: scale the chunks out of place (`u = u_scale * u`), which
#   leaves chunk's outputs untouched.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

net = nn.Conv2d(6, 2, 3, padding=1)  # stands for the flow network


def resize_flow(flow, size):
    _, _, h, w = flow.shape
    new_h, new_w = size
    flow = F.interpolate(flow, size=size, mode="bilinear", align_corners=True)
    u_scale = new_w / w
    v_scale = new_h / h
    u, v = flow.chunk(2, dim=1)
    u = u_scale * u  # [fix]
    v = v_scale * v  # [fix]
    return torch.cat([u, v], dim=1)


img1, img2 = torch.randn(2, 3, 16, 16), torch.randn(2, 3, 16, 16)
gt = torch.randn(2, 2, 32, 32)
flow = net(torch.cat([img1, img2], dim=1))
loss = F.l1_loss(resize_flow(flow, (32, 32)), gt)
loss.backward()
print("loss", loss.item())
