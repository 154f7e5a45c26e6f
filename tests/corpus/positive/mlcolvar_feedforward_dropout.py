# Source: https://github.com/luigibonati/mlcolvar/issues/118
# Report: "Dropout does not work": a DeepTDA model with options={'nn': {'dropout': [...]}}
#   fails with "[torch.cuda.FloatTensor [956547, 4]], which is output 0 of ReluBackward0,
#   is at version 2; expected version 1". The reporter points at
#   mlcolvar/core/nn/feedforward.py: FeedForward appends
#   torch.nn.Dropout(p=drop, inplace=True) right after the activation.
# In-place op: lines 50, 56 (`torch.nn.Dropout(p=drop, inplace=True)`, run by `self.nn(x)`).
# Saved by: line 19 (the activation module, a ReLU, which saved its output).
# Fix: fixed/mlcolvar_feedforward_dropout.py: the dropout out of place, as asked in the
#   issue.
# Shrunk: FeedForward without lightning, a DeepTDA-like loss on random descriptors.
import torch

torch.manual_seed(0)


def get_activation(activation):
    if activation == "relu":
        return torch.nn.ReLU()  # [saves]
    if activation == "tanh":
        return torch.nn.Tanh()
    return None


def parse_nn_options(option, n_layers, last_layer_activation):
    if isinstance(option, list):
        return option
    options = [option] * n_layers
    if not last_layer_activation:
        options[-1] = None
    return options


class FeedForward(torch.nn.Module):
    def __init__(self, layers, activation="relu", dropout=None, batchnorm=False,
                 last_layer_activation=False):
        super().__init__()
        n_layers = len(layers) - 1
        activation_list = parse_nn_options(activation, n_layers, last_layer_activation)
        dropout_list = parse_nn_options(dropout, n_layers, last_layer_activation)
        batchnorm_list = parse_nn_options(batchnorm, n_layers, last_layer_activation)

        modules = []
        for i in range(len(layers) - 1):
            modules.append(torch.nn.Linear(layers[i], layers[i + 1]))
            activ, drop, norm = activation_list[i], dropout_list[i], batchnorm_list[i]
            if activ is not None:
                modules.append(get_activation(activ))
            if drop is not None:
                modules.append(torch.nn.Dropout(p=drop, inplace=True))  # [inplace]
            if norm:
                modules.append(torch.nn.BatchNorm1d(layers[i + 1]))
        self.nn = torch.nn.Sequential(*modules)

    def forward(self, x):
        return self.nn(x)  # [inplace]


model = FeedForward([10, 16, 4, 1], dropout=[0.2, 0.4, None])
model.train()
x = torch.randn(64, 10)
labels = torch.randint(0, 2, (64,))
target_centers = torch.tensor([-7.0, 7.0])
cv = model(x).squeeze(1)
loss = sum(((cv[labels == k] - target_centers[k]) ** 2).mean() for k in range(2))
loss.backward()
print("loss", loss.item())
