# Source: https://github.com/BierOne/bottom-up-attention-vqa/issues/6
# Report: training fails with "[torch.cuda.FloatTensor [512, 2048]], which is output 0 of
#   ReluBackward0, is at version 1; expected version 0". The answer in the thread: in
#   model/classifier.py the Dropout(dropout, inplace=True) of SimpleClassifier "should be
#   modified by nn.Dropout(dropout, inplace=False)": it follows a ReLU.
# In-place op: lines 23, 29 (`nn.Dropout(dropout, inplace=True)`, run by `self.main(x)`).
# Saved by: line 22 (`nn.ReLU()`: its backward needs its output).
# Fix: fixed/vqa_classifier_dropout.py: `nn.Dropout(dropout, inplace=False)`.
# Shrunk: the classifier alone on random joint features (the VQA model's last stage).
import torch
import torch.nn as nn
from torch.nn.utils import weight_norm

torch.manual_seed(0)


class SimpleClassifier(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, dropout):
        super().__init__()
        layers = [
            weight_norm(nn.Linear(in_dim, hid_dim), dim=None),
            nn.ReLU(),  # [saves]
            nn.Dropout(dropout, inplace=True),  # [inplace]
            weight_norm(nn.Linear(hid_dim, out_dim), dim=None)
        ]
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        logits = self.main(x)  # [inplace]
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
