"""The Python spellings GradGuard knows, and how to call each one.

This list is the one hand-written input of ``tools/generate_facts.py``: which spellings
exist and how to call them on example tensors. Every fact recorded about them (the aten
ops they dispatch, what they save, whether they write, what they return) is measured by
tracing these calls under the installed torch. ``tests/test_facts_against_torch.py``
builds its cases from the same recipes and checks the measured facts a second way, by
mutating tensors and running backward.

Roles follow ``gradguard.facts.table``: ``input`` is the first tensor operand, ``other``
the second, counting tensors in positional order with lists and tuples flattened
(``x.scatter_(dim, index, src)``: the index; ``torch.cat([x, y])``: y). For a module,
``other`` is its ``weight`` parameter if it has one, else the second tensor it is called
with (a loss's target); for ``x[i] = v`` it is the value v. Operands after those are
extras, built requiring grad whenever they can (biases, a third matrix) so that they never
switch a save off. Each recipe lists its operands in role order.

Where a spelling behaves differently depending on its arguments, the recipe traces the
common configuration and its ``note`` says which; ``#variant`` keys trace the others.
"""

from __future__ import annotations

import importlib
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from torch import Tensor, nn

Table = Literal["functions", "methods", "operators", "modules"]
Values = Literal["normal", "positive", "unit", "index", "mask", "zeros"]


@dataclass(frozen=True)
class Operand:
    """How to build one tensor operand of a recipe."""

    shape: tuple[int, ...]
    values: Values = "normal"
    dtype: torch.dtype = torch.float32
    # exclusive upper bound of "index" values
    high: int = 2
    # hand the call a transposed (non-contiguous) view, as after a permute
    transposed: bool = False
    # data that never requires grad in real code (running statistics, fixed targets)
    trainable: bool = True

    @property
    def can_require_grad(self) -> bool:
        return self.trainable and self.values not in ("index", "mask")

    def make(self, requires_grad: bool) -> Tensor:
        if self.values == "index":
            base = torch.randint(0, self.high, self.shape)
        elif self.values == "mask":
            base = torch.rand(self.shape) > 0.5
        elif self.values == "zeros":
            base = torch.zeros(self.shape, dtype=self.dtype)
        elif self.values == "positive":
            base = (torch.rand(self.shape) + 0.5).to(self.dtype)
        elif self.values == "unit":
            base = (torch.rand(self.shape) * 0.9 + 0.05).to(self.dtype)
        else:
            base = torch.randn(self.shape, dtype=self.dtype)
        tensor = base
        if requires_grad and self.can_require_grad:
            # A non-leaf activation, like the output of an earlier layer: in-place ops on
            # it are legal, and `* 1` saves nothing that could be confused with our saves.
            tensor = base.requires_grad_() * 1
        if self.transposed:
            tensor = tensor.transpose(-1, -2)
        return tensor


def act(*shape: int, values: Values = "normal", dtype: torch.dtype = torch.float32,
        transposed: bool = False) -> Operand:
    """A float activation that may require grad."""
    return Operand(shape, values=values, dtype=dtype, transposed=transposed)


def data(*shape: int, values: Values = "normal", dtype: torch.dtype = torch.float32) -> Operand:
    """A float tensor that never requires grad."""
    return Operand(shape, values=values, dtype=dtype, trainable=False)


def index(*shape: int, high: int) -> Operand:
    return Operand(shape, values="index", high=high)


def mask(*shape: int) -> Operand:
    return Operand(shape, values="mask")


@dataclass
class Case:
    """One prepared call: its role tensors and a thunk that runs it."""

    input: Tensor
    other: Tensor | None
    run: Callable[[], Any]
    # Extras: operands after input and other, and a module's parameters other than weight.
    extras: list[Tensor] = field(default_factory=list)
    module: nn.Module | None = None

    def tensors(self) -> list[Tensor]:
        return [t for t in (self.input, self.other, *self.extras) if t is not None]


