# Source: https://github.com/thorinf/simple-diffusion-lm/issues/2
# Report: training a simple diffusion language model, the reporter turned
#   `input_ids.masked_fill(...)` (building the targets, -100 outside the diffused positions)
#   into the in-place `input_ids.masked_fill_(...)` and got "[torch.cuda.LongTensor
#   [512, 50]] is at version 1; expected version 0": the embedding layer saved input_ids
#   (its indices) for backward. The reporter's working lines write into a copy instead.
# In-place op: line 40 (`input_ids.masked_fill_(...)`).
# Saved by: line 29 (`self.embedding(input_ids)`: the embedding's backward needs its indices).
# Fix: fixed/diffusion_lm_input_ids_masked_fill.py, the reporter's lines from the thread:
#   the targets are a clone of input_ids, filled in place.
# Shrunk: the model reduced to an embedding, the noising of the diffused positions, a small
#   transformer layer and the output head; random tokens, one step.
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
        x = self.embedding(input_ids)  # [saves]
        noise = torch.randn_like(x) * t[:, None, None]
        x = torch.where(diff_mask[..., None], x + noise, x)
        return self.lm_head(self.encoder(x))


model = DiffusionLM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
input_ids = torch.randint(0, vocab, (8, 12))
diff_mask = torch.rand(8, 12) < 0.5
logits = model(input_ids, diff_mask, torch.rand(8))
input_ids.masked_fill_(torch.logical_not(diff_mask), -100)  # [inplace]
loss = F.cross_entropy(logits.transpose(1, 2), input_ids, ignore_index=-100)
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("loss", loss.item())
