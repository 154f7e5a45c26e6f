# Source: https://github.com/pytorch/examples/pull/779
# Report: "[word_language_model] Fix grad in-place operation": the manual SGD update in
#   main.py, `p.add_(-lr, p.grad)` over model.parameters(), throws "RuntimeError: a leaf
#   Variable that requires grad is being used in an in-place operation"; using
#   `p.data.add_(-lr, p.grad)` fixes it (merged).
# In-place op: line 74 (`p.add_(p.grad, alpha=-lr)`; the old positional form is gone).
# Fix: fixed/word_lm_manual_sgd.py, the merged change: update p.data.
# Shrunk: RNNModel with a 2-layer LSTM of 16 units, a random corpus of 200 tokens, one
#   epoch of bptt=10 batches.
import torch
import torch.nn as nn

torch.manual_seed(0)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid
        self.nlayers = nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.decoder.out_features)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i, bptt=10):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


ntokens = 50
train_data = torch.randint(0, ntokens, (200,)).view(-1, 4)  # batchify: 4 columns
model = RNNModel(ntokens, 16, 16, 2)
criterion = nn.NLLLoss()
lr = 20
clip = 0.25


def train():
    model.train()
    total_loss = 0.
    hidden = model.init_hidden(4)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, 10)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.add_(p.grad, alpha=-lr)  # [inplace]
        total_loss += loss.item()
    return total_loss


print("loss", train())
