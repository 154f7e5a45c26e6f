"""Generate GradGuard's autograd facts from the installed torch.

    .venv/bin/python -m tools.generate_facts [--out DIR]

writes three files (by default into server/gradguard/facts/data/):

aten_ops.json
    For every op of native_functions.yaml: which arguments its backward formula keeps as
    tensors, whether it keeps its result, which arguments it writes (``Tensor(a!)``) and
    which its result aliases (``Tensor(a)``). The formulas are read by torchgen, the very
    code that turns derivatives.yaml into torch's autograd kernels, so the metadata uses it
    strips (``self.sym_sizes()``, ``self.options()``, ``self.scalar_type()``...) and the
    formula an in-place or out= overload inherits from its base op are exactly torch's.
derivatives.json
    The backward formulas those ops use, as derivatives.yaml words them: for each entry
    (by the name aten_ops.json gives as its ``formula``), its schema and, for each group
    of arguments whose gradient one formula computes, the formula's text and the tensors
    it needs (inputs by argument name, outputs as ``result``, ``result1`` or their return
    names). Read by the editor's hover, never by the analysis.
spellings.json
    For every Python spelling in tools/spelling_specs.py: what it does, measured by calling
    it under a TorchDispatchMode (the aten ops it dispatches) on tensors that require grad,
    then walking the autograd graph it built and comparing the storage of every saved
    tensor with that of its input, other operand and output. Conditional saves show up by
    tracing again with one operand not requiring grad.
"""

from __future__ import annotations

import argparse
import inspect
import json
import warnings
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torchgen
from torch import Tensor, nn
from torch.utils._python_dispatch import TorchDispatchMode

from tools.discovered_spellings import every_spelling
from tools.spelling_specs import (
    FACTORIES,
    MODULE_WRAPPERS,
    Case,
    Spelling,
    resolve,
)

REPO = Path(__file__).resolve().parent.parent
DATA_DIR = REPO / "server" / "gradguard" / "facts" / "data"
ROLES = ("input", "other", "output")


def torch_version() -> str:
    return torch.__version__.split("+", 1)[0]


# ----------------------------------------------------------------------------- aten ops


def _is_tensor_type(ctype: Any) -> bool:
    """Whether a torchgen C++ type holds tensors (Tensor, Tensor?, Tensor[], Tensor?[])."""
    while hasattr(ctype, "elem"):
        ctype = ctype.elem
    return getattr(getattr(ctype, "type", None), "name", None) in ("Tensor", "TensorList")


def _differentiability_infos() -> tuple[Any, list[Any]]:
    """torchgen's reading of native_functions.yaml, and each function with its formulas."""
    from torchgen.api.autograd import match_differentiability_info
    from torchgen.gen import parse_native_yaml
    from torchgen.packaged.autograd.load_derivatives import load_derivatives

    packaged = Path(torchgen.__file__).parent / "packaged"
    native_yaml = str(packaged / "ATen" / "native" / "native_functions.yaml")
    tags_yaml = str(packaged / "ATen" / "native" / "tags.yaml")
    derivatives_yaml = str(packaged / "autograd" / "derivatives.yaml")

    infos, _ = load_derivatives(derivatives_yaml, native_yaml, tags_yaml)
    parsed = parse_native_yaml(native_yaml, tags_yaml)
    # A copy: matching adds foreach entries to load_derivatives' process-wide cache.
    return parsed, match_differentiability_info(parsed.native_functions, dict(infos))


def _tensor_names(saved: Iterable[Any]) -> set[str]:
    return {str(s.nctype.name) for s in saved if _is_tensor_type(s.nctype.type)}


def _written_entries() -> set[str]:
    """The names of the entries derivatives.yaml itself writes (``mul.Tensor``)."""
    import yaml

    path = Path(torchgen.__file__).parent / "packaged" / "autograd" / "derivatives.yaml"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml is faster, if built
    entries = yaml.load(path.read_text("utf-8"), Loader=loader)
    return {str(entry["name"]).split("(", 1)[0] for entry in entries}


