# Source: https://github.com/haofanwang/Score-CAM/issues/28
# Report: test.py fails in basic_visualize -> denormalize (utils/__init__.py) at
#   `channel.mul_(std).add_(mean)` with "Output 0 of UnbindBackward is a view and is being
#   modified inplace": the input image tensor requires grad (apply_transforms sets
#   requires_grad), and iterating over denormalized[0] unbinds it into views that may not
#   be modified in place.
# In-place op: line 34 (`channel.mul_(std).add_(mean)`).
# Fix: fixed/scorecam_denormalize.py, the change posted in the thread: index the channel
#   and assign the out-of-place result, denormalized[0][count] = ....mul(std), then .add(mean).
# Shrunk: a 2-layer CNN instead of ResNet, a random image, the CAM step reduced to a
#   gradient-weighted activation map.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def apply_transforms(image, size=32):
    means = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
    stds = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)
    tensor = ((F.interpolate(image.unsqueeze(0), size=size) - means) / stds)
    tensor.requires_grad = True
    return tensor


def denormalize(tensor):
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]

    denormalized = tensor.clone()

    for channel, mean, std in zip(denormalized[0], means, stds):
        channel.mul_(std).add_(mean)  # [inplace]

    return denormalized


def basic_visualize(input_, saliency_map):
    input_ = denormalize(input_)
    return (input_.detach()[0].permute(1, 2, 0) * saliency_map[0, 0, :, :, None]).mean()


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 3, padding=1))
input_ = apply_transforms(torch.rand(3, 40, 40))
activations = model(input_)
score = activations.mean(dim=(2, 3))[0, 1]
score.backward()
scorecam_map = F.relu((input_.grad.abs().sum(1, keepdim=True)))
print(basic_visualize(input_.cpu(), scorecam_map.type(torch.FloatTensor).cpu()))
