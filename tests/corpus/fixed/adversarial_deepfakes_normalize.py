# Fixed version of positive/adversarial_deepfakes_normalize.py.
# Source: https://github.com/paarthneekhara/AdversarialDeepFakes/issues/23 (no answer)
# Fix: Normalize computes (tensor - mean) / std out of place, with the mean and std
#   broadcast over the channels; same values, and the attacked image keeps its graph.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Normalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        mean = torch.tensor(self.mean).view(-1, 1, 1)  # [fix]
        std = torch.tensor(self.std).view(-1, 1, 1)
        return (tensor - mean) / std


norm_transform = Normalize([0.5] * 3, [0.5] * 3)


def predict_with_model(preprocessed_image, model, post_function=nn.Softmax(dim=1)):
    resized_image = F.interpolate(preprocessed_image, size=(32, 32), mode="bilinear",
                                  align_corners=False)
    normalized_image = norm_transform(resized_image[0]).unsqueeze(0)
    logits = model(normalized_image)
    output = post_function(logits)
    _, prediction = torch.max(output, 1)
    return int(prediction.item()), output, logits


def robust_fgsm(input_img, model, eps=0.05):
    input_var = input_img.clone().requires_grad_(True)
    prediction, output, logits = predict_with_model(input_var, model)
    loss = F.cross_entropy(logits, torch.tensor([0]))
    loss.backward()
    return (input_var + eps * input_var.grad.sign()).clamp(0, 1).detach()


model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(8, 2))
processed_image = torch.rand(1, 3, 40, 40)
perturbed_image = robust_fgsm(processed_image, model)
print(perturbed_image.shape)
