"""The autograd facts GradGuard's analysis rests on, loaded from generated data.

The data files in ``data/`` are written by ``tools/generate_facts.py`` from the installed
torch (its derivatives.yaml, native_functions.yaml, and traces of each Python spelling);
nothing here is typed by hand, and nothing here imports torch.

Vocabulary of an :class:`Effect` (what one call does to autograd state):

roles
    ``input``: the first tensor argument (``self`` of a method, the tensor a module is
    called on); ``other``: the second tensor argument (a binary op's right operand,
    ``F.conv2d``'s weight, a module's weight); ``output``: the returned tensor.
saves
    role -> condition under which autograd saves that tensor for backward, when the call
    records a graph at all (grad mode on and some input requires grad). Conditions:
    ``always``; ``other_requires_grad`` (``x * y`` keeps ``x`` only to compute ``y``'s
    gradient); ``input_requires_grad``.
writes
    ``True`` when the call mutates its ``input`` in place (bumping its version counter and
    that of every view sharing its storage).
returns
    ``fresh`` (new storage), ``view`` (shares the input's storage and version counter),
    ``views`` (a tuple of such views: split/chunk/unbind, which autograd forbids writing
    to), ``input`` (returns the mutated input itself, for in-place calls), ``nograd``
    (a fresh tensor that never requires grad: argmax, comparisons, ``.data``...).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal

Role = Literal["input", "other", "output"]
Condition = Literal["always", "other_requires_grad", "input_requires_grad"]
Returns = Literal["fresh", "view", "views", "view_pieces", "tuple", "input"]


@dataclass(frozen=True)
class InplaceFlag:
    """Where a call's ``inplace`` switch sits: its keyword and its positional index."""

    name: str
    position: int | None


@dataclass(frozen=True)
class Effect:
    """What one call does: which tensors it saves, whether it writes its input."""

    aten: tuple[str, ...]
    saves: dict[str, str]
    writes: bool
    returns: str
    differentiable: bool = True
    inplace_flag: InplaceFlag | None = None
    inplace: Effect | None = None
    # ``returns == "tuple"``: each item's field name and whether it carries grad
    # (``topk``: values do, indices do not).
    outputs: tuple[tuple[str, bool], ...] = ()

    def with_inplace(self, on: bool) -> Effect:
        """The effect of this call when its ``inplace`` switch is ``on``."""
        if on and self.inplace is not None:
            return self.inplace
        return self


@dataclass(frozen=True)
class ModuleFacts:
    """An ``nn.Module`` class: its constructor's inplace switch and its call's effect."""

    name: str
    call: Effect
    has_parameters: bool
    ctor_inplace: InplaceFlag | None = None
    call_inplace: Effect | None = None
    # A call writes the module's own parameters (``Embedding(max_norm=...)``).
    writes_parameters: bool = False
    # It is called with indices (``Embedding``): its input never requires grad.
    index_input: bool = False
    # A call's result when it is a nested tuple: lists of "tensor", the first tensor the
    # one ``call`` describes (an LSTM's ``["tensor", ["tensor", "tensor"]]``).
    outputs: Any = None
    # The public torch.nn classes it derives from (``torch.nn.Module`` included).
    bases: tuple[str, ...] = ()

    def effect(self, inplace: bool) -> Effect:
        if inplace and self.call_inplace is not None:
            return self.call_inplace
        return self.call


@dataclass(frozen=True)
class AtenOp:
    """One aten overload as derivatives.yaml and native_functions.yaml describe it."""

    name: str
    saves: tuple[str, ...]
    saves_result: bool
    writes: tuple[str, ...]
    view_of: tuple[str, ...]
    # The derivatives.yaml entry whose formula it runs (its own, or the one an in-place
    # or out= overload inherits), if it has one.
    formula: str | None = None
    # An in-place op whose formula needs its old ``self`` keeps a clone of it.
    saves_copy: tuple[str, ...] = ()


# In-place in their schema, but they change what a tensor is, not its values: they bump
# no version counter that a saved tensor is checked against.
_METADATA_INPLACE = frozenset({
    "detach_", "requires_grad_", "share_memory_", "resize_", "resize_as_", "set_",
    "as_strided_", "squeeze_", "unsqueeze_", "t_", "transpose_", "swapdims_", "swapaxes_",
})


