# Source: https://github.com/pytorch/pytorch/issues/46820
# Report: "simple v *= v_scale error": a flow field predicted by a network is resized,
#   split into its u and v channels with `u, v = flow.chunk(2, dim=1)`, and each half is
#   rescaled in place (`u *= u_scale`, `v *= v_scale`). torch 1.7 warned that in-place ops
#   on outputs of a function returning several views were deprecated; since 1.8 it is the
#   "Output 0 of SplitBackward0 is a view and is being modified inplace" error.
# In-place op: lines 28 and 29 (`u *= u_scale`, `v *= v_scale`; the first one raises).
# Saved by: nothing; chunk's outputs may not be written in place at all.
# Fix: fixed/flow_chunk_scale.py, the reporter's own: scale out of place
#   (`u = u_scale * u`).
# Shrunk: the optical-flow network is one conv on random images.
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
    u *= u_scale  # [inplace]
    v *= v_scale  # [inplace]
    return torch.cat([u, v], dim=1)


img1, img2 = torch.randn(2, 3, 16, 16), torch.randn(2, 3, 16, 16)
gt = torch.randn(2, 2, 32, 32)
flow = net(torch.cat([img1, img2], dim=1))
loss = F.l1_loss(resize_flow(flow, (32, 32)), gt)
loss.backward()
print("loss", loss.item())
