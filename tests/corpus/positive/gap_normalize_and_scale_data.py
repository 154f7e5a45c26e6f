# Source: https://github.com/OmidPoursaeed/Generative_Adversarial_Perturbations/issues/4
# Report: "Wrong Implementation": GAP_clf.py's normalize_and_scale rescales the
#   generator's perturbation through .data (`delta_im.data += 1`, `delta_im.data *= 0.5`,
#   a per-channel normalisation and an l_inf scaling, all on .data). The generator ends
#   in a Tanh, whose backward uses its output: those writes overwrite it without a word
#   from autograd, and the scalings are left out of the graph, so the generator's
#   gradients are wrong. The authors rewrote the function out of place ("Fixed bug in
#   normalize_and_scale for proper usage with PyTorch V1+", commit 82fdf94).
# In-place op: line 42 (`delta_im.data += 1`, the first write into Tanh's output).
# Saved by: line 32 (`nn.Tanh()` in the generator, which saves its output).
# Fix: fixed/gap_normalize_and_scale_data.py, the authors': `delta_im = delta_im + 1`,
#   `delta_im = delta_im * 0.5`, and the per-channel steps on clones.
# Shrunk: the ResnetGenerator reduced to conv-BN-ReLU-conv-Tanh, a small frozen classifier
#   for the pretrained one, 8x8 images, batch 2; it prints the generator's first-layer
#   gradients on a GRADS: line for the judge (label silent-grad).
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
    nn.Tanh(),  # [saves]
)
pretrained_clf = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(),
                               nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
for param in pretrained_clf.parameters():
    param.requires_grad = False
criterion_pre = nn.CrossEntropyLoss()


def normalize_and_scale(delta_im, mode='train'):
    delta_im.data += 1  # now 0..2  # [inplace]
    delta_im.data *= 0.5  # now 0..1

    # normalize image color channels
    for c in range(3):
        delta_im.data[:, c, :, :] = (delta_im.data[:, c, :, :] - mean_arr[c]) / stddev_arr[c]

    # threshold each channel of each image in deltaIm according to inf norm
    bs = batch_size
    for i in range(bs):
        for ci in range(3):
            l_inf_channel = delta_im[i, ci, :, :].data.abs().max()
            mag_in_scaled_c = mag_in / (255.0 * stddev_arr[ci])
            delta_im[i, ci, :, :].data *= torch.tensor(
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
