"""``--auto``: build each ``nn.Module`` of a file and run one training step on it.

A module is built with its default arguments; its example input is inferred from its
first layer (in registration order, the order of ``__init__``): the channels of a
convolution, the features of a linear layer, the vocabulary of an embedding... A few
spatial sizes are tried, since downsampling networks need inputs divisible by their
total stride. Each module runs forward in train mode, a loss (the sum of its
floating-point outputs), and backward. What cannot be built or fed is reported as
skipped, with the reason. Runs in the probe's child process, under torch.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

BATCH = 2  # BatchNorm in train mode needs more than one value per channel
SEQUENCE = 8
SIZES_1D = (64, 32, 128)
SIZES_2D = (64, 32, 128, 224)
SIZES_3D = (16, 32)


class Skip(Exception):
    """This module cannot be probed automatically; the message says why."""


@dataclass(frozen=True)
class Example:
    """Inputs for one forward call, and how to describe them to the user."""

    args: tuple[Any, ...]
    description: str


def module_classes(namespace: dict[str, Any], module_name: str) -> list[type[nn.Module]]:
    """The ``nn.Module`` subclasses defined in the file (not imported), in file order."""
    return [value for value in namespace.values()
            if isinstance(value, type) and issubclass(value, nn.Module)
            and value.__module__ == module_name]


def build(cls: type[nn.Module]) -> nn.Module:
    required = _required_parameters(cls.__init__, skip=1)
    if required:
        raise Skip(f"needs arguments: {', '.join(required)}")
    try:
        return cls()
    except Exception as error:
        raise Skip(f"building it raised {type(error).__name__}: {error}") from None


def _required_parameters(function: Callable[..., Any], skip: int) -> list[str]:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return []
    parameters = list(signature.parameters.values())[skip:]
    return [p.name for p in parameters
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD,
                                                   p.KEYWORD_ONLY)]


def examples(model: nn.Module, device: torch.device) -> Iterator[Example]:
    """Candidate inputs, most likely first, from the first layer that tells a shape."""
    for _, layer in model.named_modules():
        found = list(_examples_for(layer, device))
        if found:
            yield from found
            return
    # No layer to read a shape from: a module of bare parameters (a learned scale or
    # bias) usually broadcasts against inputs whose last dimension is theirs.
    for parameter in model.parameters():
        if parameter.dim() >= 1:
            width = parameter.shape[-1]
            yield _example(_randn(BATCH, width, device=device))
            yield _example(_randn(BATCH, SEQUENCE, width, device=device))
            return
    raise Skip("no first layer to infer an input from (a Conv, Linear, Embedding, RNN, "
               "norm or attention layer); name a function returning (model, inputs) instead")


def _randn(*shape: int, device: torch.device) -> torch.Tensor:
    return torch.randn(*shape, device=device)


def _describe(args: tuple[Any, ...]) -> str:
    return ", ".join(f"{tuple(a.shape)}" + ("" if a.is_floating_point() else f" {a.dtype}")
                     for a in args)


def _example(*args: torch.Tensor) -> Example:
    return Example(args, _describe(args))


def _examples_for(layer: nn.Module, device: torch.device) -> Iterator[Example]:
    if isinstance(layer, (nn.Conv1d, nn.ConvTranspose1d)):
        for size in SIZES_1D:
            yield _example(_randn(BATCH, layer.in_channels, size, device=device))
    elif isinstance(layer, (nn.Conv2d, nn.ConvTranspose2d)):
        for size in SIZES_2D:
            yield _example(_randn(BATCH, layer.in_channels, size, size, device=device))
    elif isinstance(layer, (nn.Conv3d, nn.ConvTranspose3d)):
        for size in SIZES_3D:
            yield _example(_randn(BATCH, layer.in_channels, size, size, size, device=device))
    elif isinstance(layer, nn.Linear):
        yield _example(_randn(BATCH, layer.in_features, device=device))
        yield _example(_randn(BATCH, SEQUENCE, layer.in_features, device=device))
    elif isinstance(layer, (nn.Embedding, nn.EmbeddingBag)):
        yield _example(torch.randint(0, layer.num_embeddings, (BATCH, SEQUENCE), device=device))
    elif isinstance(layer, nn.RNNBase):
        shape = (BATCH, SEQUENCE) if layer.batch_first else (SEQUENCE, BATCH)
        yield _example(_randn(*shape, layer.input_size, device=device))
    elif isinstance(layer, (nn.BatchNorm1d, nn.InstanceNorm1d)):
        yield _example(_randn(BATCH, layer.num_features, SIZES_1D[0], device=device))
        yield _example(_randn(BATCH, layer.num_features, device=device))
    elif isinstance(layer, (nn.BatchNorm2d, nn.InstanceNorm2d)):
        for size in SIZES_2D[:2]:
            yield _example(_randn(BATCH, layer.num_features, size, size, device=device))
    elif isinstance(layer, (nn.BatchNorm3d, nn.InstanceNorm3d)):
        yield _example(_randn(BATCH, layer.num_features, *(SIZES_3D[0],) * 3, device=device))
    elif isinstance(layer, nn.GroupNorm):
        for size in SIZES_2D[:2]:
            yield _example(_randn(BATCH, layer.num_channels, size, size, device=device))
    elif isinstance(layer, nn.LayerNorm):
        yield _example(_randn(BATCH, SEQUENCE, *layer.normalized_shape, device=device))
    elif isinstance(layer, (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)):
        width = layer.linear1.in_features
        shape = (BATCH, SEQUENCE) if layer.self_attn.batch_first else (SEQUENCE, BATCH)
        yield _example(_randn(*shape, width, device=device))
    elif isinstance(layer, nn.MultiheadAttention):
        shape = (BATCH, SEQUENCE) if layer.batch_first else (SEQUENCE, BATCH)
        yield _example(_randn(*shape, layer.embed_dim, device=device))


def forward_arity(model: nn.Module) -> int:
    """How many inputs forward requires (an inferred example provides one)."""
    return len(_required_parameters(model.forward, skip=0))


def loss_of(output: Any) -> torch.Tensor | None:
    """The sum of every floating-point tensor in the output that requires grad."""
    total: torch.Tensor | None = None
    for tensor in _tensors(output):
        if tensor.is_floating_point() and tensor.requires_grad:
            term = tensor.float().sum()
            total = term if total is None else total + term
    return total


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)


def train_step(model: nn.Module, inputs: Any, loss_fn: Callable[[Any], Any] | None,
               device: torch.device) -> None:
    """Forward in train mode, the loss, backward: what a training step does to autograd."""
    model.to(device).train()
    inputs = _to(inputs, device)
    if isinstance(inputs, dict):
        output = model(**inputs)
    elif isinstance(inputs, (tuple, list)):
        output = model(*inputs)
    else:
        output = model(inputs)
    loss = loss_fn(output) if loss_fn is not None else loss_of(output)
    if not isinstance(loss, torch.Tensor) or not loss.requires_grad:
        raise Skip("its output does not require grad (nothing to run backward on)")
    loss.backward()  # type: ignore[no-untyped-call]


def _to(value: Any, device: torch.device) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {k: _to(v, device) for k, v in value.items()}
    if isinstance(value, list):
        return [_to(v, device) for v in value]
    if isinstance(value, tuple):
        return tuple(_to(v, device) for v in value)
    return value
