# Source: https://github.com/pytorch/vision/issues/7174
# Report: torchvision.ops.MLP builds its activation and its dropout with `inplace=True` by
#   default; with dropout > 0 the in-place Dropout writes into the in-place ReLU's output,
#   which ReLU's backward needs ("... which is output 0 of ReluBackward0, is at version 4;
#   expected version 3"). `MLP(3, [3, 3], dropout=0.5, inplace=False)` works.
# In-place op: lines 37, 50 (MLP's `torch.nn.Dropout(dropout, **params)` with inplace=True, run by
#   the user's call).
# Saved by: line 36 (MLP's `activation_layer(**params)`: the in-place ReLU keeps its output).
# Fix: fixed/torchvision_ops_mlp_dropout_inplace.py, the reporter's working call:
#   `inplace=False`.
# Shrunk: torchvision (not installed here) rebuilt as its ops.MLP (the layer loop as the
#   library writes it), the thread's call.
from typing import Callable, List, Optional

import torch


class MLP(torch.nn.Sequential):
    def __init__(
        self,
        in_channels: int,
        hidden_channels: List[int],
        norm_layer: Optional[Callable[..., torch.nn.Module]] = None,
        activation_layer: Optional[Callable[..., torch.nn.Module]] = torch.nn.ReLU,
        inplace: Optional[bool] = None,
        bias: bool = True,
        dropout: float = 0.0,
    ):
        params = {} if inplace is None else {"inplace": inplace}
        layers = []
        in_dim = in_channels
        for hidden_dim in hidden_channels[:-1]:
            layers.append(torch.nn.Linear(in_dim, hidden_dim, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden_dim))
            layers.append(activation_layer(**params))  # [saves]
            layers.append(torch.nn.Dropout(dropout, **params))  # [inplace]
            in_dim = hidden_dim
        layers.append(torch.nn.Linear(in_dim, hidden_channels[-1], bias=bias))
        layers.append(torch.nn.Dropout(dropout, **params))
        super().__init__(*layers)


def mlp(in_channels, hidden_channels, dropout=0.0, inplace=True):
    """torchvision.ops.MLP's default: in-place activation and dropout."""
    return MLP(in_channels, hidden_channels, dropout=dropout, inplace=inplace)


torch.manual_seed(0)
mlp(3, [3, 3], dropout=0.5)(torch.rand(3)).sum().backward()  # [inplace]
print("backward done")
