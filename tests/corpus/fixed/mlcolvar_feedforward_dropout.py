# Fixed version of positive/mlcolvar_feedforward_dropout.py.
# Source: https://github.com/luigibonati/mlcolvar/issues/118
# Fix (what the issue asks for): the dropout layers are out of place, so the activation's
#   output that ReLU's backward needs is left alone.
import torch

torch.manual_seed(0)


def get_activation(activation):
    if activation == "relu":
        return torch.nn.ReLU()
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
                modules.append(torch.nn.Dropout(p=drop))  # [fix]
            if norm:
                modules.append(torch.nn.BatchNorm1d(layers[i + 1]))
        self.nn = torch.nn.Sequential(*modules)

    def forward(self, x):
        return self.nn(x)


model = FeedForward([10, 16, 4, 1], dropout=[0.2, 0.4, None])
model.train()
x = torch.randn(64, 10)
labels = torch.randint(0, 2, (64,))
target_centers = torch.tensor([-7.0, 7.0])
cv = model(x).squeeze(1)
loss = sum(((cv[labels == k] - target_centers[k]) ** 2).mean() for k in range(2))
loss.backward()
print("loss", loss.item())
