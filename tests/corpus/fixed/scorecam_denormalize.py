# Fixed version of positive/scorecam_denormalize.py.
# Source: https://github.com/haofanwang/Score-CAM/issues/28
# Fix (posted in the thread): compute each channel out of place and assign it through
#   indexing, denormalized[0][count] = denormalized[0][count].mul(std) (then .add(mean)).
#   An indexed view of the clone may be written to; the views unbind yields may not.
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

    count = 0
    for channel, mean, std in zip(denormalized[0], means, stds):  # [fix]
        denormalized[0][count] = denormalized[0][count].mul(std)
        denormalized[0][count] = denormalized[0][count].add(mean)
        count += 1

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
