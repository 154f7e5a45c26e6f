# Source: https://github.com/galsang/BiDAF-pytorch/issues/30
# Report: "reset_params of class LSTM reports error": in model/model.py,
#   `getattr(self.rnn, f'bias_hh_l{i}').chunk(4)[1].fill_(1)` raises "Output 1 of
#   SplitBackward0 is a view and is being modified inplace": chunk returns several views
#   of the bias, a parameter that requires grad, and those may not be written in place.
# In-place op: line 32 (`....chunk(4)[1].fill_(1)`, the forget-gate bias).
# Fix: fixed/bidaf_lstm_bias_chunk.py: do the initialisation under torch.no_grad() (the
#   issue has no answer; nn.init's own functions work the same way).
# Shrunk: the LSTM wrapper alone, run once on a random batch.
import torch
import torch.nn as nn

torch.manual_seed(0)


class LSTM(nn.Module):
    def __init__(self, input_size, hidden_size, batch_first=False, num_layers=1,
                 bidirectional=False, dropout=0.2):
        super().__init__()
        self.rnn = nn.LSTM(input_size=input_size, hidden_size=hidden_size,
                           num_layers=num_layers, bidirectional=bidirectional,
                           batch_first=batch_first)
        self.reset_params()
        self.dropout = nn.Dropout(p=dropout)

    def reset_params(self):
        for i in range(self.rnn.num_layers):
            nn.init.orthogonal_(getattr(self.rnn, f'weight_hh_l{i}'))
            nn.init.kaiming_normal_(getattr(self.rnn, f'weight_ih_l{i}'))
            nn.init.constant_(getattr(self.rnn, f'bias_hh_l{i}'), val=0)
            nn.init.constant_(getattr(self.rnn, f'bias_ih_l{i}'), val=0)
            getattr(self.rnn, f'bias_hh_l{i}').chunk(4)[1].fill_(1)  # [inplace]

    def forward(self, x):
        x = self.dropout(x)
        output, (h, c) = self.rnn(x)
        return output, h


context_LSTM = LSTM(input_size=8, hidden_size=8, batch_first=True)
output, h = context_LSTM(torch.randn(2, 5, 8))
output.mean().backward()
print(output.shape)
