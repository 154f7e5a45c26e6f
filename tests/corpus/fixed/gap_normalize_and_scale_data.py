# Fixed version of positive/gap_normalize_and_scale_data.py.
# Fix: the authors' (commit 82fdf94): normalize_and_scale out of place, `delta_im =
#   delta_im + 1`, `delta_im = delta_im * 0.5`, the per-channel steps written from clones,
#   so Tanh's saved output is untouched and the scalings are part of the graph.
import json

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

mean_arr = [0.485, 0.456, 0.406]
stddev_arr = [0.229, 0.224, 0.225]
mag_in = 10.0
batch_size = 2

netG = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(True),
    nn.Conv2d(8, 3, 3, padding=1),
    nn.Tanh(),
)
pretrained_clf = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(),
                               nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
for param in pretrained_clf.parameters():
    param.requires_grad = False
criterion_pre = nn.CrossEntropyLoss()


def normalize_and_scale(delta_im, mode='train'):
    delta_im = delta_im + 1  # now 0..2  # [fix]
    delta_im = delta_im * 0.5  # now 0..1  # [fix]

    # normalize image color channels
    for c in range(3):
        delta_im[:, c, :, :] = (delta_im[:, c, :, :].clone() - mean_arr[c]) / stddev_arr[c]  # [fix]

    # threshold each channel of each image in deltaIm according to inf norm
    bs = batch_size
    for i in range(bs):
        for ci in range(3):
            l_inf_channel = delta_im[i, ci, :, :].detach().abs().max()  # [fix]
            mag_in_scaled_c = mag_in / (255.0 * stddev_arr[ci])
            delta_im[i, ci, :, :] = delta_im[i, ci, :, :].clone() * torch.tensor(  # [fix]
                np.minimum(1.0, mag_in_scaled_c / l_inf_channel.item())).float()
    return delta_im


image = torch.randn(batch_size, 3, 8, 8)
target_label = torch.tensor([3, 3])
delta_im = netG(image)
delta_im = normalize_and_scale(delta_im, 'train')
netG.zero_grad()
recons = torch.add(image, delta_im)
for cii in range(3):
    recons.data[:, cii, :, :] = recons.data[:, cii, :, :].clamp(
        image.data[:, cii, :, :].min(), image.data[:, cii, :, :].max())
output_pretrained = pretrained_clf(recons)
loss = torch.log(criterion_pre(output_pretrained, target_label))
loss.backward()
print("GRADS:", json.dumps(netG[0].weight.grad.flatten()[:24].tolist()))
