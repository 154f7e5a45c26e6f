# Fixed version of positive/owlvit_class_head_norm.py.
# Source: https://github.com/huggingface/transformers/pull/24529
# Fix: the PR's: normalize out of place, dividing by (norm + 1e-6).
import torch
import torch.nn as nn

torch.manual_seed(0)


class OwlViTConfig:
    class vision_config:
        hidden_size = 24

    class text_config:
        hidden_size = 16


class OwlViTClassPredictionHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        out_dim = config.text_config.hidden_size
        self.query_dim = config.vision_config.hidden_size
        self.dense0 = nn.Linear(self.query_dim, out_dim)
        self.logit_shift = nn.Linear(self.query_dim, 1)
        self.logit_scale = nn.Linear(self.query_dim, 1)
        self.elu = nn.ELU()

    def forward(self, image_embeds, query_embeds, query_mask):
        image_class_embeds = self.dense0(image_embeds)

        # Normalize image and text features
        image_class_embeds = image_class_embeds / (torch.linalg.norm(image_class_embeds, dim=-1, keepdim=True) + 1e-6)  # [fix]
        query_embeds = query_embeds / (torch.linalg.norm(query_embeds, dim=-1, keepdim=True) + 1e-6)  # [fix]

        # Get class predictions
        pred_logits = torch.einsum("...pd,...qd->...pq", image_class_embeds, query_embeds)

        # Apply a learnable shift and scale to logits
        logit_shift = self.logit_shift(image_embeds)
        logit_scale = self.logit_scale(image_embeds)
        logit_scale = self.elu(logit_scale) + 1
        pred_logits = (pred_logits + logit_shift) * logit_scale

        if query_mask is not None:
            if query_mask.ndim > 1:
                query_mask = torch.unsqueeze(query_mask, dim=-2)
            pred_logits = pred_logits.to(torch.float64)
            pred_logits = torch.where(query_mask == 0, -1e6, pred_logits)
            pred_logits = pred_logits.to(torch.float32)
        return (pred_logits, image_class_embeds)


head = OwlViTClassPredictionHead(OwlViTConfig())
text_projection = nn.Linear(16, 16)  # stands for the text tower's projection
image_embeds = torch.randn(2, 9, 24)  # 3x3 patches
query_embeds = text_projection(torch.randn(2, 4, 16))
query_mask = torch.ones(2, 4)
pred_logits, _ = head(image_embeds, query_embeds, query_mask)
loss = nn.functional.binary_cross_entropy_with_logits(pred_logits, torch.rand(2, 9, 4))
loss.backward()
print("loss", loss.item())
