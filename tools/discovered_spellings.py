"""Spellings found by calling every public function of torch's namespaces and every
Tensor method on plain operands, beside the hand-written ones of spelling_specs.py.

User code calls far more of torch than anyone lists by hand (``torch.cumprod``,
``torch.special.erfc``, ``x.logcumsumexp(1)``...). Each name not spelled by hand is
tried on a few operand sets, in order: one tensor; one tensor and a dimension; two
tensors. The first that returns tensors without an error is its spelling, and the
generator traces it like any other. Names that change global state or reach outside
the process are never called.
"""

from __future__ import annotations

import re
import types
import warnings
from collections.abc import Iterator
from functools import cache
from typing import Any

import torch
from torch import Tensor

from tools.spelling_specs import (
    FACTORIES,
    SPELLINGS,
    Spelling,
    Table,
    X,
    Y,
    function,
    method,
    resolve,
)

NAMESPACES = ("torch", "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft")
# Never called: they set global state, touch files, devices or processes, or build
# other callables rather than computing.
_NEVER = re.compile(
    r"^_|^(set|get|use|is|are|has|can|enable|disable|manual_seed|seed|initial_seed|save|"
    r"load|compile|export|jit|vmap|func|cond|while_loop|autocast|register|import|"
    r"sym|typename|cuda|mps|xpu|cpu|pin_memory|share_memory|record_stream|backward|"
    r"retain_grad|requires_grad|storage|untyped_storage|data_ptr|numpy|tolist|item|"
    r"dim_order|to|type|apply|map|new_empty_strided|empty_strided|from_file|"
    r"as_strided|resize|set_|unsafe|detach|clone|contiguous|view|reshape|"
    r"(alpha_|feature_alpha_)?dropout(\dd)?|gumbel_softmax|rrelu|bernoulli|binomial|"
    r"multinomial|poisson|fbgemm\w*|"
    r"normal|rand|randn|randint|randperm|random|uniform|exponential|geometric|cauchy|"
    r"log_normal)(_|$)")
# Called on these operands, they trace facts their backward does not bear out: no
# backward for one of the operands (igamma, zeta, geqrf, unique), a product whose
# saves depend on shapes (kron), decompositions whose outputs autograd handles apart
# (lu, lstsq, svdvals), views that need several operands to be several (broadcast).
_UNTRACEABLE = {"igamma", "igammac", "gammainc", "gammaincc", "zeta", "geqrf", "unique",
                "unique_consecutive", "kron", "lu", "lstsq", "svdvals", "broadcast_tensors"}
_OPERAND_SETS: tuple[tuple[tuple[Any, ...], tuple[Any, ...]], ...] = (
    ((X,), ()),
    ((X,), (1,)),
    ((X, Y), ()),
)


def _names(namespace: Any) -> Iterator[str]:
    for name in sorted(dir(namespace)):
        if _NEVER.match(name) or name.endswith("_") or name in _UNTRACEABLE:
            continue  # a trailing underscore writes in place: the aten table knows those
        target = getattr(namespace, name, None)
        if target is None or isinstance(target, (type, types.ModuleType)) or \
                not callable(target):
            continue
        yield name


def _returns_tensors(result: Any) -> bool:
    """Real tensors: a complex result (the FFTs) has no loss to run backward from."""
    items = result if isinstance(result, tuple) else (result,)
    return bool(items) and all(isinstance(item, Tensor) and not item.is_complex()
                               for item in items)


def _works(spelling: Spelling) -> bool:
    """Whether the spelling runs on its operands and returns tensors, changing none."""
    try:
        with warnings.catch_warnings(), torch.random.fork_rng(devices=[]):
            warnings.simplefilter("ignore")
            case = spelling.prepare()
            versions = [t._version for t in case.tensors()]
            result = case.run()
            unchanged = versions == [t._version for t in case.tensors()]
    except Exception:  # noqa: BLE001 - any failure means: not this operand set
        return False
    return unchanged and _returns_tensors(result)


def _first_working(table: Table, key: str) -> Spelling | None:
    make = function if table == "functions" else method
    for operands, args in _OPERAND_SETS:
        candidate = make(key, *operands, args=args)
        if _works(candidate):
            return candidate
    return None


@cache
def discovered() -> tuple[Spelling, ...]:
    """The spellings of every callable name not spelled by hand that runs on the
    operand sets above."""
    spelled = {(s.table, s.name) for s in SPELLINGS} | \
        {("functions", factory.key) for factory in FACTORIES}
    found: list[Spelling] = []
    grad = torch.is_grad_enabled()
    for namespace in NAMESPACES:
        module = resolve(namespace)
        for name in _names(module):
            key = f"{namespace}.{name}"
            if ("functions", key) in spelled:
                continue
            spelling = _first_working("functions", key)
            if spelling is not None:
                found.append(spelling)
            torch.set_grad_enabled(grad)
    for name in _names(Tensor):
        if ("methods", name) in spelled:
            continue
        spelling = _first_working("methods", name)
        if spelling is not None:
            found.append(spelling)
        torch.set_grad_enabled(grad)
    return tuple(found)


def every_spelling() -> list[Spelling]:
    """The hand-written spellings, then the discovered ones."""
    return [*SPELLINGS, *discovered()]