@dataclass(frozen=True)
class Spelling:
    """One way of writing a call in Python, with operands to call it on."""

    table: Table
    key: str
    operands: tuple[Operand, ...]
    # Non-tensor arguments after the tensors, for the generic call below; for modules,
    # the constructor's arguments.
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    # A custom call `(tensors..., **switch) -> result`, for calls that are not
    # `f(*tensors, *args, **kwargs)`.
    call: Callable[..., Any] | None = None
    note: str = ""
    # Emit this "#variant" only if its facts differ from those of the named key.
    only_if_differs_from: str | None = None

    @property
    def name(self) -> str:
        """The key without its "#variant" suffix: what the user writes."""
        return self.key.split("#", 1)[0]

    @property
    def target(self) -> Any:
        """The torch object behind a function or module key."""
        return resolve(self.name)

    def prepare(self, input_requires_grad: bool = True, other_requires_grad: bool = True,
                inplace: bool = False) -> Case:
        """Fresh operands (seeded) and the call on them, its inplace switch on if asked.

        `other_requires_grad=False` freezes the other role: a constant right operand, or
        a module whose weight does not require grad (a frozen layer).
        """
        torch.manual_seed(0)
        switch = {"inplace": True} if inplace else {}
        if self.table == "modules":
            module = self.target(*self.args, **self.kwargs, **switch)
            module.train()
            weight = getattr(module, "weight", None)
            has_weight = isinstance(weight, nn.Parameter)
            tensors = self._make(input_requires_grad, other_requires_grad or has_weight)
            params = [p for name, p in module.named_parameters() if name != "weight"]
            if has_weight:
                assert isinstance(weight, nn.Parameter)
                weight.requires_grad_(other_requires_grad)
                return Case(tensors[0], weight, lambda: module(*tensors),
                            tensors[1:] + params, module)
            return Case(tensors[0], tensors[1] if len(tensors) > 1 else None,
                        lambda: module(*tensors), tensors[2:] + params, module)
        tensors = self._make(input_requires_grad, other_requires_grad)
        other = tensors[1] if len(tensors) > 1 else None
        if self.call is not None:
            call = self.call
            return Case(tensors[0], other, lambda: call(*tensors, **switch), tensors[2:])
        if self.table == "methods":
            name = self.name

            def run() -> Any:
                return getattr(tensors[0], name)(*tensors[1:], *self.args, **self.kwargs)

            return Case(tensors[0], other, run, tensors[2:])
        function = self.target
        return Case(tensors[0], other,
                    lambda: function(*tensors, *self.args, **self.kwargs, **switch), tensors[2:])

    def _make(self, input_requires_grad: bool, other_requires_grad: bool) -> list[Tensor]:
        grads = [input_requires_grad, other_requires_grad]
        return [op.make(grads[i] if i < 2 else True) for i, op in enumerate(self.operands)]


