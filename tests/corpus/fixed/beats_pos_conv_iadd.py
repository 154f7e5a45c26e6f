# Fixed version of positive/beats_pos_conv_iadd.py.
# Source: https://github.com/microsoft/unilm/pull/999 (the pull request's change).
# Fix: the features and the positional embedding are summed into a new tensor; the x the
#   convolution saved is left as it was.
import torch
import torch.nn as nn

torch.manual_seed(0)


class SamePad(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        return x[:, :, :-self.remove] if self.remove else x


class TransformerEncoder(nn.Module):
    def __init__(self, dim=32, conv_pos=16, groups=4):
        super().__init__()
        conv = nn.Conv1d(dim, dim, conv_pos, padding=conv_pos // 2, groups=groups)
        self.pos_conv = nn.Sequential(nn.utils.parametrizations.weight_norm(conv, dim=2),
                                      SamePad(conv_pos), nn.GELU())
        self.layer_norm = nn.LayerNorm(dim)
        self.layer = nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True)

    def extract_features(self, x):
        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x = x.clone() + x_conv  # [fix]
        x = self.layer_norm(x)
        return self.layer(x)


class BEATsClassifier(nn.Module):
    def __init__(self, n_mels=16, dim=32, classes=5):
        super().__init__()
        self.patch_embedding = nn.Linear(n_mels, dim)
        self.encoder = TransformerEncoder(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, fbank):
        features = self.patch_embedding(fbank)
        return self.head(self.encoder.extract_features(features).mean(1))


model = BEATsClassifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
logits = model(torch.randn(2, 24, 16))
loss = nn.functional.cross_entropy(logits, torch.tensor([1, 3]))
loss.backward()
optimizer.step()
print("loss", loss.item())
