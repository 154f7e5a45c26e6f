"""The shipped autograd facts, checked against the installed torch by running backward.

The generator finds what a call saves by reading ``grad_fn._saved_*`` storages. These
tests find it the way users do: call the spelling, modify one of its tensors in place
(under ``no_grad``, which still bumps the version counter, like ``optimizer.step()``),
run backward, and see whether autograd complains that "one of the variables needed for
gradient computation has been modified by an inplace operation". It must complain
exactly when the table says that role is saved, under each requires-grad condition.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import Tensor
from torch.utils._python_dispatch import TorchDispatchMode

ROOT = Path(__file__).resolve().parents[1]

from gradguard.facts import Effect, load  # noqa: E402
from tools import generate_facts  # noqa: E402
from tools.discovered_spellings import every_spelling  # noqa: E402
from tools.spelling_specs import Case, Spelling, by_key  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.slow]

FACTS = load()
# The hand-written spellings and those found by calling torch's whole namespace.
SPELLINGS = every_spelling()
RAW_ATEN = json.loads((generate_facts.DATA_DIR / "aten_ops.json").read_text())["ops"]
SAVED_TENSOR_MODIFIED = "modified by an inplace operation"
VIEW_OF_MULTI_OUTPUT_MODIFIED = "output of a function that returns multiple views"


@dataclass(frozen=True)
class Scenario:
    """Which of the two role operands require grad when the call runs."""

    name: str
    input_requires_grad: bool
    other_requires_grad: bool


EVERYTHING_REQUIRES_GRAD = Scenario("all-require-grad", True, True)
OTHER_FROZEN = Scenario("other-frozen", True, False)
INPUT_WITHOUT_GRAD = Scenario("input-without-grad", False, True)


def table_effect(spelling: Spelling, inplace: bool) -> Effect | None:
    """The shipped effect of a spelling (its inplace=True form if asked), if shipped."""
    if spelling.table == "modules":
        module = FACTS.modules.get(spelling.key)
        return None if module is None else (module.call_inplace if inplace else module.call)
    effect = getattr(FACTS, spelling.table).get(spelling.key)
    return None if effect is None else (effect.inplace if inplace else effect)


def saved_under(effect: Effect, role: str, scenario: Scenario) -> bool:
    condition = effect.saves.get(role)
    return (
        condition == "always"
        or (condition == "other_requires_grad" and scenario.other_requires_grad)
        or (condition == "input_requires_grad" and scenario.input_requires_grad)
    )


def sharing_a_version_counter(effect: Effect, role: str) -> set[str]:
    """The roles a write to `role` bumps: a view and its base share one counter."""
    if role != "other" and effect.returns in ("view", "views", "input"):
        return {"input", "output"}
    return {role}


def records_a_graph(spelling: Spelling, inplace: bool, scenario: Scenario) -> bool:
    case = spelling.prepare(scenario.input_requires_grad, scenario.other_requires_grad, inplace)
    return outputs_of(case.run(), case)[0].requires_grad


def applicable(spelling: Spelling, inplace: bool) -> list[Scenario]:
    """Everything requiring grad, then each operand without grad in turn, if a graph remains."""
    scenarios = [EVERYTHING_REQUIRES_GRAD]
    case = spelling.prepare(inplace=inplace)
    if case.other is not None and case.other.requires_grad:
        scenarios.append(OTHER_FROZEN)
    if case.input.requires_grad:
        scenarios.append(INPUT_WITHOUT_GRAD)
    return [s for s in scenarios if records_a_graph(spelling, inplace, s)]


def outputs_of(result: Any, case: Case) -> list[Tensor]:
    if result is None:  # `x[i] = v`: the result is the written input
        return [case.input]
    if isinstance(result, Tensor):
        return [result]
    return [t for t in result if isinstance(t, Tensor)]


def role_tensor(case: Case, outputs: list[Tensor], role: str) -> Tensor | None:
    return {"input": case.input, "other": case.other, "output": outputs[0]}[role]


def bump_version(tensor: Tensor) -> None:
    # Any dtype, values unchanged: only the version counter moves.
    with torch.no_grad():
        tensor.copy_(tensor.clone())


def has_a_backward(spelling: Spelling, inplace: bool) -> bool:
    """False for ops like `//`, whose output requires grad but whose backward raises."""
    case = spelling.prepare(inplace=inplace)
    outputs = outputs_of(case.run(), case)
    return type(outputs[0].grad_fn).__name__ != "NotImplemented"


def backward_cases() -> list[Any]:
    cases = []
    for spelling in SPELLINGS:
        for inplace in (False, True):
            effect = table_effect(spelling, inplace)
            if effect is None or not effect.differentiable or not has_a_backward(spelling, inplace):
                continue
            roles = ["input", "other", "output"]
            if spelling.prepare().other is None:
                roles.remove("other")
            for scenario in applicable(spelling, inplace):
                for role in roles:
                    name = f"{spelling.key}{'(inplace)' if inplace else ''}"
                    cases.append(pytest.param(
                        spelling, inplace, role, scenario,
                        id=f"{name}-writing-{role}-{scenario.name}",
                    ))
    return cases


@pytest.mark.parametrize(("spelling", "inplace", "role", "scenario"), backward_cases())
def test_backward_fails_after_a_write_exactly_when_the_table_says_the_role_is_saved(
    spelling: Spelling, inplace: bool, role: str, scenario: Scenario
) -> None:
    effect = table_effect(spelling, inplace)
    assert effect is not None
    case = spelling.prepare(scenario.input_requires_grad, scenario.other_requires_grad, inplace)
    outputs = outputs_of(case.run(), case)
    loss = sum(t.sum() for t in outputs if t.requires_grad)
    assert isinstance(loss, Tensor) and loss.requires_grad
    target = role_tensor(case, outputs, role)
    assert target is not None
    try:
        bump_version(target)
    except RuntimeError as error:
        assert "refers to a single memory location" in str(error)
        pytest.skip("an expanded view cannot be written at all")

    if any(saved_under(effect, r, scenario) for r in sharing_a_version_counter(effect, role)):
        with pytest.raises(RuntimeError, match=SAVED_TENSOR_MODIFIED):
            loss.backward()
    else:
        loss.backward()


def multi_view_spellings() -> list[Any]:
    return [pytest.param(s, id=s.key) for s in SPELLINGS
            if (effect := table_effect(s, False)) is not None and effect.returns == "views"]


@pytest.mark.parametrize("spelling", multi_view_spellings())
def test_views_of_a_multi_view_call_cannot_be_written_with_grad_mode_on(
    spelling: Spelling,
) -> None:
    case = spelling.prepare()
    pieces = outputs_of(case.run(), case)
    with pytest.raises(RuntimeError, match=VIEW_OF_MULTI_OUTPUT_MODIFIED):
        pieces[0].add_(1)


@pytest.mark.parametrize("spelling", [
    pytest.param(s, id=s.key) for s in SPELLINGS
    if (effect := table_effect(s, False)) is not None and effect.returns == "view_pieces"])
def test_pieces_of_a_slicing_split_are_plain_views(spelling: Spelling) -> None:
    case = spelling.prepare()
    pieces = outputs_of(case.run(), case)
    version = case.input._version
    pieces[0].add_(1)  # no error: a slice of the input, written like any view
    assert case.input._version > version


def every_effect() -> list[Any]:
    params = []
    for spelling in SPELLINGS:
        for inplace in (False, True):
            effect = table_effect(spelling, inplace)
            if effect is not None:
                name = f"{spelling.key}{'(inplace)' if inplace else ''}"
                params.append(pytest.param(spelling, inplace, effect, id=name))
    return params


@pytest.mark.parametrize(("spelling", "inplace", "effect"), every_effect())
def test_writes_and_returns_match_the_version_counters(
    spelling: Spelling, inplace: bool, effect: Effect
) -> None:
    """`writes` bumps the input's counter; a "view"/"input" result shares it, "fresh" not."""
    case = spelling.prepare(inplace=inplace)
    before = case.input._version
    result = case.run()
    assert (case.input._version != before) == effect.writes
    outputs = outputs_of(result, case)
    assert all(t.requires_grad == effect.differentiable for t in outputs if t.is_floating_point())
    if effect.returns == "input":
        assert result is None or result is case.input
        return
    before = case.input._version
    try:
        bump_version(outputs[0])
    except RuntimeError as error:
        assert "refers to a single memory location" in str(error)
        return
    assert (case.input._version != before) == (effect.returns in ("view", "views", "view_pieces"))


