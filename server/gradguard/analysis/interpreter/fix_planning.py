"""Fix planning: at a write, which rewrite would remove a hazard found there and keep
what the code computes (rendered later, only for hazards that are reported)."""

from __future__ import annotations

import ast

from gradguard.analysis.fix_plans import (
    CloneFirst,
    DropArgument,
    DropOut,
    InPlaceOnly,
    OutOfPlace,
    Plan,
    Rename,
    SelectRows,
    is_dotted,
    receiver_root,
    unbind_plan,
)
from gradguard.analysis.interpreter.expressions import Expressions
from gradguard.analysis.interpreter.state import MAPPING, Frame, State
from gradguard.analysis.values import Value


class FixPlanning:
    """Plans a fix at a write. Reads the statement the run is at (``state.run.place``),
    and evaluates the names a rewrite would start from."""

    def __init__(self, state: State, expressions: Expressions) -> None:
        self.state = state
        self.facts = state.facts
        self.expressions = expressions

    def clone_first(self, target: ast.expr, frame: Frame) -> Plan | None:
        """Write into a copy: possible when the written view starts from a tensor name."""
        run = self.state.run
        root = receiver_root(target)
        if root is None or run.place is None:
            return None
        value = self.expressions.eval(root, frame)
        if value.kind == "tensor":
            return CloneFirst(root, run.place)
        if value.kind == "list" and value.view == "multi" and isinstance(root, ast.Name) and \
                value.requires_grad is True and run.autograd.grad_enabled and \
                not any(storage.leaf for storage in value.storages):
            # ``rows[0].mul_(2)`` on ``rows = x.unbind()``: autograd refuses the write (a
            # view of a leaf would be refused as single views too).
            return unbind_plan(root.id, run.place)
        return None

    def replaces_item(self, target: ast.expr, frame: Frame) -> bool:
        """``items[i]`` where ``items`` is a Python list of tensors: assigning to it
        replaces the item and writes no tensor."""
        if not isinstance(target, ast.Subscript) or not is_dotted(target.value):
            return False
        owner = self.expressions.eval(target.value, frame)
        return owner.kind == "list" and owner.view != "multi" and owner.name != MAPPING

    @staticmethod
    def rebinding_keeps_meaning(target: Value) -> bool:
        """Whether ``x = <out of place>`` computes what writing into ``x`` did.

        Not for a view: the write reached its base, which the rebinding no longer
        changes. Pieces of split/chunk/unbind are written separately anyway.
        """
        return target.view in (None, "multi") and not target.row

    def method_plan(self, call: ast.Call, name: str, owner: Value,
                    frame: Frame) -> Plan | None:
        run = self.state.run
        assert isinstance(call.func, ast.Attribute)
        receiver = call.func.value
        if owner.view == "data":
            # Through .data: only a copy written first leaves the saved tensor alone.
            return self.clone_first(receiver, frame) if isinstance(receiver, ast.Name) \
                else None
        out_of_place = name.removesuffix("_")
        effect = self.facts.methods.get(out_of_place)
        if run.place is not None and effect is None and (
                is_dotted(receiver) or owner.view == "multi"):
            # No out-of-place form; into a leaf (or a piece of one) it can go under
            # no_grad (``leaf_plan``).
            return InPlaceOnly(receiver, run.place)
        if run.place is not None and effect is not None and not effect.writes and \
                out_of_place != name and self.replaces_item(receiver, frame):
            # ``outs[0].mul_(2)`` on a Python list: the item is replaced by the result.
            return OutOfPlace(call, Rename(out_of_place), receiver, run.place)
        if run.place is None or effect is None or effect.writes or out_of_place == name:
            return None
        if isinstance(owner.row, SelectRows) and isinstance(receiver, ast.Name):
            return owner.row
        if is_dotted(receiver):
            if not self.rebinding_keeps_meaning(owner):
                return None
            return OutOfPlace(call, Rename(out_of_place), receiver, run.place)
        return self.clone_first(receiver, frame)

    def function_plan(self, call: ast.Call, name: str) -> Plan | None:
        run = self.state.run
        if run.place is None or not call.args or not is_dotted(call.args[0]):
            return None
        known = self.facts.functions.get(name)
        flag = known.inplace_flag if known is not None else None
        if flag is not None:
            edit: DropArgument | Rename = DropArgument(flag.name, flag.position)
        elif name.endswith("_") and name[:-1] in self.facts.functions and \
                isinstance(call.func, ast.Attribute):
            edit = Rename(call.func.attr.removesuffix("_"))
        else:
            return None
        return OutOfPlace(call, edit, call.args[0], run.place)

    def out_plan(self, call: ast.Call) -> Plan | None:
        run = self.state.run
        target = next((k.value for k in call.keywords if k.arg == "out"), None)
        if target is None or run.place is None or not is_dotted(target):
            return None
        return DropOut(call, target, run.place)
