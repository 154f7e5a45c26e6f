# Source: https://github.com/paarthneekhara/AdversarialDeepFakes/issues/23
# Report: attack.py -> attack_algos.robust_fgsm -> predict_with_model -> norm_transform
#   fails in dataset/transform.py at `t.sub_(m).div_(s)` with "Output 0 of UnbindBackward
#   is a view and is being modified inplace": the attacked image requires grad, and the
#   in-place normalisation loops over its channels (an unbind).
# In-place op: line 24 (`t.sub_(m).div_(s)`).
# Fix: fixed/adversarial_deepfakes_normalize.py: normalise out of place, broadcasting the
#   mean and std (the issue has no answer; this is the change that makes the attack run).
# Shrunk: a 2-layer CNN detector, a random 3x40x40 face, one FGSM step.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Normalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        for t, m, s in zip(tensor, self.mean, self.std):
            t.sub_(m).div_(s)  # [inplace]
        return tensor


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
