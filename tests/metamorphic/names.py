"""Which names an expression or statement reads, for moving it into a function of its
own (every name becomes a parameter, so the function needs no closure)."""

from __future__ import annotations

import libcst as cst

_CONSTANTS = frozenset({"True", "False", "None"})


def read_names(node: cst.CSTNode) -> list[str] | None:
    """The plain names ``node`` reads or writes, in order of first use; None when it
    holds a scope of its own (a lambda or a comprehension binds names of its own)."""
    names: list[str] = []
    nested = False

    class Collector(cst.CSTVisitor):
        def scope(self) -> bool:
            nonlocal nested
            nested = True
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return self.scope()

        def visit_ListComp(self, node: cst.ListComp) -> bool:
            return self.scope()

        def visit_SetComp(self, node: cst.SetComp) -> bool:
            return self.scope()

        def visit_DictComp(self, node: cst.DictComp) -> bool:
            return self.scope()

        def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
            return self.scope()

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)  # obj.name reads obj, not name
            return False

        def visit_Arg(self, arg: cst.Arg) -> bool:
            arg.value.visit(self)  # f(k=v) reads v, not k
            return False

        def visit_Name(self, name: cst.Name) -> None:
            if name.value not in _CONSTANTS and name.value not in names:
                names.append(name.value)

    node.visit(Collector())
    return None if nested else names
