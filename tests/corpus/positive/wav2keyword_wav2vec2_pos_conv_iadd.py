# Source: https://github.com/dobby-seo/Wav2Keyword/pull/9
# Report: fine-tuning Wav2Keyword (keyword spotting on fairseq's wav2vec 2.0) fails in
#   backward under torch 1.11 with "... [torch.cuda.FloatTensor [128, 768, 49]], which is
#   output 0 of AsStridedBackward0, is at version 2; expected version 1". In the wav2vec2
#   module's `extract_features`, the positional convolution keeps its input, a transposed
#   view of x, and `x += x_conv` then writes into x. The pull request replaces the in-place
#   add, citing the forum's explanation, and notes older torch computed wrong gradients
#   silently.
# In-place op: line 49 (`x += x_conv` in TransformerEncoder.extract_features).
# Saved by: line 47 (`self.pos_conv(x.transpose(1, 2))`: the Conv1d keeps its input, a view of x).
# Fix: fixed/wav2keyword_wav2vec2_pos_conv_iadd.py, the pull request's fix: `x = x + x_conv`.
# Shrunk: fairseq (not installed here) rebuilt as the parts of wav2vec2 on the path: a
#   one-layer feature extractor, post_extract_proj, the encoder's pos_conv (weight norm left
#   out, SamePad as a slice) and one transformer layer; 32 dimensions instead of 768; a keyword
#   classifier over the mean of the features, on random audio.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TransformerEncoder(nn.Module):
    def __init__(self, embedding_dim=32, conv_pos=16, conv_pos_groups=4, layers=1):
        super().__init__()
        self.dropout = 0.1
        self.pos_conv = nn.Sequential(
            nn.Conv1d(embedding_dim, embedding_dim, kernel_size=conv_pos, padding=conv_pos // 2,
                      groups=conv_pos_groups),
            nn.GELU(),
        )
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(embedding_dim, 4, 64, batch_first=False)
            for _ in range(layers))
        self.layer_norm = nn.LayerNorm(embedding_dim)
        self.layer_norm_first = False

    def forward(self, x, padding_mask=None):
        x = self.extract_features(x, padding_mask)
        if self.layer_norm_first:
            x = self.layer_norm(x)
        return x

    def extract_features(self, x, padding_mask=None):
        if padding_mask is not None:
            x[padding_mask] = 0
        x_conv = self.pos_conv(x.transpose(1, 2))  # [saves]
        x_conv = x_conv[:, :, :-1].transpose(1, 2)
        x += x_conv  # [inplace]
        if not self.layer_norm_first:
            x = self.layer_norm(x)
        x = F.dropout(x, p=self.dropout, training=self.training)
        x = x.transpose(0, 1)  # B x T x C -> T x B x C
        for layer in self.layers:
            x = layer(x)
        return x.transpose(0, 1)


class Wav2Vec2Model(nn.Module):
    def __init__(self, embed=16, encoder_embed_dim=32):
        super().__init__()
        self.feature_extractor = nn.Sequential(nn.Conv1d(1, embed, 10, stride=5), nn.GELU())
        self.layer_norm = nn.LayerNorm(embed)
        self.post_extract_proj = nn.Linear(embed, encoder_embed_dim)
        self.dropout_input = nn.Dropout(0.1)
        self.encoder = TransformerEncoder(encoder_embed_dim)

    def extract_features(self, source, padding_mask=None):
        features = self.feature_extractor(source.unsqueeze(1)).transpose(1, 2)
        features = self.layer_norm(features)
        features = self.post_extract_proj(features)
        x = self.dropout_input(features)
        return self.encoder(x, padding_mask=padding_mask)


class KWS(nn.Module):
    def __init__(self, n_class=12):
        super().__init__()
        self.w2v_encoder = Wav2Vec2Model()
        self.decoder = nn.Linear(32, n_class)

    def forward(self, audio):
        x = self.w2v_encoder.extract_features(audio)
        return self.decoder(x.mean(dim=1))


model = KWS().train()
audio = torch.randn(4, 800)
labels = torch.randint(0, 12, (4,))
loss = F.cross_entropy(model(audio), labels)
loss.backward()
print("loss", loss.item())
