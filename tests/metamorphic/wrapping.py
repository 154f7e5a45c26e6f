"""The layer wrapped: in ``nn.Sequential``, in an ``nn.ModuleList`` or ``nn.ModuleDict``
indexed by a loop variable, behind a ``@property``, run by a forward hook; and a module
whose ``forward`` a subclass reaches through ``super().forward``.

The layer rewrites take a layer bound once (``self.act = nn.ReLU(inplace=True)``, or
``act = nn.ReLU(inplace=True)``) and only ever called on one argument
(``self.act(x)``): the name appears nowhere else in the file (not even in a string), so
wrapping it cannot change what any other line reaches.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from tests.metamorphic.base import Transformation, comment, per_file, statements
from tests.metamorphic.layer_choice import layer_class

Key = tuple[str, str]  # ("attribute", name) for self.name, ("name", name)


def _key(node: cst.BaseExpression) -> Key | None:
    if isinstance(node, cst.Name):
        return ("name", node.value)
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and (
            node.value.value == "self"):
        return ("attribute", node.attr.value)
    return None


@dataclass
class _Uses:
    bindings: dict[Key, str] = field(default_factory=dict)  # key -> the layer's module
    seen: dict[Key, int] = field(default_factory=dict)  # every occurrence of the name
    accounted: dict[Key, int] = field(default_factory=dict)  # bound or called on one arg
    in_statement: dict[Key, int] = field(default_factory=dict)  # calls that are a statement
    bound_twice: set[Key] = field(default_factory=set)


class _Finder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.uses = _Uses()
        self.scopes = ["module"]

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scopes.append("class")

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append("function")

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.pop()

    def _count(self, table: dict[Key, int], key: Key) -> None:
        table[key] = table.get(key, 0) + 1

    def visit_SimpleStatementLine(self, line: cst.SimpleStatementLine) -> None:
        if len(line.body) != 1:
            return
        small = line.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                small.value, cst.Call):
            key = _key(small.targets[0].target)
            found = layer_class(small.value)
            if key is not None and found is not None and self.scopes[-1] != "class" and (
                    key[0] == "attribute" or self.scopes[-1] == "module"
                    or self.scopes[-1] == "function"):
                if key in self.uses.bindings:
                    self.uses.bound_twice.add(key)
                self.uses.bindings[key] = found[0]
                self._count(self.uses.accounted, key)
        value = getattr(small, "value", None)
        if isinstance(small, (cst.Assign, cst.Return, cst.Expr)) and isinstance(value, cst.Call):
            key = _key(value.func)
            if key is not None and _one_argument(value):
                self._count(self.uses.in_statement, key)

    def visit_Call(self, call: cst.Call) -> None:
        key = _key(call.func)
        if key is not None and _one_argument(call):
            self._count(self.uses.accounted, key)

    def visit_Name(self, name: cst.Name) -> None:
        self._count(self.uses.seen, ("name", name.value))

    def visit_Attribute(self, attribute: cst.Attribute) -> None:
        self._count(self.uses.seen, ("attribute", attribute.attr.value))


def _one_argument(call: cst.Call) -> bool:
    return len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star


def wrappable(module: cst.Module, statement_calls: bool) -> dict[Key, str]:
    """The layers bound once and only called on one argument (with ``statement_calls``,
    only in calls that are a whole statement's value), by key, with their module."""
    finder = _Finder()
    module.visit(finder)
    uses, code = finder.uses, module.code
    chosen = {}
    for key, spelled in uses.bindings.items():
        name = key[1]
        if key in uses.bound_twice or f"'{name}'" in code or f'"{name}"' in code:
            continue
        # an attribute's name is also counted as a Name node by the visitor
        seen = uses.seen.get(key, 0)
        if key[0] == "attribute" and uses.seen.get(("name", name), 0) != seen:
            continue
        if seen != uses.accounted.get(key, 0) or seen < 2:
            continue  # used otherwise, or never called (an nn.Sequential subclass's child)
        if statement_calls and uses.in_statement.get(key, 0) != seen - 1:
            continue
        chosen[key] = spelled
    return chosen


class _Wrap(cst.CSTTransformer):
    """Rewrites the binding lines of the chosen layers (``bind``) and, for the loops, the
    statements that call them (``call``)."""

    def __init__(self, module: cst.Module, chosen: dict[Key, str]) -> None:
        super().__init__()
        self.module = module
        self.chosen = chosen
        self.count = 0
        self.properties: list[list[str]] = []  # per class being visited

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.properties.append([])

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        added = self.properties.pop()
        if not added or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        body = [*updated.body.body, *statements("".join(added))]
        return updated.with_changes(body=updated.body.with_changes(body=body))

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine,
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if len(original.body) != 1:
            return updated
        small = original.body[0]
        code = None
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            key = _key(small.targets[0].target)
            if key in self.chosen and isinstance(small.value, cst.Call) and layer_class(
                    small.value) is not None:
                assert key is not None
                target = self.module.code_for_node(small.targets[0].target)
                code = self.bind(key, target, self.chosen[key],
                                 self.module.code_for_node(small.value), comment(original))
        value = getattr(small, "value", None)
        if code is None and isinstance(value, cst.Call) and _key(value.func) in self.chosen:
            code = self.call(original, small, value)
        if code is None:
            return updated
        self.count += 1
        new = statements(code)
        new[0] = new[0].with_changes(leading_lines=original.leading_lines)
        return cst.FlattenSentinel(new)

    def bind(self, key: Key, target: str, spelled: str, layer: str, mark: str) -> str | None:
        raise NotImplementedError

    def call(self, line: cst.SimpleStatementLine, small: cst.BaseSmallStatement,
             call: cst.Call) -> str | None:
        return None


# A program that finds a layer by the name the module tree gives it (Grad-CAM tools'
# ``model._modules["act"]``) finds another one once the layer is wrapped or renamed: the
# wrapping transformations do not apply to it.
NAMED_LOOKUPS = ("_modules[", "get_submodule(")


def _run(module: cst.Module, wrap: type[_Wrap], statement_calls: bool = False,
         attributes_only: bool = False) -> cst.Module | None:
    if any(lookup in module.code for lookup in NAMED_LOOKUPS):
        return None
    chosen = wrappable(module, statement_calls)
    if attributes_only:
        chosen = {key: value for key, value in chosen.items() if key[0] == "attribute"}
    if not chosen:
        return None
    wrapper = wrap(module, chosen)
    new = module.visit(wrapper)
    return new if wrapper.count else None


class _Sequential(_Wrap):
    def bind(self, key: Key, target: str, spelled: str, layer: str, mark: str) -> str:
        return f"{target} = {spelled}.Sequential({layer}){mark}\n"


def sequential_wrap(module: cst.Module) -> cst.Module | None:
    """``self.act = nn.ReLU(inplace=True)`` -> ``self.act =
    nn.Sequential(nn.ReLU(inplace=True))``."""
    return _run(module, _Sequential)


class _Loop(_Wrap):
    container = ""
    loop = ""

    def bind(self, key: Key, target: str, spelled: str, layer: str, mark: str) -> str:
        return f"{target} = {spelled}.{self.container.format(layer=layer)}{mark}\n"

    def call(self, line: cst.SimpleStatementLine, small: cst.BaseSmallStatement,
             call: cst.Call) -> str | None:
        layers = self.module.code_for_node(call.func)
        indexed = call.with_changes(func=cst.parse_expression(f"{layers}[_mm_key]"))
        new = small.deep_replace(call, indexed)
        assert isinstance(new, cst.BaseSmallStatement)
        return (f"for _mm_key in {self.loop.format(layers=layers)}:\n"
                f"    {self.module.code_for_node(new)}{comment(line)}\n")


class _List(_Loop):
    container, loop = "ModuleList([{layer}])", "range(len({layers}))"


def modulelist_loop(module: cst.Module) -> cst.Module | None:
    """``self.act = nn.ReLU()`` -> ``self.act = nn.ModuleList([nn.ReLU()])``, and ``y =
    self.act(x)`` -> ``for _mm_key in range(len(self.act)): y = self.act[_mm_key](x)``."""
    return _run(module, _List, statement_calls=True)


class _Dict(_Loop):
    container, loop = "ModuleDict({{'layer': {layer}}})", "{layers}"


def moduledict_loop(module: cst.Module) -> cst.Module | None:
    """``self.act = nn.ReLU()`` -> ``self.act = nn.ModuleDict({'layer': nn.ReLU()})``, and
    ``y = self.act(x)`` -> ``for _mm_key in self.act: y = self.act[_mm_key](x)``."""
    return _run(module, _Dict, statement_calls=True)


class _Hook(_Wrap):
    def bind(self, key: Key, target: str, spelled: str, layer: str, mark: str) -> str:
        inner = f"self._mm_inner_{key[1]}" if key[0] == "attribute" else f"_mm_inner_{key[1]}"
        return (f"{inner} = {layer}{mark}\n{target} = {spelled}.Identity()\n"
                f"{target}.register_forward_hook(\n"
                f"    lambda module, args, output, inner={inner}: inner(output))\n")


def forward_hook(module: cst.Module) -> cst.Module | None:
    """``self.act = nn.ReLU(inplace=True)`` -> ``self._mm_inner_act =
    nn.ReLU(inplace=True)``, ``self.act = nn.Identity()`` and a forward hook on it that
    returns ``self._mm_inner_act(output)``: the layer runs in the hook."""
    return _run(module, _Hook)


class _Property(_Wrap):
    def bind(self, key: Key, target: str, spelled: str, layer: str, mark: str) -> str | None:
        if not self.properties:
            return None
        name = key[1]
        self.properties[-1].append(
            f"@property\ndef {name}(self):\n    return self._mm_{name}\n")
        return f"self._mm_{name} = {layer}{mark}\n"


def property_layer(module: cst.Module) -> cst.Module | None:
    """``self.act = nn.ReLU(inplace=True)`` -> ``self._mm_act = nn.ReLU(inplace=True)``,
    read back through ``@property def act(self): return self._mm_act`` on the class."""
    return _run(module, _Property, attributes_only=True)


class _SuperForward(cst.CSTTransformer):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        body: list[cst.BaseStatement] = []
        for statement in updated.body:
            if not _has_forward(statement):
                body.append(statement)
                continue
            assert isinstance(statement, cst.ClassDef)
            name, base = statement.name.value, f"_mm_Base{statement.name.value}"
            self.count += 1
            renamed = _rename(statement, name, base).with_changes(name=cst.Name(base))
            body.append(renamed)
            body.extend(statements(
                f"class {name}({base}):\n"
                "    def forward(self, *args, **kwargs):\n"
                "        return super().forward(*args, **kwargs)\n"))
        return updated.with_changes(body=body)


def _has_forward(statement: cst.BaseStatement) -> bool:
    if not isinstance(statement, cst.ClassDef) or statement.decorators:
        return False
    # a decorated forward is an autograd Function's staticmethod, called on its ctx
    return any(isinstance(item, cst.FunctionDef) and item.name.value == "forward"
               and not item.decorators for item in getattr(statement.body, "body", ()))


def _rename(node: cst.ClassDef, old: str, new: str) -> cst.ClassDef:
    """The class with every use of its own name in its body (``super(Net, self)``)
    pointing at the new name."""

    class Renamer(cst.CSTTransformer):
        def leave_Attribute(self, original: cst.Attribute,
                            updated: cst.Attribute) -> cst.Attribute:
            # nn.LSTM inside class LSTM is not the class
            return updated.with_changes(attr=original.attr)

        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
            return updated.with_changes(value=new) if updated.value == old else updated

    body = node.body.visit(Renamer())
    assert isinstance(body, cst.BaseSuite)
    return node.with_changes(body=body)


def super_forward(module: cst.Module) -> cst.Module | None:
    """``class Net(nn.Module)`` with a ``forward`` -> ``class _mm_BaseNet(nn.Module)``
    (the same body) and ``class Net(_mm_BaseNet)`` whose ``forward(*args, **kwargs)``
    returns ``super().forward(*args, **kwargs)``."""
    rewriter = _SuperForward()
    new = module.visit(rewriter)
    return new if rewriter.count else None


TRANSFORMATIONS = [
    Transformation("sequential_wrap", "module wrapped", per_file(sequential_wrap, ("nn.",))),
    Transformation("modulelist_loop", "module wrapped", per_file(modulelist_loop, ("nn.",))),
    Transformation("moduledict_loop", "module wrapped", per_file(moduledict_loop, ("nn.",))),
    Transformation("super_forward", "module wrapped", per_file(super_forward, ("def forward",))),
    Transformation("forward_hook", "module wrapped", per_file(forward_hook, ("nn.",))),
    Transformation("property_layer", "op moved", per_file(property_layer, ("nn.",))),
]
