"""What one torch call does to autograd, in words: rendered from the facts tables.

Everything said here comes from the generated facts: what the call keeps for backward
(``spellings.json``, traced under torch), the aten ops it runs with their
derivatives.yaml formulas (``aten_ops.json``, ``derivatives.json``), whether it writes in
place and what kind of tensor it returns. Nothing about any op is written here by hand;
only the sentences that put the facts into words.
"""

from __future__ import annotations

from dataclasses import dataclass

from gradguard.facts.formulas import Formula
from gradguard.facts.table import AtenOp, Effect, Facts

# Operand texts longer than this are named by their role instead.
LONGEST_OPERAND = 32
# The ways code writes a tensor in place: any of them bumps its version counter.
WRITES = "`.add_()`, `+=`, `[...] =`, `out=`, a layer built with `inplace=True`"


@dataclass(frozen=True)
class TorchCall:
    """A torch call as written in the source, with what the facts say it does."""

    # What the call is: ``torch.sigmoid``, ``Tensor.exp``, ``Tensor.__mul__`` (``*``),
    # ``torch.nn.ReLU``.
    title: str
    effect: Effect
    # The source text of its first and second tensor operands, where they are written.
    input: str | None = None
    other: str | None = None
    # A layer: calling it runs ``effect``; ``other`` is its weight.
    layer: bool = False
    # Something the reader must know that the source does not settle (an ``inplace``
    # switch given by a variable).
    note: str | None = None


def _code(text: str) -> str:
    return f"`{text}`"


def _operand(text: str | None, fallback: str) -> str:
    if text is None or len(text) > LONGEST_OPERAND or "`" in text or "\n" in text:
        return fallback
    return _code(text)


class _Words:
    """How the roles of one call are named in its hover."""

    def __init__(self, call: TorchCall) -> None:
        self.input = _operand(call.input, "its input")
        other = "its weight" if call.layer else "its second operand"
        self.other = _operand(call.other, other)
        # An in-place call returns the tensor it wrote.
        self.output = f"{self.input} (its result)" if call.effect.returns == "input" \
            else "its result"

    def role(self, role: str) -> str:
        return {"input": self.input, "other": self.other}.get(role, self.output)

    def condition(self, condition: str) -> str:
        if condition == "other_requires_grad":
            return f" (only when {self.other} requires grad)"
        if condition == "input_requires_grad":
            return f" (only when {self.input} requires grad)"
        return ""


def _join(phrases: list[str]) -> str:
    if len(phrases) < 2:
        return "".join(phrases)
    return ", ".join(phrases[:-1]) + " and " + phrases[-1]


def _kept(call: TorchCall, words: _Words) -> str:
    effect = call.effect
    if not effect.differentiable:
        return "**No backward:** its result never requires grad."
    kept = [words.role(role) + words.condition(condition)
            for role in ("input", "other", "output")
            if (condition := effect.saves.get(role)) is not None]
    if not kept:
        return "**Backward keeps** none of its operands, nor its result."
    return f"**Backward keeps** {_join(kept)}."


def _formula_ops(effect: Effect, facts: Facts,
                 formulas: dict[str, Formula]) -> list[tuple[str, AtenOp, Formula]]:
    """The aten ops the call runs that have a derivatives.yaml formula: those whose
    formula keeps a tensor, or all of them when none does (what the backward reads)."""
    found: list[tuple[str, AtenOp, Formula]] = []
    seen: set[str] = set()
    for qualified in dict.fromkeys(effect.aten):
        name = qualified.removeprefix("aten::")
        op = facts.aten.get(name)
        formula = formulas.get(op.formula) if op is not None and op.formula else None
        if op is None or formula is None or formula.name in seen:
            continue
        seen.add(formula.name)
        found.append((name, op, formula))
    keeping = [item for item in found if item[2].keeps]
    return keeping or found


def _what_a_formula_reads(name: str, op: AtenOp, formula: Formula) -> str:
    inherited = f" (the formula of `{formula.name}`)" if formula.name != name else ""
    said = []
    for line in formula.backward:
        if not line.keeps:
            continue
        read = [f"a copy of the old `{kept}`" if kept in op.saves_copy else _code(kept)
                for kept in line.keeps]
        said.append(f"the gradient of `{line.of}` reads {_join(read)}")
    if not said:
        return (f"`aten::{name}`{inherited}: its formulas read no tensor, only sizes, "
                "types or scalars.")
    return f"`aten::{name}`{inherited}: " + "; ".join(said) + "."


def _yaml(formula: Formula) -> str:
    lines = [f"- name: {formula.schema}"]
    lines += [f"  {line.of}: {line.formula}" for line in formula.backward]
    return "```yaml\n" + "\n".join(lines) + "\n```"


