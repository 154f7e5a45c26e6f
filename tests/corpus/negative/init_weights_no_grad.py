# Mirrors: pytorch/vision, torchvision/models/resnet.py (ResNet.__init__ weight init with
#   nn.init.kaiming_normal_ / constant_) and huggingface/transformers, BertPreTrainedModel
#   ._init_weights (`module.weight.data.normal_(...)`, `module.weight.data[padding_idx]
#   .zero_()`, `module.bias.data.zero_()`)
# Safe in-place ops: nn.init functions run under torch.no_grad(); the .data writes happen
#   before any forward, so no saved tensor can be affected. A training step follows.
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyBert(nn.Module):
    def __init__(self, vocab_size=30, hidden_size=16, pad_token_id=0, initializer_range=0.02):
        super().__init__()
        self.initializer_range = initializer_range
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size, padding_idx=pad_token_id)
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size, eps=1e-12)
        self.conv = nn.Conv2d(1, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.apply(self._init_weights)

    def _init_weights(self, module):
        """Initialize the weights"""
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=self.initializer_range)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=self.initializer_range)
            if module.padding_idx is not None:
                module.weight.data[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)
        elif isinstance(module, nn.Conv2d):
            nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(module, (nn.BatchNorm2d, nn.GroupNorm)):
            nn.init.constant_(module.weight, 1)
            nn.init.constant_(module.bias, 0)

    def forward(self, input_ids, image):
        h = self.LayerNorm(self.dense(self.word_embeddings(input_ids)))
        v = self.bn(self.conv(image)).mean()
        return h.mean() + v


model = TinyBert()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
loss = model(torch.randint(0, 30, (2, 5)), torch.randn(2, 1, 8, 8))
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("loss", loss.item())