@dataclass(frozen=True)
class Facts:
    torch_version: str
    functions: dict[str, Effect] = field(default_factory=dict)
    methods: dict[str, Effect] = field(default_factory=dict)
    operators: dict[str, Effect] = field(default_factory=dict)
    modules: dict[str, ModuleFacts] = field(default_factory=dict)
    factories: frozenset[str] = frozenset()
    # Calls that return the module they are given (``weight_norm(layer)``).
    module_wrappers: frozenset[str] = frozenset()
    aten: dict[str, AtenOp] = field(default_factory=dict)

    def inplace_method(self, name: str) -> Effect | None:
        """A ``*_`` Tensor method no spelling traced: what its aten overloads say.

        It writes ``self`` (``Tensor(a!)``) and returns it; it keeps its result when any
        overload's formula uses ``result``. Nothing else it saves is claimed.
        """
        if not name.endswith("_") or name.startswith("_") or name in _METADATA_INPLACE:
            return None
        overloads = [op for key, op in self.aten.items()
                     if key == name or key.startswith(f"{name}.")]
        if not overloads or not all("self" in op.writes for op in overloads):
            return None
        saves = {"output": "always"} if any(op.saves_result for op in overloads) else {}
        return Effect(aten=(f"aten::{name}",), saves=saves, writes=True, returns="input")


def _flag(raw: dict[str, Any] | None) -> InplaceFlag | None:
    if not raw:
        return None
    return InplaceFlag(name=raw["name"], position=raw.get("position"))


def _effect(raw: dict[str, Any] | None) -> Effect | None:
    if raw is None:
        return None
    return Effect(
        aten=tuple(raw.get("aten", ())),
        saves=dict(raw.get("saves", {})),
        writes=bool(raw.get("writes", False)),
        returns=raw.get("returns", "fresh"),
        differentiable=bool(raw.get("differentiable", True)),
        inplace_flag=_flag(raw.get("inplace_flag")),
        inplace=_effect(raw.get("inplace")),
        outputs=tuple((str(name), bool(grad)) for name, grad in raw.get("outputs", ())),
    )


def _required_effect(raw: dict[str, Any]) -> Effect:
    effect = _effect(raw)
    assert effect is not None
    return effect


def _read(name: str) -> Any:
    return json.loads(resources.files("gradguard.facts").joinpath("data", name).read_text("utf-8"))


@cache
def load() -> Facts:
    """The facts shipped with this package (generated under the torch named inside)."""
    spellings = _read("spellings.json")
    aten_raw = _read("aten_ops.json")
    modules = {
        name: ModuleFacts(
            name=name,
            call=_required_effect(raw["call"]),
            has_parameters=bool(raw.get("has_parameters", False)),
            ctor_inplace=_flag(raw.get("ctor_inplace")),
            call_inplace=_effect(raw.get("call_inplace")),
            writes_parameters=bool(raw.get("writes_parameters", False)),
            index_input=bool(raw.get("index_input", False)),
            outputs=raw.get("outputs"),
            bases=tuple(raw.get("bases", ())),
        )
        for name, raw in spellings["modules"].items()
    }
    aten = {
        name: AtenOp(
            name=name,
            saves=tuple(raw.get("saves", ())),
            saves_result=bool(raw.get("saves_result", False)),
            writes=tuple(raw.get("writes", ())),
            view_of=tuple(raw.get("view_of", ())),
            formula=raw.get("formula"),
            saves_copy=tuple(raw.get("saves_copy", ())),
        )
        for name, raw in aten_raw["ops"].items()
    }
    return Facts(
        torch_version=spellings["torch_version"],
        functions={k: _required_effect(v) for k, v in spellings["functions"].items()},
        methods={k: _required_effect(v) for k, v in spellings["methods"].items()},
        operators={k: _required_effect(v) for k, v in spellings["operators"].items()},
        modules=modules,
        factories=frozenset(spellings.get("factories", ())),
        module_wrappers=frozenset(spellings.get("module_wrappers", ())),
        aten=aten,
    )