def derivatives(formula_names: Collection[str]) -> dict[str, Any]:
    """The derivatives.yaml entries named in ``formula_names``, as the yaml words them.

    Each backward line keeps its yaml key (the arguments it computes the gradient of),
    its formula before torchgen rewrites it (``original_formula``, the yaml's text) and
    the tensors that formula reads, which are what autograd saves for it. Entries torchgen
    derives from others (``*_copy`` from their view, ``_foreach_*`` from the op each item
    runs, with its text rewritten) are left out: they are not words of the yaml.
    """
    _, matched = _differentiability_infos()
    written = _written_entries()
    entries: dict[str, Any] = {}
    for item in matched:
        info = (item.info or {}).get("Default")
        if info is None or not info.has_derivatives:
            continue
        name = str(info.func.func.name)
        if name not in formula_names or name not in written or name in entries:
            continue
        order = {a.name: i for i, a in enumerate(info.func.func.schema_order_arguments())}
        lines = sorted(
            ([", ".join(d.var_names), d.original_formula,
              sorted(_tensor_names(d.saved_inputs) | _tensor_names(d.saved_outputs))]
             for d in info.derivatives),
            key=lambda line: order.get(line[0].split(", ")[0], len(order)))
        entries[name] = {"schema": str(info.func.func), "backward": lines}
    return {"torch_version": torch_version(), "formulas": dict(sorted(entries.items()))}


def aten_ops() -> dict[str, Any]:
    """The op table, for dense CPU/CUDA tensors.

    An op with a CompositeImplicitAutograd kernel and no CPU/CUDA kernel of its own
    decomposes before autograd sees it: autograd records the ops it decomposes into, so
    its entry saves nothing and says ``decomposes`` (``linear``, ``matmul``, ``chunk`` and
    ``max_pool2d`` have formulas too, used only by MPS and nested-tensor kernels). Extra
    keys, beyond table.py's four: ``formula`` (the derivatives.yaml entry in force, maybe
    inherited), ``saves_copy`` (an in-place op that saves a clone of its old self),
    ``saved_returns`` (when it keeps returns other than, or besides, the first).
    """
    from torchgen.api import cpp
    from torchgen.model import DispatchKey, SchemaKind

    parsed, infos = _differentiability_infos()
    dense = [parsed.backend_indices[DispatchKey.CPU], parsed.backend_indices[DispatchKey.CUDA]]
    ops: dict[str, Any] = {}
    for matched in infos:
        f = matched.func
        schema = f.func
        arguments = list(schema.schema_order_arguments())
        order = {a.name: i for i, a in enumerate(arguments)}
        returned_aliases = {
            alias for r in schema.returns if r.annotation for alias in r.annotation.alias_set
        }
        entry: dict[str, Any] = {
            "saves": [],
            "saves_result": False,
            "writes": [a.name for a in arguments if a.annotation and a.annotation.is_write],
            "view_of": [
                a.name for a in arguments
                if a.annotation and not a.annotation.is_write
                and returned_aliases & set(a.annotation.alias_set)
            ],
        }
        ops[str(schema.name)] = entry
        own_kernel = f.structured_delegate is not None or any(b.has_kernel(f) for b in dense)
        if f.has_composite_implicit_autograd_kernel and not own_kernel:
            entry["decomposes"] = True
            continue
        # The dense kernels' formula, not a nested-tensor override.
        info = (matched.info or {}).get("Default")
        if info is None or not info.has_derivatives:
            continue
        saved = sorted(
            {str(s.nctype.name) for s in info.all_saved_inputs if _is_tensor_type(s.nctype.type)},
            # Schema order; foreach ops save under their reference op's names, by name.
            key=lambda name: (order.get(name, len(order)), name),
        )
        if schema.kind() == SchemaKind.inplace and "self" in saved:
            # torch's codegen saves `original_self = self.clone()` for an in-place op whose
            # formula needs the old self: a copy, which no later write can reach.
            saved.remove("self")
            entry["saves_copy"] = ["self"]
        entry["saves"] = saved
        # Returns as the formula names them: result, result0.., or their schema names.
        names = [n if n != "self" else "result" for n in cpp.return_names(info.func)]
        saved_returns = sorted(
            {str(s.nctype.name) for s in info.all_saved_outputs if _is_tensor_type(s.nctype.type)},
            key=lambda name: (names.index(name) if name in names else len(names), name),
        )
        entry["saves_result"] = bool(names) and names[0] in saved_returns
        if saved_returns and saved_returns != names[:1]:
            entry["saved_returns"] = saved_returns
        entry["formula"] = str(info.func.func.name)
    return {"torch_version": torch_version(), "ops": dict(sorted(ops.items()))}


# ------------------------------------------------------------------------------ tracing


