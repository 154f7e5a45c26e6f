"""The layer chosen another way: by a constructor flag, from a config object (a
dataclass, a ``SimpleNamespace``, a dict of keyword arguments), by ``getattr(nn, name)``,
from a registry dict of classes, by a default argument.

A layer is a call of a class of ``torch.nn`` spelled through its module
(``nn.ReLU(inplace=True)``, ``torch.nn.Conv2d(3, 8, 3)``). Definitions that read the
module when they run (a registry, a config) go after the imports at the head of the file,
and only layers whose module those imports bind are rewritten.
"""

from __future__ import annotations

import libcst as cst

from tests.metamorphic.base import (
    Transformation,
    add_top,
    import_block_end,
    imported_names,
    keyword_param,
    per_file,
    statements,
)

NN = ("nn.",)  # a file without it has no layer to rewrite
NOT_LAYERS = frozenset({"Parameter", "ParameterList", "ParameterDict", "Module"})


def layer_class(call: cst.Call) -> tuple[str, str] | None:
    """("nn", "ReLU") for ``nn.ReLU(...)``, ("torch.nn", "Conv2d") for
    ``torch.nn.Conv2d(...)``."""
    func = call.func
    if not isinstance(func, cst.Attribute) or not func.attr.value[:1].isupper():
        return None
    if func.attr.value in NOT_LAYERS:
        return None
    parts = []
    value: cst.BaseExpression = func.value
    while isinstance(value, cst.Attribute):
        parts.append(value.attr.value)
        value = value.value
    if not isinstance(value, cst.Name):
        return None
    parts.append(value.value)
    if parts[0] != "nn":
        return None
    return ".".join(reversed(parts)), func.attr.value


class _Layers(cst.CSTTransformer):
    """Replaces each layer call whose module ``roots`` binds (any name, when None) by
    ``replace``."""

    def __init__(self, roots: set[str] | None) -> None:
        super().__init__()
        self.roots = roots
        self.count = 0
        self.classes: dict[str, str] = {}  # "nn.ReLU" -> its key (ReLU, ReLU_2, ...)

    def key(self, module: str, name: str) -> str:
        spelled = f"{module}.{name}"
        if spelled not in self.classes:
            taken = set(self.classes.values())
            key, n = name, 1
            while key in taken:
                n += 1
                key = f"{name}_{n}"
            self.classes[spelled] = key
        return self.classes[spelled]

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        found = layer_class(updated)
        if found is None or (self.roots is not None and found[0].split(".")[0] not in self.roots):
            return updated
        new = self.replace(updated, *found)
        if new is not updated:
            self.count += 1
        return new

    def replace(self, call: cst.Call, module: str, name: str) -> cst.BaseExpression:
        raise NotImplementedError


def _rewrite_after_imports(module: cst.Module, layers: _Layers,
                           definitions: str) -> cst.Module | None:
    new = module.visit(layers)
    if not layers.count:
        return None
    end = import_block_end(module)
    code = definitions.format(**_entries(layers))
    body = list(new.body)
    return new.with_changes(body=[*body[:end], *statements(code), *body[end:]])


def _entries(layers: _Layers) -> dict[str, str]:
    pairs = list(layers.classes.items())
    return {
        "fields": "".join(f"    {key}: type = {spelled}\n" for spelled, key in pairs),
        "keywords": ", ".join(f"{key}={spelled}" for spelled, key in pairs),
        "items": ", ".join(f"{key!r}: {spelled}" for spelled, key in pairs),
    }


class _Getattr(_Layers):
    def replace(self, call: cst.Call, module: str, name: str) -> cst.BaseExpression:
        return call.with_changes(func=cst.parse_expression(f"getattr({module}, {name!r})"))


def getattr_nn(module: cst.Module) -> cst.Module | None:
    """``nn.ReLU(inplace=True)`` -> ``getattr(nn, 'ReLU')(inplace=True)``."""
    layers = _Getattr(None)
    new = module.visit(layers)
    return new if layers.count else None


class _Lookup(_Layers):
    spelling = ""

    def replace(self, call: cst.Call, module: str, name: str) -> cst.BaseExpression:
        key = self.key(module, name)
        return call.with_changes(func=cst.parse_expression(self.spelling.format(key=key)))


def _roots(module: cst.Module) -> set[str]:
    return imported_names(module, import_block_end(module))


class _Registry(_Lookup):
    spelling = "_MM_LAYERS[{key!r}]"


def registry_dict(module: cst.Module) -> cst.Module | None:
    """``nn.ReLU(inplace=True)`` -> ``_MM_LAYERS['ReLU'](inplace=True)``, with
    ``_MM_LAYERS = {'ReLU': nn.ReLU, ...}`` after the imports."""
    return _rewrite_after_imports(module, _Registry(_roots(module)),
                                  "_MM_LAYERS = {{{items}}}\n")


