# Source: https://github.com/pytorch/vision/issues/3025
# Report: visualising AlexNet's conv kernels with
#   vutils.make_grid(kernel_idx, normalize=True, scale_each=True, nrow=3) raises "Output 0
#   of UnbindBackward is a view and is being modified inplace": the kernels are a slice of
#   the weight (they require grad), make_grid clones them and then normalises each image
#   in place while looping over the batch (`for t in tensor`, an unbind).
# In-place op: line 33 (`img.clamp_(min=low, max=high)` in norm_ip, reached through
#   `for t in tensor: norm_range(t, range)`).
# Fix: fixed/make_grid_conv_kernels.py: hand make_grid a detached copy of the kernels (a
#   picture needs no gradient).
# Shrunk: make_grid's normalisation and tiling written out as in torchvision 0.8
#   (torchvision is not installed here); a 2-conv stand-in for models.alexnet().
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
irange = range


def make_grid(tensor, nrow=8, padding=2, normalize=False, range=None, scale_each=False,
              pad_value=0):
    if tensor.dim() == 3:  # single image C x H x W
        tensor = tensor.unsqueeze(0)
    if tensor.size(1) == 1:  # single-channel images
        tensor = torch.cat((tensor, tensor, tensor), 1)

    if normalize is True:
        tensor = tensor.clone()  # avoid modifying tensor in-place

        def norm_ip(img, low, high):
            img.clamp_(min=low, max=high)  # [inplace]
            img.sub_(low).div_(max(high - low, 1e-5))

        def norm_range(t, range):
            if range is not None:
                norm_ip(t, range[0], range[1])
            else:
                norm_ip(t, float(t.min()), float(t.max()))

        if scale_each is True:
            for t in tensor:  # loop over mini-batch dimension
                norm_range(t, range)
        else:
            norm_range(tensor, range)

    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    num_channels = tensor.size(1)
    grid = tensor.new_full((num_channels, height * ymaps + padding, width * xmaps + padding), pad_value)
    k = 0
    for y in irange(ymaps):
        for x in irange(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(
                2, x * width + padding, width - padding).copy_(tensor[k])
            k = k + 1
    return grid


alexnet = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(inplace=True), nn.Conv2d(4, 2, 3))

for sub_module in alexnet.modules():
    if isinstance(sub_module, nn.Conv2d):
        kernels = sub_module.weight
        c_out, c_int, k_w, k_h = tuple(kernels.shape)
        for o_idx in range(c_out):
            kernel_idx = kernels[o_idx, :, :, :].unsqueeze(1)  # kernel_idx.grad_fn == UnsqueezeBackward0
            img_grid = make_grid(kernel_idx, normalize=True, scale_each=True, nrow=3)
print(img_grid.shape)