class _Recorder(TorchDispatchMode):
    """Records the name of every aten op dispatched while it is active."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.ops.append(func.name())
        return func(*args, **(kwargs or {}))


@dataclass(frozen=True)
class Trace:
    """What one traced call did; `saved` holds the roles whose storage a node kept."""

    aten: tuple[str, ...]
    saved: frozenset[str]
    writes: bool
    returns: str
    differentiable: bool
    # For a tuple of new tensors (``topk``, ``sort``, ``max(dim)``): each item's field
    # name (``values``, ``indices``; empty for a plain tuple) and whether it carries grad.
    outputs: tuple[tuple[str, bool], ...] = ()


def _fields(result: tuple[Any, ...]) -> list[str]:
    """The field names of a torch.return_types tuple, in position order."""
    names = [""] * len(result)
    for name in dir(result):
        if name.startswith("_") or name in ("count", "index") or name.startswith("n_"):
            continue
        item = getattr(result, name)
        for position, value in enumerate(result):
            if value is item:
                names[position] = name
    return names


def _outputs(result: Any, returns: str) -> tuple[tuple[str, bool], ...]:
    if returns != "fresh" or not isinstance(result, tuple) or len(result) < 2 or \
            not all(isinstance(item, Tensor) for item in result):
        return ()
    return tuple(zip(_fields(result), (item.requires_grad for item in result), strict=True))


def _flatten(value: Any) -> Iterator[Tensor]:
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _flatten(item)


def _storage(t: Tensor | None) -> int | None:
    if t is None:
        return None
    ptr = t.untyped_storage().data_ptr()
    return ptr or None


def _nodes(roots: Iterable[Any], stop: Collection[int] = ()) -> list[Any]:
    """Autograd nodes reachable from `roots`, not crossing into the nodes in `stop`."""
    seen: dict[int, Any] = {}
    stack = [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen or id(node) in stop:
            continue
        seen[id(node)] = node
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return list(seen.values())


def _saved(node: Any) -> Iterator[Tensor]:
    """Every tensor an autograd node keeps for its backward."""
    for attr in dir(node):
        if attr.startswith("_saved_"):
            yield from _flatten(getattr(node, attr))
    if hasattr(node, "saved_tensors"):  # a custom autograd.Function
        try:
            yield from _flatten(node.saved_tensors)
        except RuntimeError:
            pass


def _returns(result: Any, case: Case, writes: bool) -> str:
    if (result is None and writes) or result is case.input:
        return "input"
    tensors = list(_flatten(result))
    shares = [_storage(t) == _storage(case.input) for t in tensors]
    if isinstance(result, (tuple, list)) and tensors and all(shares):
        return "views"
    return "view" if shares and shares[0] else "fresh"


def _multi_output_views(spelling: Spelling) -> bool:
    """Whether autograd marks the call's views as outputs of one multi-output op (split,
    unbind: writing one raises), rather than as separate slices of the input
    (tensor_split, hsplit: each a plain view, written like any other)."""
    case = spelling.prepare()
    pieces = list(_flatten(case.run()))
    try:
        pieces[0].add_(0)
    except RuntimeError as error:
        return "multiple views" in str(error)
    return False


def trace(spelling: Spelling, input_requires_grad: bool = True, other_requires_grad: bool = True,
          inplace: bool = False) -> Trace | None:
    """What one call does, or None when no tensor of it requires grad (no graph at all)."""
    case = spelling.prepare(input_requires_grad, other_requires_grad, inplace)
    tensors = case.tensors()
    if not any(t.requires_grad for t in tensors):
        return None
    # The graph that existed before the call; `keep_alive` holds it until the walk is
    # done, so that no id() in `existing` can be reused by a new node.
    keep_alive = _nodes(t.grad_fn for t in tensors)
    existing = {id(n) for n in keep_alive}
    version = case.input._version
    roles = {"input": _storage(case.input), "other": _storage(case.other)}
    with _Recorder() as recorder:
        result = case.run()
    writes = case.input._version != version
    returns = _returns(result, case, writes)
    if returns == "views" and not _multi_output_views(spelling):
        returns = "view_pieces"
    outputs = list(_flatten(result))
    first = outputs[0] if outputs else case.input
    roots = [t.grad_fn for t in outputs] + ([case.input.grad_fn] if writes else [])
    aliases_input = returns in ("input", "view", "views")
    saved: set[str] = set()
    for node in _nodes(roots, existing):
        for t in _saved(node):
            ptr = _storage(t)
            if ptr is None:
                continue
            if ptr == roles["input"]:
                # Saved after an in-place write: the new value, i.e. the output. Saved by
                # a view-returning call: input and output share one version counter.
                saved.add("output" if writes else "input")
                if aliases_input:
                    saved.add("output")
            if ptr == roles["other"]:
                saved.add("other")
            if not aliases_input and ptr == _storage(first):
                saved.add("output")
    # autograd dispatches an aten::detach each time it saves an op's output; that is
    # bookkeeping, not part of the call (a leading detach is `x.detach()` itself).
    ops = [o for i, o in enumerate(recorder.ops) if o != "aten::detach" or i == 0]
    del keep_alive
    return Trace(
        aten=tuple(dict.fromkeys(ops)),
        saved=frozenset(saved),
        writes=writes,
        returns="tuple" if _outputs(result, returns) else returns,
        differentiable=first.requires_grad,
        outputs=_outputs(result, returns),
    )


def _saves(spelling: Spelling, full: Trace, inplace: bool) -> dict[str, str]:
    """Role -> condition, by comparing the full trace with ones lacking a requires_grad."""
    without_other = trace(spelling, True, False, inplace)
    without_input = trace(spelling, False, True, inplace)
    # A trace whose output does not require grad recorded no graph and tells nothing
    # (`x.view_as(y)` with only y requiring grad).
    if without_other is not None and not without_other.differentiable:
        without_other = None
    if without_input is not None and not without_input.differentiable:
        without_input = None
    saves: dict[str, str] = {}
    for role in ROLES:
        if role not in full.saved:
            continue
        # An operand that cannot require grad anyway gives the full trace again.
        lost_other = without_other is not None and role not in without_other.saved
        lost_input = without_input is not None and role not in without_input.saved
        if lost_other and lost_input:
            raise AssertionError(f"{spelling.key}: {role} saved only when both require grad")
        saves[role] = (
            "other_requires_grad" if lost_other
            else "input_requires_grad" if lost_input
            else "always"
        )
    return saves


def _flag(target: Any, skip_self: bool) -> dict[str, Any] | None:
    """Where `inplace` sits in a signature: its name and positional index (None if kw-only)."""
    try:
        parameters = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):  # builtins without a signature have no inplace switch
        return None
    if skip_self:
        parameters = parameters[1:]
    positional = [
        p.name for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    if "inplace" not in {p.name for p in parameters}:
        return None
    return {"name": "inplace",
            "position": positional.index("inplace") if "inplace" in positional else None}


def effect(spelling: Spelling, inplace: bool = False) -> dict[str, Any]:
    full = trace(spelling, True, True, inplace)
    if full is None:
        raise AssertionError(f"{spelling.key}: nothing requires grad")
    flag = None
    if spelling.table == "functions" and spelling.call is None and not inplace:
        flag = _flag(spelling.target, skip_self=False)
    return {
        "aten": list(full.aten),
        "saves": _saves(spelling, full, inplace) if full.differentiable else {},
        "writes": full.writes,
        "returns": full.returns,
        "differentiable": full.differentiable,
        **({"outputs": [list(item) for item in full.outputs]} if full.outputs else {}),
        "inplace_flag": flag,
        "inplace": effect(spelling, inplace=True) if flag else None,
    }


def _structure(result: Any) -> Any:
    """A call's result as nested lists of "tensor"."""
    if isinstance(result, (tuple, list)):
        return [_structure(item) for item in result]
    return "tensor"