class _Config(_Lookup):
    spelling = "_MM_CONFIG.{key}"


def config_dataclass(module: cst.Module) -> cst.Module | None:
    """``nn.ReLU(inplace=True)`` -> ``_MM_CONFIG.ReLU(inplace=True)``, where
    ``_MM_CONFIG`` is an instance of a dataclass whose fields default to the layer
    classes."""
    return _rewrite_after_imports(
        module, _Config(_roots(module)),
        "import dataclasses as _mm_dataclasses\n\n"
        "@_mm_dataclasses.dataclass\nclass _MMConfig:\n{fields}\n"
        "_MM_CONFIG = _MMConfig()\n")


def config_namespace(module: cst.Module) -> cst.Module | None:
    """``nn.ReLU(inplace=True)`` -> ``_MM_CONFIG.ReLU(inplace=True)``, where
    ``_MM_CONFIG = types.SimpleNamespace(ReLU=nn.ReLU, ...)``."""
    return _rewrite_after_imports(
        module, _Config(_roots(module)),
        "import types as _mm_types\n_MM_CONFIG = _mm_types.SimpleNamespace({keywords})\n")


_LITERALS = (cst.Integer, cst.Float, cst.SimpleString)


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        return _literal(node.expression)
    return isinstance(node, _LITERALS) or (
        isinstance(node, cst.Name) and node.value in ("True", "False", "None"))


def literal_keywords(call: cst.Call) -> list[cst.Arg] | None:
    """A layer call's keyword arguments, when it has some, all literals, and no ``*``."""
    keywords = [arg for arg in call.args if arg.keyword is not None]
    if not keywords or any(arg.star for arg in call.args) or \
            not all(_literal(arg.value) for arg in keywords):
        return None
    return keywords


class _KeywordConfig(cst.CSTTransformer):
    def __init__(self, module: cst.Module) -> None:
        super().__init__()
        self.module = module
        self.entries: list[str] = []

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        found = layer_class(updated)
        keywords = literal_keywords(updated)
        if found is None or keywords is None:
            return updated
        key = f"{found[1]}_{len(self.entries) + 1}"
        pairs = ", ".join(f"{arg.keyword.value!r}: {self.module.code_for_node(arg.value)}"
                          for arg in keywords if arg.keyword is not None)
        self.entries.append(f"    {key!r}: {{{pairs}}},\n")
        positional = [arg for arg in updated.args if arg.keyword is None]
        config = cst.Arg(cst.parse_expression(f"_MM_CFG[{key!r}]"), star="**")
        return updated.with_changes(args=[*positional, config])


def config_dict(module: cst.Module) -> cst.Module | None:
    """``nn.ReLU(inplace=True)`` -> ``nn.ReLU(**_MM_CFG['ReLU_1'])``, with ``_MM_CFG =
    {'ReLU_1': {'inplace': True}}`` (the layer's keyword arguments, when they are all
    literals, from a config dict as ``act_cfg`` holds them)."""
    config = _KeywordConfig(module)
    new = module.visit(config)
    if not config.entries:
        return None
    return add_top(new, statements("_MM_CFG = {\n" + "".join(config.entries) + "}\n"))