# -------------------------------------------------------------- facts worth spelling out


def effect_of(table: str, key: str, inplace: bool = False) -> Effect:
    if table == "modules":
        return FACTS.modules[key].effect(inplace)
    effects: dict[str, Effect] = getattr(FACTS, table)
    return effects[key].with_inplace(inplace)


KNOWN_FACTS = [
    ("ReLU(inplace=True) saves its output", "modules", "torch.nn.ReLU", True,
     {"output": "always"}),
    ("BatchNorm2d saves its input, not its output", "modules", "torch.nn.BatchNorm2d", False,
     {"input": "always", "other": "always"}),
    ("sigmoid saves its output", "functions", "torch.sigmoid", False, {"output": "always"}),
    ("tanh saves its output", "methods", "tanh", False, {"output": "always"}),
    ("exp saves its output", "functions", "torch.exp", False, {"output": "always"}),
    ("softmax saves its output", "functions", "torch.nn.functional.softmax", False,
     {"output": "always"}),
    ("conv2d saves input and weight", "modules", "torch.nn.Conv2d", False,
     {"input": "always", "other": "always"}),
    ("silu(inplace=True) saves only a copy of the old input", "modules", "torch.nn.SiLU", True,
     {}),
    ("relu6(inplace=True), a hardtanh_, saves only a copy", "functions",
     "torch.nn.functional.relu6", True, {}),
    ("leaky_relu_ saves its output", "functions", "torch.nn.functional.leaky_relu_", False,
     {"output": "always"}),
    ("elu_ saves its output", "functions", "torch.nn.functional.elu_", False,
     {"output": "always"}),
    ("x * 2 saves nothing", "operators", "*#scalar", False, {}),
    ("x * y keeps each operand for the other's gradient", "operators", "*", False,
     {"input": "other_requires_grad", "other": "input_requires_grad"}),
    ("Linear keeps its input only for a trainable weight", "modules", "torch.nn.Linear", False,
     {"input": "other_requires_grad", "other": "input_requires_grad"}),
    ("interpolate saves nothing", "functions", "torch.nn.functional.interpolate", False, {}),
    ("bilinear interpolate saves nothing", "functions",
     "torch.nn.functional.interpolate#bilinear", False, {}),
    ("dropout (train) saves only its mask", "functions", "torch.nn.functional.dropout", False,
     {}),
    ("cross_entropy keeps the target, not the logits", "functions",
     "torch.nn.functional.cross_entropy", False, {"other": "always"}),
    ("adaptive_avg_pool2d(x, 3) saves its input", "functions",
     "torch.nn.functional.adaptive_avg_pool2d", False, {"input": "always"}),
    ("adaptive_avg_pool2d(x, 1) is a mean and saves nothing", "functions",
     "torch.nn.functional.adaptive_avg_pool2d#1", False, {}),
]


