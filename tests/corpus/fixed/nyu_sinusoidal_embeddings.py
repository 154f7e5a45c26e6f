# Fixed version of positive/nyu_sinusoidal_embeddings.py.
# Source: https://github.com/Atcold/NYU-DLSP20/issues/765
# Fix (one of the two remedies the reporter found): write the sinusoid table under
#   torch.no_grad(); the table is then frozen by the detach_/requires_grad lines.
import torch
import torch.nn as nn

torch.manual_seed(0)


def create_sinusoidal_embeddings(nb_p, dim, E):
    p = torch.arange(nb_p, dtype=torch.float64).unsqueeze(1)
    j = torch.arange(dim, dtype=torch.float64).unsqueeze(0)
    theta = p / torch.pow(10000, 2 * torch.div(j, 2, rounding_mode='floor') / dim)
    with torch.no_grad():  # [fix]
        E[:, 0::2] = torch.FloatTensor(torch.sin(theta[:, 0::2]).float())
        E[:, 1::2] = torch.FloatTensor(torch.cos(theta[:, 1::2]).float())
    E.detach_()
    E.requires_grad = False


class Embeddings(nn.Module):
    def __init__(self, d_model, vocab_size, max_position_embeddings, p):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, d_model, padding_idx=1)
        self.position_embeddings = nn.Embedding(max_position_embeddings, d_model)
        create_sinusoidal_embeddings(nb_p=max_position_embeddings, dim=d_model,
                                     E=self.position_embeddings.weight)
        self.LayerNorm = nn.LayerNorm(d_model, eps=1e-12)

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long).unsqueeze(0).expand_as(input_ids)
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        return self.LayerNorm(embeddings)


emb = Embeddings(d_model=32, vocab_size=100, max_position_embeddings=64, p=0.1)
out = emb(torch.randint(0, 100, (2, 10)))
out.sum().backward()
print(out.shape, emb.position_embeddings.weight.requires_grad)