class _StoredPartial(cst.CSTTransformer):
    def __init__(self, module: cst.Module, roots: set[str]) -> None:
        super().__init__()
        self.module = module
        self.roots = roots
        self.entries: list[str] = []

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        found = layer_class(updated)
        keywords = literal_keywords(updated)
        if found is None or found[0].split(".")[0] not in self.roots or keywords is None:
            return updated
        key = f"_MM_{found[1]}_{len(self.entries) + 1}"
        given = ", ".join(f"{arg.keyword.value}={self.module.code_for_node(arg.value)}"
                          for arg in keywords if arg.keyword is not None)
        self.entries.append(f"{key} = _mm_functools.partial({found[0]}.{found[1]}, {given})\n")
        positional = [arg for arg in updated.args if arg.keyword is None]
        if positional:
            positional[-1] = positional[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(func=cst.Name(key), args=positional)


def stored_partial(module: cst.Module) -> cst.Module | None:
    """``nn.ReLU(inplace=True)`` -> ``_MM_ReLU_1()``, with ``_MM_ReLU_1 =
    functools.partial(nn.ReLU, inplace=True)`` after the imports (the layer's keyword
    arguments, when they are all literals, bound once, as timm's ``act_layer`` is)."""
    stored = _StoredPartial(module, _roots(module))
    new = module.visit(stored)
    if not stored.entries:
        return None
    end = import_block_end(module)
    code = "import functools as _mm_functools\n" + "".join(stored.entries)
    body = list(new.body)
    return new.with_changes(body=[*body[:end], *statements(code), *body[end:]])


class _Flag(cst.CSTTransformer):
    """In each ``__init__`` of a class: every layer call chosen by a keyword-only
    ``_mm_flag`` (true by default) over ``nn.Identity()``."""

    # defaults and decorators run where the function is defined, not in it
    def visit_Parameters(self, node: cst.Parameters) -> bool:
        return False

    def visit_Decorator(self, node: cst.Decorator) -> bool:
        return False

    def __init__(self) -> None:
        super().__init__()
        self.count = 0
        self.in_init: list[bool] = [False]
        self.counts: list[int] = []  # the count when each function being visited began
        self.classes: list[bool] = [False]

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(True)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.classes.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.in_init.append(self.classes[-1] and node.name.value == "__init__")
        self.classes.append(False)
        self.counts.append(self.count)

    def leave_FunctionDef(self, original: cst.FunctionDef,
                          updated: cst.FunctionDef) -> cst.FunctionDef:
        self.classes.pop()
        in_init, began = self.in_init.pop(), self.counts.pop()
        chosen = in_init and self.count > began
        if not chosen:
            return updated
        flag = keyword_param("_mm_flag", cst.Name("True"))
        params = updated.params
        return updated.with_changes(params=params.with_changes(
            star_arg=params.star_arg if params.star_arg != cst.MaybeSentinel.DEFAULT
            else cst.ParamStar(),
            kwonly_params=[*params.kwonly_params, flag]))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        found = layer_class(updated)
        if found is None or not self.in_init[-1]:
            return updated
        self.count += 1
        identity = cst.parse_expression(f"{found[0]}.Identity()")
        return cst.IfExp(test=cst.Name("_mm_flag"), body=updated, orelse=identity,
                         lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def constructor_flag(module: cst.Module) -> cst.Module | None:
    """In a class's ``__init__``: ``nn.ReLU(inplace=True)`` -> ``(nn.ReLU(inplace=True) if
    _mm_flag else nn.Identity())``, with ``*, _mm_flag=True`` added to its parameters."""
    flag = _Flag()
    new = module.visit(flag)
    return new if flag.count else None


class _Default(cst.CSTTransformer):
    """In each function after the head imports: every layer call made through a
    keyword-only parameter whose default is the layer class."""

    # defaults and decorators run where the function is defined, not in it
    def visit_Parameters(self, node: cst.Parameters) -> bool:
        return False

    def visit_Decorator(self, node: cst.Decorator) -> bool:
        return False

    def __init__(self, roots: set[str]) -> None:
        super().__init__()
        self.roots = roots
        self.count = 0
        # per scope: class -> parameter in a function, None in a class body or the module
        self.defaults: list[dict[str, str] | None] = [None]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.defaults.append({})

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False  # a lambda's layer would need a default of its own

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.defaults.append(None)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.defaults.pop()
        return updated

    def leave_FunctionDef(self, original: cst.FunctionDef,
                          updated: cst.FunctionDef) -> cst.FunctionDef:
        chosen = self.defaults.pop()
        if not chosen:
            return updated
        params = updated.params
        new = [keyword_param(name, cst.parse_expression(spelled))
               for spelled, name in chosen.items()]
        return updated.with_changes(params=params.with_changes(
            star_arg=params.star_arg if params.star_arg != cst.MaybeSentinel.DEFAULT
            else cst.ParamStar(),
            kwonly_params=[*params.kwonly_params, *new]))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        found = layer_class(updated)
        chosen = self.defaults[-1]
        if found is None or chosen is None or found[0].split(".")[0] not in self.roots:
            return updated
        spelled = f"{found[0]}.{found[1]}"
        if spelled not in chosen:
            self.count += 1
            chosen[spelled] = f"_mm_layer{self.count}"
        return updated.with_changes(func=cst.Name(chosen[spelled]))


def default_argument(module: cst.Module) -> cst.Module | None:
    """In a function: ``nn.ReLU(inplace=True)`` -> ``_mm_layer1(inplace=True)``, with
    ``*, _mm_layer1=nn.ReLU`` added to its parameters."""
    default = _Default(_roots(module))
    new = module.visit(default)
    return new if default.count else None


TRANSFORMATIONS = [
    Transformation("constructor_flag", "layer chosen", per_file(constructor_flag, NN)),
    Transformation("config_dataclass", "layer chosen", per_file(config_dataclass, NN)),
    Transformation("config_namespace", "layer chosen", per_file(config_namespace, NN)),
    Transformation("config_dict", "layer chosen", per_file(config_dict, NN)),
    Transformation("stored_partial", "layer chosen", per_file(stored_partial, NN)),
    Transformation("getattr_nn", "layer chosen", per_file(getattr_nn, NN)),
    Transformation("registry_dict", "layer chosen", per_file(registry_dict, NN)),
    Transformation("default_argument", "layer chosen", per_file(default_argument, NN)),
]
