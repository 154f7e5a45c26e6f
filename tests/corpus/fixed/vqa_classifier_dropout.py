# Fixed version of positive/vqa_classifier_dropout.py.
# Source: https://github.com/BierOne/bottom-up-attention-vqa/issues/6
# Fix (the answer in the thread): `nn.Dropout(dropout, inplace=False)`. The `loss *= ...`
#   in instance_bce_with_logits stays: nothing saved the loss tensor.
import torch
import torch.nn as nn
from torch.nn.utils import weight_norm

torch.manual_seed(0)


class SimpleClassifier(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, dropout):
        super().__init__()
        layers = [
            weight_norm(nn.Linear(in_dim, hid_dim), dim=None),
            nn.ReLU(),
            nn.Dropout(dropout, inplace=False),  # [fix]
            weight_norm(nn.Linear(hid_dim, out_dim), dim=None)
        ]
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        logits = self.main(x)
        return logits


def instance_bce_with_logits(logits, labels):
    loss = nn.functional.binary_cross_entropy_with_logits(logits, labels)
    loss *= labels.size(1)
    return loss


classifier = SimpleClassifier(64, 128, 20, 0.5)
classifier.train()
joint_repr = torch.randn(8, 64)
answers = (torch.rand(8, 20) > 0.9).float()
loss = instance_bce_with_logits(classifier(joint_repr), answers)
loss.backward()
print("loss", loss.item())
