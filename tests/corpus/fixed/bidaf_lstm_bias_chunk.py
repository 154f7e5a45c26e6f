# Fixed version of positive/bidaf_lstm_bias_chunk.py.
# Source: https://github.com/galsang/BiDAF-pytorch/issues/30 (no answer in the thread)
# Fix: set the forget-gate bias under torch.no_grad(), where writing to views of a
#   parameter is allowed and not recorded.
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
            with torch.no_grad():  # [fix]
                getattr(self.rnn, f'bias_hh_l{i}').chunk(4)[1].fill_(1)

    def forward(self, x):
        x = self.dropout(x)
        output, (h, c) = self.rnn(x)
        return output, h


context_LSTM = LSTM(input_size=8, hidden_size=8, batch_first=True)
output, h = context_LSTM(torch.randn(2, 5, 8))
output.mean().backward()
print(output.shape)
