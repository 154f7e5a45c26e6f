# Source: https://github.com/huggingface/transformers/issues/47741
# Report: several models of transformers write into tensors the caller passes to forward;
#   CTRLModel scales the caller's inputs_embeds in place (`inputs_embeds *= sqrt(d_model)`).
#   When those embeddings are trainable soft-prompt parameters (prompt tuning: a leaf that
#   requires grad), the model's first in-place write raises "a leaf Variable that requires
#   grad is being used in an in-place operation".
# In-place op: line 30 (`model(inputs_embeds=self.prompt)`: CTRLModel's `inputs_embeds *=`).
# Saved by: line 27 (`nn.Parameter`: the prompt is a leaf that requires grad).
# Fix: fixed/ctrl_prompt_embeds_leaf_scaled.py, the usual fix on the user's side (the issue
#   was closed without a change to the model): the prompt is repeated over the batch, which
#   hands the model a new tensor, not the parameter itself.
# Shrunk: a tiny randomly initialised CTRL from the installed transformers; a soft prompt
#   only (no input tokens), a squared-activation loss, one step.
import torch
import torch.nn as nn
from transformers import CTRLConfig, CTRLModel

torch.manual_seed(0)


class PromptTuning(nn.Module):
    def __init__(self, model, n_tokens=4):
        super().__init__()
        self.model = model
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.prompt = nn.Parameter(torch.randn(1, n_tokens, model.config.n_embd) * 0.1)  # [saves]

    def forward(self, batch_size):
        hidden = self.model(inputs_embeds=self.prompt).last_hidden_state  # [inplace]
        return hidden.expand(batch_size, -1, -1)


config = CTRLConfig(n_embd=16, n_layer=1, n_head=2, dff=32, vocab_size=50, n_positions=32)
tuner = PromptTuning(CTRLModel(config))
optimizer = torch.optim.Adam([tuner.prompt], lr=1e-2)
loss = tuner(batch_size=2).pow(2).mean()
loss.backward()
optimizer.step()
print("loss", loss.item())