def _returns(call: TorchCall, words: _Words) -> str:
    effect = call.effect
    source = words.input
    kinds = {
        "fresh": "a new tensor.",
        "input": f"{source} itself, written in place.",
        "view": f"a view of {source}: it shares {source}'s storage and version counter, "
                "so writing either one is a write to both.",
        "views": f"views of {source}, the outputs of one op that returns several views: "
                 "autograd refuses an in-place write to any of them while grad mode is "
                 "on, and each shares the version counter of "
                 f"{source}.",
        "view_pieces": f"views of {source}, each a plain view: writing one is a write to "
                       f"{source}.",
    }
    if effect.returns == "tuple":
        items = [f"`{name or 'item'}` ({'carries grad' if grad else 'no grad'})"
                 for name, grad in effect.outputs]
        text = f"a tuple of new tensors: {', '.join(items)}."
    else:
        text = kinds.get(effect.returns, "a new tensor.")
    if not effect.differentiable and effect.returns == "fresh":
        text = "a new tensor that never requires grad."
    return f"**Returns** {text}"


def _in_place(call: TorchCall, words: _Words) -> str:
    if not call.effect.writes:
        return "**In place:** no."
    return (f"**In place:** yes. It writes {words.input}, which bumps the version counter "
            f"{words.input} shares with every view of its storage: an earlier op that kept "
            "any of them fails at backward.")


def _breaks(call: TorchCall, words: _Words) -> str:
    effect = call.effect
    if not effect.differentiable:
        return ""
    # A result that shares its input's storage shares its version counter too.
    shares_input = effect.returns in ("view", "views", "view_pieces", "input")
    breaking = []
    for role in ("input", "other", "output"):
        condition = effect.saves.get(role)
        if condition is None:
            continue
        views = " or any view of it" if role == "output" and not shares_input \
            else " or any view of its storage"
        breaking.append(words.role(role) + views + words.condition(condition))
    said = []
    if len(breaking) == 1:
        said.append(f"**Breaks backward:** an in-place write ({WRITES}) to {breaking[0]} "
                    "before backward runs: autograd raises \"modified by an inplace "
                    "operation\".")
    elif breaking:
        said.append(f"**Breaks backward:** an in-place write ({WRITES}), before backward "
                    "runs, to\n" + "\n".join(f"- {target}" for target in breaking)
                    + "\n\nautograd raises \"modified by an inplace operation\".")
    else:
        said.append("**Later writes:** nothing it keeps can be overwritten; writing its "
                    "operands or its result afterwards breaks nothing of this call.")
    if effect.returns == "views":
        said.append("Writing one of its results in place raises at once (GG003).")
    return " ".join(said)


def backward_reads(effect: Effect, facts: Facts, formulas: dict[str, Formula]) -> list[str]:
    """One line per aten op the call runs with a formula: what its gradient reads, and
    the derivatives.yaml lines that read it (the hover's words, on one line each)."""
    return [_reads_inline(name, op, formula)
            for name, op, formula in _formula_ops(effect, facts, formulas)]


def aten_reads(name: str, facts: Facts, formulas: dict[str, Formula]) -> list[str]:
    """``backward_reads`` for an aten op known by its name alone (``relu_``, ``mul``):
    the overload with a formula, when the call itself cannot be recognised."""
    candidates = [key for key in facts.aten if key == name or key.startswith(name + ".")]
    for key in candidates:
        op = facts.aten[key]
        formula = formulas.get(op.formula) if op.formula else None
        if formula is not None:
            return [_reads_inline(key, op, formula)]
    return []


def _reads_inline(name: str, op: AtenOp, formula: Formula) -> str:
    lines = [f"`{line.of}: {line.formula}`" for line in formula.backward if line.keeps] or \
        [f"`{line.of}: {line.formula}`" for line in formula.backward]
    return _what_a_formula_reads(name, op, formula) + " Formula: " + "; ".join(lines)


def explain(call: TorchCall, facts: Facts, formulas: dict[str, Formula]) -> str:
    """The hover text (markdown) of one torch call."""
    words = _Words(call)
    aten = ", ".join(_code(a) for a in dict.fromkeys(call.effect.aten))
    runs = ": calling it runs" if call.layer else " runs"
    parts = [f"**{_code(call.title)}**{runs} {aten or 'no aten op'}"
             + (f"  \n{call.note}" if call.note else ""), _kept(call, words)]
    for name, op, formula in _formula_ops(call.effect, facts, formulas):
        parts.append(_what_a_formula_reads(name, op, formula) + "\n\n" + _yaml(formula))
    parts += [_in_place(call, words), _returns(call, words), _breaks(call, words)]
    parts.append(f"_From derivatives.yaml and traces under torch {facts.torch_version}._")
    return "\n\n".join(part for part in parts if part)
