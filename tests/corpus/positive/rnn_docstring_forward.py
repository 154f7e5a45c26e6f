# Source: https://github.com/pytorch/pytorch/issues/165621
# Report: the Python "efficient implementation" in the nn.RNN docstring does not work
#   with backward: it writes each layer's new state into h_t with h_t[layer] = ...,
#   while the next layer's matmul has saved h_t[layer - 1], a view of the same tensor.
# In-place op: line 31 (`h_t[layer] = torch.tanh(...)`).
# Saved by: line 32 (`input_t @ params[...].T` saves input_t = h_t[layer - 1]).
# Fix: fixed/rnn_docstring_forward.py, the version of pull request #173888 for this issue:
#   the states of a time step are a fresh list, stacked at the end.
import torch
import torch.nn as nn

torch.manual_seed(0)

# Efficient implementation equivalent to the following with bidirectional=False
rnn = nn.RNN(10, 20, 2)
params = dict(rnn.named_parameters())


def forward(x, hx=None, batch_first=False):
    if batch_first:
        x = x.transpose(0, 1)
    seq_len, batch_size, _ = x.size()
    if hx is None:
        hx = torch.zeros(rnn.num_layers, batch_size, rnn.hidden_size)
    h_t_minus_1 = hx.clone()
    h_t = hx.clone()
    output = []
    for t in range(seq_len):
        for layer in range(rnn.num_layers):
            input_t = x[t] if layer == 0 else h_t[layer - 1]
            h_t[layer] = torch.tanh(  # [inplace]
                input_t @ params[f"weight_ih_l{layer}"].T  # [saves]
                + h_t_minus_1[layer] @ params[f"weight_hh_l{layer}"].T
                + params[f"bias_hh_l{layer}"]
                + params[f"bias_ih_l{layer}"]
            )
        output.append(h_t[-1].clone())
        h_t_minus_1 = h_t.clone()
    output = torch.stack(output)
    if batch_first:
        output = output.transpose(0, 1)
    return output, h_t


input = torch.randn(5, 3, 10)
h0 = torch.randn(2, 3, 20)
output, hn = forward(input, h0)

target = torch.ones_like(output)
loss = nn.functional.mse_loss(output, target)
loss.backward()
print("loss", loss.item())