@pytest.mark.parametrize(
    ("table", "key", "inplace", "saves"),
    [pytest.param(t, k, i, s, id=fact) for fact, t, k, i, s in KNOWN_FACTS],
)
def test_known_fact(table: str, key: str, inplace: bool, saves: dict[str, str]) -> None:
    assert effect_of(table, key, inplace).saves == saves


def test_in_place_relu_twice_in_a_row_breaks_backward() -> None:
    """The first ReLU(inplace=True) saved its output, which the second one overwrites."""
    x = torch.randn(4, 3, requires_grad=True) * 1
    first = torch.nn.ReLU(inplace=True)(x)
    second = torch.nn.ReLU(inplace=True)(first)
    assert FACTS.modules["torch.nn.ReLU"].effect(inplace=True).saves == {"output": "always"}
    with pytest.raises(RuntimeError, match=SAVED_TENSOR_MODIFIED):
        second.sum().backward()


ATEN_FACTS = [
    ("relu_ keeps its result (threshold_backward uses it)", "relu_",
     {"saves": [], "saves_result": True, "writes": ["self"]}),
    ("native_batch_norm keeps its input, not its output", "native_batch_norm",
     {"saves": ["input", "weight", "running_mean", "running_var"], "saves_result": False}),
    ("silu_ keeps a copy of its old self", "silu_",
     {"saves": [], "saves_result": False, "saves_copy": ["self"]}),
    ("hardtanh_ keeps a copy of its old self", "hardtanh_",
     {"saves": [], "saves_result": False, "saves_copy": ["self"]}),
    ("leaky_relu_ keeps its result", "leaky_relu_", {"saves": [], "saves_result": True}),
    ("elu_ keeps its result", "elu_", {"saves": [], "saves_result": True}),
    ("convolution keeps input and weight", "convolution",
     {"saves": ["input", "weight"], "saves_result": False}),
    ("sum uses its input's sizes only", "sum", {"saves": [], "saves_result": False}),
    ("mean.dim uses its input's sizes only", "mean.dim", {"saves": [], "saves_result": False}),
    ("_softmax keeps its result", "_softmax", {"saves": [], "saves_result": True}),
    ("max.dim keeps its indices, not its values", "max.dim",
     {"saves": [], "saves_result": False, "saved_returns": ["indices"]}),
    ("mul_.Tensor keeps other and a copy of self", "mul_.Tensor",
     {"saves": ["other"], "saves_copy": ["self"]}),
    ("add.out writes out, inheriting add's formula", "add.out",
     {"writes": ["out"], "formula": "add.Tensor"}),
    ("view returns a view of self", "view", {"view_of": ["self"], "writes": []}),
    ("linear decomposes on CPU/CUDA", "linear", {"decomposes": True, "saves": []}),
    ("upsample_nearest2d keeps nothing", "upsample_nearest2d", {"saves": []}),
]


