# Fixed version of positive/torchvision_ops_mlp_dropout_inplace.py.
# Source: https://github.com/pytorch/vision/issues/7174 (the reporter's working call).
# Fix: the MLP is built with inplace=False, so the dropout does not write into the ReLU's
#   saved output.
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
            layers.append(activation_layer(**params))
            layers.append(torch.nn.Dropout(dropout, **params))
            in_dim = hidden_dim
        layers.append(torch.nn.Linear(in_dim, hidden_channels[-1], bias=bias))
        layers.append(torch.nn.Dropout(dropout, **params))
        super().__init__(*layers)


def mlp(in_channels, hidden_channels, dropout=0.0, inplace=True):
    """torchvision.ops.MLP's default: in-place activation and dropout."""
    return MLP(in_channels, hidden_channels, dropout=dropout, inplace=inplace)


torch.manual_seed(0)
mlp(3, [3, 3], dropout=0.5, inplace=False)(torch.rand(3)).sum().backward()  # [fix]
print("backward done")