def module_facts(spelling: Spelling) -> dict[str, Any]:
    ctor_inplace = _flag(spelling.target.__init__, skip_self=True)
    case = spelling.prepare()
    assert isinstance(case.module, nn.Module)
    # A call that writes the module's own parameters (Embedding with max_norm renormalises
    # its weight in place, under no_grad): a weight edit between a forward and backward.
    before = [p._version for p in case.module.parameters()]
    case.run()
    after = [p._version for p in case.module.parameters()]
    facts = {
        "call": effect(spelling),
        "call_inplace": effect(spelling, inplace=True) if ctor_inplace else None,
        "has_parameters": bool(before),
        "ctor_inplace": ctor_inplace,
    }
    if before != after:
        facts["writes_parameters"] = True
    # A tuple of tuples (an LSTM's (output, (h_n, c_n))): the call's facts describe its
    # first tensor, the others are new tensors of its graph.
    structure = _structure(case.run())
    if isinstance(structure, list) and any(isinstance(part, list) for part in structure):
        facts["outputs"] = structure
    # The public torch.nn classes it is an instance of (``isinstance(m, nn.Hardtanh)``
    # holds for a ReLU6), nn.Module included.
    facts["bases"] = [f"torch.nn.{base.__name__}" for base in spelling.target.__mro__[1:]
                      if getattr(nn, base.__name__, None) is base]
    if not case.input.is_floating_point():
        # It is called with indices (Embedding): its input never requires grad.
        facts["index_input"] = True
    return facts