@pytest.mark.parametrize(
    ("op", "expected"), [pytest.param(op, e, id=fact) for fact, op, e in ATEN_FACTS]
)
def test_known_aten_fact(op: str, expected: dict[str, Any]) -> None:
    assert {key: RAW_ATEN[op].get(key) for key in expected} == expected


# ------------------------------------------------------------- the two tables agree


class ArgumentsOf(TorchDispatchMode):
    """Captures the schema arguments and result of the first call of one aten op."""

    def __init__(self, op: str) -> None:
        super().__init__()
        self.op = op
        self.arguments: dict[str, Any] | None = None
        self.tensor_typed: set[str] = set()
        self.result: Any = None

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        result = func(*args, **(kwargs or {}))
        if self.arguments is None and func.name() == "aten::" + self.op:
            schema = func._schema.arguments
            self.arguments = {**dict(zip((a.name for a in schema), args, strict=False)),
                              **(kwargs or {})}
            self.tensor_typed = {a.name for a in schema if "Tensor" in str(a.type)}
            self.result = result
        return result


def flat_tensors(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in flat_tensors(item)]
    return []


def single_op_spellings() -> list[Any]:
    """Spellings that dispatch one aten op with a formula (besides an in-place's clone)."""
    params = []
    for spelling in SPELLINGS:
        for inplace in (False, True):
            effect = table_effect(spelling, inplace)
            if effect is None or not effect.differentiable:
                continue
            real = [a.removeprefix("aten::") for a in effect.aten if a != "aten::clone"]
            if len(real) == 1 and "formula" in RAW_ATEN.get(real[0], {}):
                name = f"{spelling.key}{'(inplace)' if inplace else ''}"
                params.append(pytest.param(spelling, inplace, real[0], id=f"{name}={real[0]}"))
    return params