def resolve(dotted: str) -> Any:
    """`torch.nn.functional.relu` -> the function (longest importable module prefix)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise LookupError(dotted)


def function(key: str, *operands: Operand, args: tuple[Any, ...] = (),
             kwargs: dict[str, Any] | None = None, call: Callable[..., Any] | None = None,
             note: str = "", only_if_differs_from: str | None = None) -> Spelling:
    return Spelling("functions", key, operands, args, kwargs or {}, call, note,
                    only_if_differs_from)


def method(key: str, *operands: Operand, args: tuple[Any, ...] = (),
           kwargs: dict[str, Any] | None = None, call: Callable[..., Any] | None = None,
           note: str = "") -> Spelling:
    return Spelling("methods", key, operands, args, kwargs or {}, call, note)


def op(key: str, call: Callable[..., Any], *operands: Operand, note: str = "") -> Spelling:
    return Spelling("operators", key, operands, call=call, note=note)


def module(key: str, *operands: Operand, args: tuple[Any, ...] = (),
           kwargs: dict[str, Any] | None = None, note: str = "",
           only_if_differs_from: str | None = None) -> Spelling:
    """`operands` are what the module is called with; `args`/`kwargs` build it."""
    return Spelling("modules", key, operands, args, kwargs or {}, None, note,
                    only_if_differs_from)


# Operand shapes used throughout. Small, so that tracing the whole list takes seconds.
X = act(4, 3)
Y = act(4, 3)
POS = act(4, 3, values="positive")
IMG = act(2, 3, 6, 6)
SEQ = act(2, 3, 8)
VOL = act(1, 2, 4, 6, 6)
ROW_MASK = mask(4, 3)


def _setitem_basic(x: Tensor, v: Tensor) -> None:
    x[0] = v


def _setitem_advanced(x: Tensor, v: Tensor, m: Tensor) -> None:
    x[m] = v


ACTIVATIONS_TORCH = ["relu", "sigmoid", "tanh", "exp", "log", "abs", "sqrt", "neg",
                     "sin", "cos", "rsqrt", "reciprocal", "square", "erf"]
ACTIVATIONS_INPLACE = ["relu_", "sigmoid_", "tanh_", "exp_", "log_", "sqrt_", "neg_", "abs_"]
# Ops whose domain is positive reals get positive inputs so that nothing is NaN.
_POSITIVE = {"log", "log_", "sqrt", "sqrt_", "rsqrt", "reciprocal"}


def _unary(table: Literal["functions", "methods"], name: str) -> Spelling:
    operand = POS if name in _POSITIVE else X
    if table == "functions":
        return function(f"torch.{name}", operand)
    return method(name, operand)


SPELLINGS: list[Spelling] = [
    # --- elementwise activations, every spelling ---------------------------------------
    *[_unary("functions", n) for n in ACTIVATIONS_TORCH + ACTIVATIONS_INPLACE],
    *[_unary("methods", n) for n in ACTIVATIONS_TORCH + ACTIVATIONS_INPLACE],
    function("torch.softmax", X, args=(1,)),
    function("torch.log_softmax", X, args=(1,)),
    method("softmax", X, args=(1,)),
    method("log_softmax", X, args=(1,)),
    function("torch.threshold", X, args=(0.1, 0.0)),
    function("torch.threshold_", X, args=(0.1, 0.0)),
    function("torch.selu", X),
    function("torch.selu_", X),
    function("torch.celu", X),
    function("torch.celu_", X),
    function("torch.nn.functional.relu", X),
    function("torch.nn.functional.relu_", X),
    function("torch.nn.functional.relu6", X),
    function("torch.nn.functional.sigmoid", X),
    function("torch.nn.functional.tanh", X),
    function("torch.nn.functional.softmax", X, kwargs={"dim": 1}),
    function("torch.nn.functional.log_softmax", X, kwargs={"dim": 1}),
    function("torch.nn.functional.softmin", X, kwargs={"dim": 1}),
    function("torch.nn.functional.gelu", X, note="approximate='none'"),
    function("torch.nn.functional.gelu#tanh", X, kwargs={"approximate": "tanh"},
             only_if_differs_from="torch.nn.functional.gelu"),
    function("torch.nn.functional.silu", X),
    function("torch.nn.functional.hardswish", X),
    function("torch.nn.functional.hardsigmoid", X),
    function("torch.nn.functional.mish", X),
    function("torch.nn.functional.elu", X),
    function("torch.nn.functional.elu_", X),
    function("torch.nn.functional.selu", X),
    function("torch.nn.functional.celu", X),
    function("torch.nn.functional.leaky_relu", X, args=(0.1,)),
    function("torch.nn.functional.leaky_relu_", X, args=(0.1,)),
    function("torch.nn.functional.hardtanh", X),
    function("torch.nn.functional.hardtanh_", X),
    function("torch.nn.functional.threshold", X, args=(0.1, 0.0)),
    function("torch.nn.functional.threshold_", X, args=(0.1, 0.0)),
    function("torch.nn.functional.softplus", X),
    function("torch.nn.functional.logsigmoid", X),
    function("torch.nn.functional.prelu", X, act(1)),
    function("torch.nn.functional.glu", act(4, 6)),
    function("torch.nn.functional.normalize", X, note="p=2, dim=1"),
    function("torch.nn.functional.dropout", X, args=(0.5,),
             note="training=True (the functional's default); on CPU: bernoulli_ + mul"),
    function("torch.nn.functional.dropout2d", IMG, args=(0.5,), note="training=True"),
    function("torch.dropout", X, args=(0.5, True), note="train=True"),
    # --- arithmetic ----------------------------------------------------------------------
    op("+", operator.add, X, Y),
    op("-", operator.sub, X, Y),
    op("*", operator.mul, X, Y),
    op("/", operator.truediv, X, Y),
    op("**", operator.pow, POS, Y),
    op("//", operator.floordiv, X, Y),
    op("@", operator.matmul, X, act(3, 5)),
    op("+#scalar", lambda x: x + 2, X),
    op("-#scalar", lambda x: x - 2, X),
    op("*#scalar", lambda x: x * 2, X),
    op("/#scalar", lambda x: x / 2, X),
    op("**#scalar", lambda x: x**2, X),
    op("radd#scalar", lambda x: 2 + x, X),
    op("rsub#scalar", lambda x: 2 - x, X),
    op("rmul#scalar", lambda x: 2 * x, X),
    op("rtruediv#scalar", lambda x: 2 / x, POS),
    op("unary-", operator.neg, X),
    op("+=", operator.iadd, X, Y),
    op("+=#scalar", lambda x: operator.iadd(x, 2), X),
    op("-=", operator.isub, X, Y),
    op("*=", operator.imul, X, Y),
    op("*=#scalar", lambda x: operator.imul(x, 2), X),
    op("/=", operator.itruediv, X, Y),
    op("/=#scalar", lambda x: operator.itruediv(x, 2), X),
    op("**=", operator.ipow, POS, Y),
    op("@=", operator.imatmul, X, act(3, 3),
       note="Tensor has no __imatmul__: Python falls back to x = x @ y"),
    op("getitem_basic", lambda x: x[0:2], X, note="x[0:2]: slicing, ints, None, ..."),
    op("getitem_advanced", lambda x, m: x[m], X, ROW_MASK, note="x[mask]: the mask is `other`"),
    op("getitem_advanced#index", lambda x, i: x[i], X, index(3, high=4),
       note="x[long_index]"),
    op("setitem", _setitem_basic, X, act(3), note="x[0] = v: `other` is the value"),
    op("setitem#advanced", _setitem_advanced, X, act(1), ROW_MASK,
       note="x[mask] = v: `other` is the value, as for setitem; the mask is an extra"),
    op("setitem#scalar", lambda x: x.__setitem__(0, 0.0), X, note="x[0] = 0.0"),
    op("==", operator.eq, X, Y),
    op("!=", operator.ne, X, Y),
    op("<", operator.lt, X, Y),
    op("<=", operator.le, X, Y),
    op(">", operator.gt, X, Y),
    op(">=", operator.ge, X, Y),
    *[function(f"torch.{n}", X, Y) for n in ("add", "sub", "mul", "div", "maximum", "minimum")],
    function("torch.pow", POS, Y),
    function("torch.mul#scalar", X, args=(2,)),
    function("torch.pow#scalar", X, args=(2,)),
    function("torch.matmul", X, act(3, 5), note="2-D @ 2-D: mm"),
    function("torch.matmul#3d", act(2, 4, 3), act(3, 5), only_if_differs_from="torch.matmul",
             note="3-D @ 2-D, as a linear layer applied to a sequence"),
    function("torch.mm", X, act(3, 5)),
    function("torch.bmm", act(2, 4, 3), act(2, 3, 5)),
    function("torch.addmm", act(5), X, act(3, 5),
             note="roles by position: input = bias, other = mat1; mat2 requires grad"),
    *[method(n, X, Y) for n in ("add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_")],
    method("pow", POS, Y),
    method("pow_", POS, Y),
    method("mul#scalar", X, args=(2,)),
    method("mul_#scalar", X, args=(2,)),
    method("add_#scalar", X, args=(2,)),
    method("pow#scalar", X, args=(2,)),
    method("pow_#scalar", X, args=(2,)),
    method("matmul", X, act(3, 5)),
    method("mm", X, act(3, 5)),
    method("bmm", act(2, 4, 3), act(2, 3, 5)),
    # --- reductions ------------------------------------------------------------------------
    *[function(f"torch.{n}", X) for n in ("sum", "mean", "max", "min", "amax", "amin", "norm",
                                          "std", "var", "prod")],
    *[method(n, X) for n in ("sum", "mean", "max", "min", "amax", "amin", "norm", "std",
                             "var", "prod")],
    function("torch.logsumexp", X, args=(1,)),
    function("torch.cumsum", X, args=(1,)),
    method("logsumexp", X, args=(1,)),
    method("cumsum", X, args=(1,)),
    function("torch.sum#dim", X, args=(1,), only_if_differs_from="torch.sum"),
    function("torch.mean#dim", X, args=(1,), only_if_differs_from="torch.mean"),
    function("torch.max#dim", X, args=(1,), note="returns (values, indices)"),
    function("torch.min#dim", X, args=(1,)),
    method("max#dim", X, args=(1,)),
    method("min#dim", X, args=(1,)),
    *[function(f"torch.{n}", X, args=(2,)) for n in ("topk", "kthvalue")],
    *[method(n, X, args=(2,)) for n in ("topk", "kthvalue")],
    *[function(f"torch.{n}", X, args=(1,)) for n in ("sort", "cummax", "cummin", "mode",
                                                      "median#dim")],
    *[method(n, X, args=(1,)) for n in ("sort", "cummax", "cummin", "mode", "median#dim")],
    function("torch.aminmax", X),
    method("aminmax", X),
    function("torch.argmax", X, args=(1,)),
    function("torch.argmin", X, args=(1,)),
    method("argmax", X, args=(1,)),
    method("argmin", X, args=(1,)),
    *[function(f"torch.{n}", X, Y) for n in ("eq", "ne", "gt", "lt", "ge", "le")],
    *[method(n, X, Y) for n in ("eq", "ne", "gt", "lt", "ge", "le")],
    # --- shapes and views ------------------------------------------------------------------
    method("view", X, args=(12,)),
    method("view_as", X, act(12)),
    method("reshape", X, args=(12,), note="contiguous input: a view"),
    method("reshape#noncontiguous", act(4, 3, transposed=True), args=(12,),
           note="a transposed input: a copy"),
    method("transpose", X, args=(0, 1)),
    method("permute", IMG, args=(0, 2, 3, 1)),
    method("unsqueeze", X, args=(0,)),
    method("squeeze", act(4, 1, 3)),
    method("narrow", X, args=(0, 1, 2)),
    method("select", X, args=(0, 1)),
    method("expand", act(1, 3), args=(4, 3)),
    method("expand_as", act(1, 3), X),
    method("repeat", X, args=(2, 1)),
    method("flatten", IMG, args=(1,)),
    method("t", X),
    method("contiguous", act(4, 3, transposed=True), note="non-contiguous input: a copy"),
    method("contiguous#already", X, note="contiguous input: returns the input itself"),
    method("detach", X),
    method("clone", X),
    method("split", X, args=(2,)),
    method("chunk", X, args=(2,)),
    method("unbind", X),
    *[method(n, X, args=(2,)) for n in ("tensor_split", "vsplit")],
    method("hsplit", X, args=(3,)),
    method("flip", X, args=(0,)),
    method("roll", X, args=(1, 0)),
    method("gather", X, index(4, 3, high=3), call=lambda x, i: x.gather(1, i)),
    method("index_select", X, index(2, high=4), call=lambda x, i: x.index_select(0, i)),
    method("masked_select", X, ROW_MASK),
    function("torch.reshape", X, args=((12,),)),
    function("torch.transpose", X, args=(0, 1)),
    function("torch.permute", IMG, args=((0, 2, 3, 1),)),
    function("torch.unsqueeze", X, args=(0,)),
    function("torch.squeeze", act(4, 1, 3)),
    function("torch.narrow", X, args=(0, 1, 2)),
    function("torch.select", X, args=(0, 1)),
    function("torch.flatten", IMG, args=(1,)),
    function("torch.t", X),
    function("torch.detach", X),
    function("torch.clone", X),
    function("torch.split", X, args=(2,)),
    function("torch.chunk", X, args=(2,)),
    function("torch.unbind", X),
    *[function(f"torch.{n}", X, args=(2,)) for n in ("tensor_split", "vsplit")],
    function("torch.hsplit", X, args=(3,)),
    function("torch.flip", X, args=((0,),)),
    function("torch.gather", X, index(4, 3, high=3), call=lambda x, i: torch.gather(x, 1, i)),
    function("torch.cat", X, Y, call=lambda x, y: torch.cat([x, y], dim=1)),
    function("torch.stack", X, Y, call=lambda x, y: torch.stack([x, y])),
    function("torch.einsum", act(2, 4, 3), act(2, 3, 5),
             call=lambda a, b: torch.einsum("bij,bjk->bik", a, b),
             note="a contraction: 'bij,bjk->bik' (permute/view + bmm)"),
    function("torch.einsum#broadcast", act(2, 3, 4), act(2, 3),
             call=lambda a, b: torch.einsum("ijk,ij->ijk", [a, b]),
             note="no contraction: 'ijk,ij->ijk', as in the UNet3+ seed"),
    function("torch.where", ROW_MASK, X, Y, call=lambda m, x, y: torch.where(m, x, y),
             note="roles by position: input = the condition, other = x; y is an extra"),
    function("torch.clamp", X, kwargs={"min": -0.5, "max": 0.5}),
    function("torch.clamp_", X, kwargs={"min": -0.5, "max": 0.5}),
    function("torch.clamp#tensor", X, act(4, 3), call=lambda x, lo: torch.clamp(x, min=lo),
             note="tensor bounds"),
    function("torch.masked_fill", X, ROW_MASK, args=(0.0,)),
    # --- in-place writes and other mutators ----------------------------------------------
    method("clamp", X, kwargs={"min": -0.5, "max": 0.5}),
    method("clamp_", X, kwargs={"min": -0.5, "max": 0.5}),
    method("clamp_min", X, args=(0.0,)),
    method("clamp_min_", X, args=(0.0,)),
    method("masked_fill", X, ROW_MASK, args=(0.0,)),
    method("masked_fill_", X, ROW_MASK, args=(0.0,)),
    method("index_put_", X, index(2, high=4), act(2, 3),
           call=lambda x, i, v: x.index_put_((i,), v),
           note="x.index_put_((rows,), v): `other` is the index, v an extra"),
    method("index_add_", X, index(2, high=4), act(2, 3),
           call=lambda x, i, v: x.index_add_(0, i, v)),
    method("scatter_", X, index(4, 3, high=3), act(4, 3),
           call=lambda x, i, src: x.scatter_(1, i, src),
           note="x.scatter_(dim, index, src): `other` is the index, src an extra"),
    method("scatter", X, index(4, 3, high=3), act(4, 3),
           call=lambda x, i, src: x.scatter(1, i, src)),
    method("scatter_add_", X, index(4, 3, high=3), act(4, 3),
           call=lambda x, i, src: x.scatter_add_(1, i, src)),
    method("copy_", X, Y),
    method("fill_", X, args=(0.0,)),
    method("zero_", X),
    method("normal_", X),
    method("uniform_", X),
    method("bernoulli_", X, args=(0.5,)),
    method("masked_scatter_", X, ROW_MASK, act(4, 3),
           call=lambda x, m, src: x.masked_scatter_(m, src)),
    # --- conversions -------------------------------------------------------------------------
    method("float", act(4, 3, dtype=torch.float16), note="from float16: a conversion"),
    method("float#no_conversion", X, note="already float32: returns the input itself"),
    method("double", X),
    method("half", X),
    method("to", X, args=(torch.float64,), note="a dtype conversion"),
    method("to#no_conversion", X, args=(torch.float32,),
           note="same dtype and device: returns the input itself"),
    method("type_as", X, data(4, 3, dtype=torch.float64), note="other has another dtype"),
    method("cpu", X, note="already on the CPU: returns the input itself"),
    # --- convolutions, linear layers, normalisation, embeddings ------------------------------
    function("torch.nn.functional.conv1d", SEQ, act(4, 3, 3), act(4), kwargs={"padding": 1}),
    function("torch.nn.functional.conv2d", IMG, act(4, 3, 3, 3), act(4), kwargs={"padding": 1}),
    function("torch.nn.functional.conv3d", VOL, act(3, 2, 3, 3, 3), act(3),
             kwargs={"padding": 1}),
    function("torch.nn.functional.conv_transpose2d", IMG, act(3, 4, 3, 3), act(4)),
    function("torch.nn.functional.linear", X, act(5, 3), act(5), note="2-D input, with bias"),
    function("torch.nn.functional.linear#3d", act(2, 4, 3), act(5, 3), act(5),
             note="3-D input, with bias"),
    function("torch.nn.functional.linear#nobias", X, act(5, 3),
             only_if_differs_from="torch.nn.functional.linear"),
    function("torch.nn.functional.batch_norm", act(4, 3), data(3, values="zeros"),
             data(3, values="positive"), act(3), act(3), kwargs={"training": True},
             note="training=True; roles by position: other = running_mean"),
    function("torch.nn.functional.layer_norm", act(2, 4, 3), act(3), act(3),
             call=lambda x, w, b: torch.nn.functional.layer_norm(x, (3,), w, b)),
    function("torch.nn.functional.group_norm", act(2, 4, 3, 3), act(4), act(4),
             call=lambda x, w, b: torch.nn.functional.group_norm(x, 2, w, b)),
    function("torch.nn.functional.instance_norm", IMG),
    function("torch.nn.functional.embedding", index(4, high=10), act(10, 3)),
    function("torch.nn.functional.pad", X, args=((1, 1),), note="constant padding"),
    # --- resampling and pooling --------------------------------------------------------------
    function("torch.nn.functional.interpolate", IMG, kwargs={"scale_factor": 2},
             note="mode='nearest' (the default)"),
    function("torch.nn.functional.interpolate#bilinear", IMG,
             kwargs={"scale_factor": 2, "mode": "bilinear"}),
    function("torch.nn.functional.max_pool1d", SEQ, args=(2,)),
    function("torch.nn.functional.max_pool2d", IMG, args=(2,)),
    function("torch.nn.functional.avg_pool2d", IMG, args=(2,)),
    function("torch.nn.functional.adaptive_avg_pool2d", IMG, args=(3,)),
    function("torch.nn.functional.adaptive_avg_pool2d#1", IMG, args=(1,),
             only_if_differs_from="torch.nn.functional.adaptive_avg_pool2d"),
    function("torch.nn.functional.adaptive_max_pool2d", IMG, args=(3,)),
    function("torch.nn.functional.adaptive_max_pool2d#1", IMG, args=(1,),
             only_if_differs_from="torch.nn.functional.adaptive_max_pool2d"),
    # --- losses: `other` is the target ---------------------------------------------------
    function("torch.nn.functional.mse_loss", X, Y),
    function("torch.nn.functional.l1_loss", X, Y),
    function("torch.nn.functional.smooth_l1_loss", X, Y),
    function("torch.nn.functional.huber_loss", X, Y),
    function("torch.nn.functional.cross_entropy", act(4, 5), index(4, high=5),
             note="class-index targets"),
    function("torch.nn.functional.nll_loss", act(4, 5), index(4, high=5)),
    function("torch.nn.functional.binary_cross_entropy", act(4, 3, values="unit"),
             act(4, 3, values="unit")),
    function("torch.nn.functional.binary_cross_entropy_with_logits", X,
             act(4, 3, values="unit")),
    function("torch.nn.functional.kl_div", act(4, 5), act(4, 5, values="unit"),
             kwargs={"reduction": "batchmean"}),
    function("torch.nn.functional.cosine_similarity", X, Y),
    # --- modules: `other` is the weight, or the target of a loss ----------------------------
    *[module(f"torch.nn.{n}", X) for n in (
        "ReLU", "ReLU6", "Sigmoid", "Tanh", "GELU", "SiLU", "Hardswish", "Hardsigmoid",
        "Mish", "ELU", "CELU", "SELU", "LeakyReLU", "Hardtanh", "Softplus", "PReLU",
        "Identity", "Dropout", "LogSigmoid", "Tanhshrink", "Softsign")],
    module("torch.nn.Softmax", X, kwargs={"dim": 1}),
    module("torch.nn.LogSoftmax", X, kwargs={"dim": 1}),
    module("torch.nn.Threshold", X, args=(0.1, 0.0)),
    module("torch.nn.Dropout2d", IMG, note="train mode"),
    module("torch.nn.Flatten", IMG),
    module("torch.nn.Conv1d", SEQ, args=(3, 4, 3), kwargs={"padding": 1}),
    module("torch.nn.Conv2d", IMG, args=(3, 4, 3), kwargs={"padding": 1}),
    module("torch.nn.Conv2d#nobias", IMG, args=(3, 4, 3), kwargs={"padding": 1, "bias": False},
           only_if_differs_from="torch.nn.Conv2d"),
    module("torch.nn.Conv3d", VOL, args=(2, 3, 3), kwargs={"padding": 1}),
    module("torch.nn.ConvTranspose2d", IMG, args=(3, 4, 3)),
    module("torch.nn.Linear", X, args=(3, 5), note="2-D input"),
    module("torch.nn.Linear#3d", act(2, 4, 3), args=(3, 5), note="3-D input"),
    module("torch.nn.Bilinear", X, act(4, 2), args=(3, 2, 5),
           note="`other` is the weight; the second input is an extra"),
    module("torch.nn.BatchNorm1d", X, args=(3,), note="train mode"),
    module("torch.nn.BatchNorm2d", IMG, args=(3,), note="train mode"),
    module("torch.nn.BatchNorm3d", VOL, args=(2,), note="train mode"),
    module("torch.nn.LayerNorm", act(2, 4, 3), args=(3,)),
    module("torch.nn.GroupNorm", act(2, 4, 3, 3), args=(2, 4)),
    module("torch.nn.InstanceNorm2d", IMG, args=(3,), note="affine=False (the default)"),
    module("torch.nn.InstanceNorm2d#affine", IMG, args=(3,), kwargs={"affine": True},
           only_if_differs_from="torch.nn.InstanceNorm2d"),
    module("torch.nn.Embedding", index(4, high=10), args=(10, 3)),
    module("torch.nn.Embedding#max_norm", index(4, high=10), args=(10, 3),
           kwargs={"max_norm": 1.0}, note="renormalises the rows it looks up, in place",
           only_if_differs_from="torch.nn.Embedding"),
    module("torch.nn.LSTM", act(5, 2, 3), args=(3, 4), note="returns (output, (h_n, c_n))"),
    module("torch.nn.GRU", act(5, 2, 3), args=(3, 4), note="returns (output, h_n)"),
    module("torch.nn.RNN", act(5, 2, 3), args=(3, 4), note="returns (output, h_n)"),
    module("torch.nn.Upsample", IMG, kwargs={"scale_factor": 2}, note="mode='nearest'"),
    module("torch.nn.Upsample#bilinear", IMG, kwargs={"scale_factor": 2, "mode": "bilinear"}),
    module("torch.nn.MaxPool1d", SEQ, args=(2,)),
    module("torch.nn.MaxPool2d", IMG, args=(2,)),
    module("torch.nn.AvgPool2d", IMG, args=(2,)),
    module("torch.nn.AdaptiveAvgPool2d", IMG, args=(3,)),
    module("torch.nn.AdaptiveAvgPool2d#1", IMG, args=(1,),
           only_if_differs_from="torch.nn.AdaptiveAvgPool2d"),
    module("torch.nn.AdaptiveMaxPool2d", IMG, args=(3,)),
    module("torch.nn.AdaptiveMaxPool2d#1", IMG, args=(1,),
           only_if_differs_from="torch.nn.AdaptiveMaxPool2d"),
    *[module(f"torch.nn.{n}", X, Y) for n in ("MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss")],
    module("torch.nn.CrossEntropyLoss", act(4, 5), index(4, high=5)),
    module("torch.nn.NLLLoss", act(4, 5), index(4, high=5)),
    module("torch.nn.BCELoss", act(4, 3, values="unit"), act(4, 3, values="unit")),
    module("torch.nn.BCEWithLogitsLoss", X, act(4, 3, values="unit")),
    module("torch.nn.KLDivLoss", act(4, 5), act(4, 5, values="unit"),
           kwargs={"reduction": "batchmean"}),
]


@dataclass(frozen=True)
class Factory:
    """A call that makes a new tensor from nothing (or from another's shape only)."""

    key: str
    call: Callable[[Tensor], Any]


FACTORIES: list[Factory] = [
    Factory("torch.zeros", lambda like: torch.zeros(2, 3)),
    Factory("torch.ones", lambda like: torch.ones(2, 3)),
    Factory("torch.empty", lambda like: torch.empty(2, 3)),
    Factory("torch.full", lambda like: torch.full((2, 3), 1.5)),
    Factory("torch.rand", lambda like: torch.rand(2, 3)),
    Factory("torch.randn", lambda like: torch.randn(2, 3)),
    Factory("torch.randint", lambda like: torch.randint(0, 5, (2, 3))),
    Factory("torch.randperm", lambda like: torch.randperm(5)),
    Factory("torch.arange", lambda like: torch.arange(5)),
    Factory("torch.linspace", lambda like: torch.linspace(0, 1, 5)),
    Factory("torch.logspace", lambda like: torch.logspace(0, 1, 5)),
    Factory("torch.eye", lambda like: torch.eye(3)),
    Factory("torch.tensor", lambda like: torch.tensor([1.0, 2.0])),
    Factory("torch.as_tensor", lambda like: torch.as_tensor([1.0, 2.0])),
    Factory("torch.empty_strided", lambda like: torch.empty_strided((2, 3), (3, 1))),
    Factory("torch.zeros_like", lambda like: torch.zeros_like(like)),
    Factory("torch.ones_like", lambda like: torch.ones_like(like)),
    Factory("torch.empty_like", lambda like: torch.empty_like(like)),
    Factory("torch.full_like", lambda like: torch.full_like(like, 2.0)),
    Factory("torch.rand_like", lambda like: torch.rand_like(like)),
    Factory("torch.randn_like", lambda like: torch.randn_like(like)),
    Factory("torch.randint_like", lambda like: torch.randint_like(like, 5)),
]


# Functions that take a module and hand the same module back, reparametrised: a layer
# they wrap is still that layer (``weight_norm(nn.Linear(...))``). The generator keeps
# those that do return their argument under the installed torch.
MODULE_WRAPPERS: list[str] = [
    "torch.nn.utils.weight_norm",
    "torch.nn.utils.spectral_norm",
    "torch.nn.utils.parametrizations.weight_norm",
    "torch.nn.utils.parametrizations.spectral_norm",
    "torch.nn.utils.parametrizations.orthogonal",
    "torch.nn.utils.parametrize.register_parametrization",
    "torch.nn.utils.remove_weight_norm",
    "torch.nn.utils.remove_spectral_norm",
]


def by_key(spellings: Sequence[Spelling] = SPELLINGS) -> dict[tuple[Table, str], Spelling]:
    return {(s.table, s.key): s for s in spellings}