def factories() -> list[str]:
    """The factory calls whose result is a fresh tensor outside any graph."""
    keys = []
    for factory in FACTORIES:
        like = torch.randn(2, 3, requires_grad=True) * 1
        result = factory.call(like)
        if (isinstance(result, Tensor) and not result.requires_grad
                and _storage(result) != _storage(like)):
            keys.append(factory.key)
    return sorted(keys)


def module_wrappers() -> list[str]:
    """The wrappers that return the very module they are given."""
    kept = []
    for name in MODULE_WRAPPERS:
        parent, _, attr = name.rpartition(".")
        try:
            # The attribute of its package: ``torch.nn.utils.weight_norm`` is also the name
            # of the submodule that defines the function.
            wrapper = getattr(resolve(parent), attr)
        except (LookupError, AttributeError):
            continue  # not in this torch
        layer = nn.Linear(3, 4)
        with warnings.catch_warnings():  # torch.nn.utils.weight_norm is deprecated
            warnings.simplefilter("ignore")
            result = _wrap(name, wrapper, layer)
        if isinstance(result, tuple):
            result, layer = result
        if result is layer:
            kept.append(name)
    return sorted(kept)


def _wrap(name: str, wrapper: Any, layer: nn.Module) -> Any:
    """Call one wrapper on ``layer``; a remover gets a wrapped layer (returns both)."""
    parent, _, attr = name.rpartition(".")
    if name.endswith("register_parametrization"):
        return wrapper(layer, "weight", nn.Identity())
    if attr.startswith("remove_"):
        wrapped = getattr(resolve(parent), attr.removeprefix("remove_"))(layer)
        return wrapper(wrapped), wrapped
    return wrapper(layer)


def spellings() -> dict[str, Any]:
    tables: dict[str, dict[str, Any]] = {
        "functions": {}, "methods": {}, "operators": {}, "modules": {}
    }
    spellings = every_spelling()
    for spelling in spellings:
        if spelling.key in tables[spelling.table]:
            raise AssertionError(f"duplicate spelling {spelling.table}:{spelling.key}")
        facts = module_facts(spelling) if spelling.table == "modules" else effect(spelling)
        tables[spelling.table][spelling.key] = facts
    for spelling in spellings:
        base = spelling.only_if_differs_from
        table = tables[spelling.table]
        if base is not None and table[spelling.key] == table[base]:
            del table[spelling.key]
    return {
        "torch_version": torch_version(),
        **{name: dict(sorted(table.items())) for name, table in tables.items()},
        "factories": factories(),
        "module_wrappers": module_wrappers(),
    }


# ------------------------------------------------------------------------------- output


def _dump_aten(doc: dict[str, Any]) -> str:
    # One op per line: a torch upgrade then shows up as a readable line diff.
    lines = [f'  {json.dumps(name)}: {json.dumps(op, separators=(", ", ": "))}'
             for name, op in doc["ops"].items()]
    return ('{"torch_version": ' + json.dumps(doc["torch_version"]) + ',\n "ops": {\n'
            + ",\n".join(lines) + "\n }\n}\n")


def _dump_formulas(doc: dict[str, Any]) -> str:
    lines = [f'  {json.dumps(name)}: {json.dumps(entry, separators=(", ", ": "))}'
             for name, entry in doc["formulas"].items()]
    return ('{"torch_version": ' + json.dumps(doc["torch_version"]) + ',\n "formulas": {\n'
            + ",\n".join(lines) + "\n }\n}\n")


def render() -> dict[str, str]:
    """File name -> file text, exactly as written to the data directory."""
    ops = aten_ops()
    used = {op["formula"] for op in ops["ops"].values() if "formula" in op}
    return {
        "aten_ops.json": _dump_aten(ops),
        "derivatives.json": _dump_formulas(derivatives(used)),
        "spellings.json": json.dumps(spellings(), indent=1) + "\n",
    }


def write(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render().items():
        path = out_dir / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="directory to write into")
    args = parser.parse_args(argv)
    for path in write(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
