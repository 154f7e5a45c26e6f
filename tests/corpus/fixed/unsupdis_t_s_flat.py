# Fixed version of positive/unsupdis_t_s_flat.py.
# Source: https://github.com/kail8/UnsupDIS-pytorch/issues/26
# Fix (the maintainer's answer, confirmed by the reporter): build the small-value mask on
#   a detached copy and blend out of place, instead of writing into a view of the chunk.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def transform(image2_tensor, H_tf):
    def _interpolate(im, x, y, out_size):
        height, width = out_size
        grid = torch.stack([x, y], dim=-1).reshape(im.shape[0], height, width, 2)
        return F.grid_sample(im, grid, align_corners=True).permute(0, 2, 3, 1)

    def _meshgrid(height, width):
        x_t = torch.mm(torch.ones(height, 1), torch.linspace(-1.0, 1.0, width).unsqueeze(0))
        y_t = torch.mm(torch.linspace(-1.0, 1.0, height).unsqueeze(1), torch.ones(1, width))
        x_t_flat = x_t.reshape(1, -1)
        y_t_flat = y_t.reshape(1, -1)
        ones = torch.ones_like(x_t_flat)
        grid = torch.cat([x_t_flat, y_t_flat, ones], dim=0)
        return grid

    bs, nc, height, width = image2_tensor.shape
    H_tf = H_tf.reshape(-1, 3, 3).float()
    # grid of (x_t, y_t, 1)
    grid = _meshgrid(height, width).unsqueeze(0).expand(bs, -1, -1)

    # Transform A x (x_t, y_t, 1)^T -> (x_s, y_s)
    T_g = torch.bmm(H_tf, grid)  # [bs,3,3] x [bs,3,w*h] -> [bs,3,w*h]
    x_s, y_s, t_s = torch.chunk(T_g, 3, dim=1)
    t_s_flat = t_s.reshape(-1)
    eps, maximal = 1e-2, 10.
    small_value = (t_s_flat.detach().abs() < eps).float()  # [fix]
    t_s_flat = t_s_flat * (1 - small_value) + small_value * eps

    #  batchsize * width * height
    x_s_flat = x_s.reshape(-1) / t_s_flat
    y_s_flat = y_s.reshape(-1) / t_s_flat

    input_transformed = _interpolate(image2_tensor, x_s_flat, y_s_flat, (height, width))
    output = input_transformed.reshape(bs, height, width, nc).permute(0, 3, 1, 2)
    return output


estimator = nn.Linear(16, 9)
features = torch.randn(1, 16)
H_tf = estimator(features) * 0.01 + torch.eye(3).reshape(1, 9)
image2_tensor = torch.rand(1, 3, 16, 16)
warped = transform(image2_tensor, H_tf)
loss = (warped - torch.rand(1, 3, 16, 16)).abs().mean()
loss.backward()
print("loss", loss.item())
