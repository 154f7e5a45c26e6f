# Fixed version of positive/ctrl_prompt_embeds_leaf_scaled.py.
# Source: https://github.com/huggingface/transformers/issues/47741 (the usual fix on the
#   user's side).
# Fix: the model gets the prompt repeated over the batch, a new tensor it may scale in place;
#   the parameter itself is left as it is.
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
        self.prompt = nn.Parameter(torch.randn(1, n_tokens, model.config.n_embd) * 0.1)

    def forward(self, batch_size):
        embeds = self.prompt.repeat(batch_size, 1, 1)  # [fix]
        return self.model(inputs_embeds=embeds).last_hidden_state


config = CTRLConfig(n_embd=16, n_layer=1, n_head=2, dff=32, vocab_size=50, n_positions=32)
tuner = PromptTuning(CTRLModel(config))
optimizer = torch.optim.Adam([tuner.prompt], lr=1e-2)
loss = tuner(batch_size=2).pow(2).mean()
loss.backward()
optimizer.step()
print("loss", loss.item())
