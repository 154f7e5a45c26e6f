# Fixed version of positive/diffusion_lm_input_ids_masked_fill.py.
# Source: https://github.com/thorinf/simple-diffusion-lm/issues/2 (the reporter's lines).
# Fix: the targets are a copy of input_ids (`input_ids.data.clone()`), filled in place; the
#   indices the embedding saved are not written.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
vocab, dim = 50, 16


class DiffusionLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.encoder = nn.TransformerEncoderLayer(dim, 2, 32, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, diff_mask, t):
        x = self.embedding(input_ids)
        noise = torch.randn_like(x) * t[:, None, None]
        x = torch.where(diff_mask[..., None], x + noise, x)
        return self.lm_head(self.encoder(x))


model = DiffusionLM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
input_ids = torch.randint(0, vocab, (8, 12))
diff_mask = torch.rand(8, 12) < 0.5
logits = model(input_ids, diff_mask, torch.rand(8))
targets = input_ids.data.clone()  # [fix]
targets.masked_fill_(torch.logical_not(diff_mask), -100)
loss = F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=-100)
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("loss", loss.item())
