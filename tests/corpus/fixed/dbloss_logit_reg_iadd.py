# Fixed version of positive/dbloss_logit_reg_iadd.py.
# Source: https://github.com/wutong16/DistributionBalancedLoss/issues/20
# Fix: the usual one (the issue has no answer): add the bias out of place, so the
#   function rebinds its own name instead of writing into the caller's tensor.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResampleLoss(nn.Module):
    def __init__(self, class_freq, neg_class_freq, neg_scale=2.0, init_bias=0.05,
                 gamma=2, balance_param=2.0, map_param=(10.0, 0.2, 0.1)):
        super().__init__()
        self.logit_reg = dict(neg_scale=neg_scale, init_bias=init_bias)
        self.gamma, self.balance_param = gamma, balance_param
        self.map_alpha, self.map_beta, self.map_gamma = map_param
        self.class_freq, self.neg_class_freq = class_freq, neg_class_freq
        self.train_num = self.class_freq[0] + self.neg_class_freq[0]
        self.neg_scale = neg_scale
        self.init_bias = - torch.log(self.train_num / self.class_freq - 1) * init_bias / neg_scale
        self.freq_inv = torch.ones(self.class_freq.shape) / self.class_freq

    def forward(self, cls_score, label):
        weight = self.rebalance_weight(label.float())
        cls_score, weight = self.logit_reg_functions(label.float(), cls_score, weight)
        logpt = - F.binary_cross_entropy_with_logits(cls_score.clone(), label.float(),
                                                     reduction='none')
        pt = torch.exp(logpt)
        loss = F.binary_cross_entropy_with_logits(cls_score, label.float(), weight=weight,
                                                  reduction='none')
        loss = ((1 - pt) ** self.gamma) * loss
        return (self.balance_param * loss).mean()

    def logit_reg_functions(self, labels, logits, weight=None):
        if not self.logit_reg:
            return logits, weight
        if 'init_bias' in self.logit_reg:
            logits = logits + self.init_bias  # [fix]
        if 'neg_scale' in self.logit_reg:
            logits = logits * (1 - labels) * self.neg_scale + logits * labels
            weight = weight / self.neg_scale * (1 - labels) + weight * labels
        return logits, weight

    def rebalance_weight(self, gt_labels):
        repeat_rate = torch.sum(gt_labels.float() * self.freq_inv, dim=1, keepdim=True)
        pos_weight = self.freq_inv.clone().detach().unsqueeze(0) / repeat_rate
        return torch.sigmoid(self.map_beta * (pos_weight - self.map_gamma)) + self.map_alpha


num_classes = 10
class_freq = torch.randint(5, 50, (num_classes,)).float()
criterion = ResampleLoss(class_freq, 100 - class_freq)
classifier = nn.Linear(32, num_classes)
features = torch.randn(16, 32)
labels = (torch.rand(16, num_classes) < 0.3).long()
labels[:, 0] = 1  # every sample has at least one label
cls_score = torch.sigmoid(classifier(features))
loss = criterion(cls_score, labels)
loss.backward()
print("loss", loss.item())