@pytest.mark.parametrize(("spelling", "inplace", "op"), single_op_spellings())
def test_traced_saves_agree_with_derivatives_yaml(spelling: Spelling, inplace: bool,
                                                  op: str) -> None:
    """derivatives.yaml, as torchgen reads it, and the trace name the same saved roles.

    The op's arguments are matched to the spelling's roles by storage. torchgen skips
    saves that only serve the gradient of an operand not requiring grad, so the yaml is
    compared only where every floating-point tensor argument requires grad.
    """
    effect = table_effect(spelling, inplace)
    assert effect is not None
    case = spelling.prepare(inplace=inplace)
    with ArgumentsOf(op) as seen:
        result = case.run()
    assert seen.arguments is not None
    tensors = {name: flat_tensors(value) for name, value in seen.arguments.items()}
    ours = {t.untyped_storage().data_ptr() for t in case.tensors()}
    scalars = [name for name in seen.tensor_typed
               if isinstance(seen.arguments.get(name), (int, float, bool))]
    if scalars:
        pytest.skip("a Python scalar operand, wrapped in a tensor that never requires grad")
    if not all(t.untyped_storage().data_ptr() in ours for ts in tensors.values() for t in ts):
        pytest.skip("an operand made inside the call, which no role names")
    if not all(t.requires_grad for ts in tensors.values() for t in ts if t.is_floating_point()):
        pytest.skip("a constant operand: torchgen skips the saves that would serve it")
    storage = {role: t.untyped_storage().data_ptr()
               for role, t in (("input", case.input), ("other", case.other)) if t is not None}
    roles_of = {name: {role for role, ptr in storage.items()
                       if any(t.untyped_storage().data_ptr() == ptr for t in ts)}
                for name, ts in tensors.items()}
    aten = FACTS.aten[op]
    from_yaml = {role for name in aten.saves for role in roles_of.get(name, ())}
    if effect.writes:
        # What an in-place op saves of `self` is the written tensor: the output.
        from_yaml = {"output" if r == "input" else r for r in from_yaml}
    op_result = flat_tensors(seen.result)[0].untyped_storage().data_ptr()
    if aten.saves_result and op_result == outputs_of(result, case)[0].untyped_storage().data_ptr():
        from_yaml.add("output")
    assert set(effect.saves) == from_yaml


def test_aten_formulas_are_the_kernels_autograd_runs_on_cpu() -> None:
    """An op with a formula has a generated autograd kernel; a decomposing one has none."""
    wrong = []
    for name in RAW_ATEN:
        table = torch._C._dispatch_dump_table("aten::" + name)
        autograd_cpu = next(line for line in table.splitlines() if line.startswith("AutogradCPU:"))
        cpu = next((line for line in table.splitlines() if line.startswith("CPU:")), "")
        if RAW_ATEN[name].get("decomposes") and "[math kernel]" not in autograd_cpu:
            wrong.append(f"{name} decomposes, but {autograd_cpu}")
        # An op whose only dense kernel is CUDA's (as _fused_rms_norm) decomposes on CPU.
        if "formula" in RAW_ATEN[name] and "[autograd kernel]" not in autograd_cpu \
                and "[math kernel]" not in cpu:
            wrong.append(f"{name} has a formula, but {autograd_cpu}")
    assert wrong == []


# ------------------------------------------------------------ the data cannot drift


def test_shipped_data_is_what_the_generator_writes_now(tmp_path: Path) -> None:
    written = generate_facts.write(tmp_path)
    for path in written:
        shipped = generate_facts.DATA_DIR / path.name
        assert shipped.exists(), f"{shipped} missing: run tools/generate_facts.py"
        fresh, old = json.loads(path.read_text()), json.loads(shipped.read_text())
        for table in fresh:
            if fresh[table] != old.get(table) and isinstance(fresh[table], dict):
                changed = sorted(
                    k for k in fresh[table].keys() | old.get(table, {}).keys()
                    if fresh[table].get(k) != old.get(table, {}).get(k)
                )
                pytest.fail(f"{path.name}:{table} differs at {changed[:10]}: "
                            "run tools/generate_facts.py")
        assert path.read_text() == shipped.read_text()


def test_the_loader_reads_what_was_generated() -> None:
    assert FACTS.torch_version == torch.__version__.split("+")[0]
    spellings = len(FACTS.functions) + len(FACTS.methods) + len(FACTS.operators)
    assert spellings + len(FACTS.modules) >= 150
    assert len(FACTS.aten) > 2000
    assert "torch.zeros" in FACTS.factories
    assert set(by_key()) >= {("modules", k) for k in FACTS.modules}
