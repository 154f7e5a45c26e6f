"""Hover: which torch call is at a position of a Python text, and what autograd keeps of it.

A pure function of the text and a position (0-based line, code-point column), so the
language server only converts positions. The call is recognised from the source alone,
the way the analysis names calls: a dotted name through the module's imports
(``F.relu`` is ``torch.nn.functional.relu``), a method of any receiver that is not an
imported module (``x.exp()``), an operator between two operands that are not both
literals, and a layer attribute (``self.act(x)``) that the enclosing class builds
from one torch layer (``self.act = nn.ReLU(inplace=True)``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

from gradguard.analysis.names import CONVENTIONAL_ALIASES, dotted_name, imported_names, qualify
from gradguard.analysis.syntax import SourceError, parse
from gradguard.explain.ops import TorchCall, explain
from gradguard.facts.formulas import load_formulas
from gradguard.facts.table import Effect, Facts, InplaceFlag, load
from gradguard.text import split_lines

BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
          ast.Pow: "**", ast.MatMult: "@", ast.Mod: "%"}
# A Python number on the left runs the tensor's reflected method.
REFLECTED = {"+": "radd", "*": "rmul", "-": "rsub", "/": "rtruediv"}
DUNDER = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv",
          "**": "pow", "@": "matmul", "%": "mod"}


@dataclass(frozen=True)
class Hover:
    """Markdown, and the range it is about (0-based lines, code-point columns)."""

    markdown: str
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class _Spot:
    """A place a hover answers for: a node and the range of its name or operator."""

    node: ast.AST
    start: tuple[int, int]
    end: tuple[int, int]

    def holds(self, at: tuple[int, int]) -> bool:
        return self.start <= at <= self.end

    @property
    def size(self) -> tuple[int, int]:
        return (self.end[0] - self.start[0], self.end[1] - self.start[1])


class _Source:
    """A parsed text, with ``ast``'s UTF-8 columns turned into code points."""

    def __init__(self, text: str, tree: ast.Module, first_line: int = 0) -> None:
        self.lines = split_lines(text)
        self.tree = tree
        # The tree's line 1 is this 0-based line of the text (a line parsed alone).
        self.first_line = first_line
        self.aliases = {**CONVENTIONAL_ALIASES, **_aliases(self.lines)}

    def position(self, line: int, utf8_column: int) -> tuple[int, int]:
        number = line - 1 + self.first_line
        text = self.lines[number] if number < len(self.lines) else ""
        return number, len(text.encode("utf-8")[:utf8_column].decode("utf-8", "ignore"))

    def start(self, node: ast.AST) -> tuple[int, int]:
        return self.position(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> tuple[int, int]:
        return self.position(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        (line, column), (end_line, end_column) = self.start(node), self.end(node)
        if line == end_line:
            return self.lines[line][column:end_column]
        return "\n".join([self.lines[line][column:], *self.lines[line + 1:end_line],
                          self.lines[end_line][:end_column]])

    def operator(self, after: ast.AST, before: ast.AST, symbol: str) -> _Spot | None:
        """Where ``symbol`` is written between two nodes (past closing brackets,
        spaces, comments and line continuations)."""
        line, column = self.end(after)
        stop = self.start(before)
        while (line, column) < stop:
            text = self.lines[line]
            if column >= len(text) or text[column] == "#" or text[column:] == "\\":
                line, column = line + 1, 0
            elif text[column] in " \t\f)]":
                column += 1
            elif text.startswith(symbol, column):
                return _Spot(after, (line, column), (line, column + len(symbol)))
            else:
                return None
        return None


def _aliases(lines: list[str]) -> dict[str, str]:
    """The import aliases of every import line, each parsed alone (the text as a whole
    may not parse while it is being typed)."""
    aliases: dict[str, str] = {}
    for line in lines:
        stripped = line.strip()
        if not stripped.startswith(("import ", "from ")):
            continue
        try:
            module = ast.parse(stripped)
        except SyntaxError:
            continue
        for statement in module.body:
            for local, qualified in imported_names(statement):
                if not qualified.startswith("."):
                    aliases[local] = qualified
    return aliases


@lru_cache(maxsize=4)
def _source(text: str) -> _Source | None:
    try:
        return _Source(text, parse(text))
    except SourceError:
        return None


def _line_alone(text: str, line: int) -> _Source | None:
    """The one line, parsed alone: a text being typed often does not parse as a whole."""
    lines = split_lines(text)
    if not 0 <= line < len(lines):
        return None
    written = lines[line]
    indented = written[:1] in (" ", "\t")
    for attempt in (written, written + " pass"):
        try:
            tree = ast.parse("if 1:\n" + attempt if indented else attempt)
        except (SyntaxError, ValueError):
            continue
        shift = 1 if indented else 0
        return _Source(text, tree, first_line=line - shift)
    return None


def _spots(source: _Source, line: int) -> list[_Spot]:
    """The hoverable places of the statements on one line (of the tree's text)."""
    spots: list[_Spot] = []
    for node in ast.walk(source.tree):
        if not isinstance(node, (ast.Call, ast.BinOp, ast.AugAssign, ast.UnaryOp)):
            continue
        first, last = source.start(node)[0], source.end(node)[0]
        if not first <= line <= last:
            continue
        if isinstance(node, ast.Call):
            func = node.func
            end = source.end(func)
            if isinstance(func, ast.Attribute):
                spots.append(_Spot(node, (end[0], end[1] - len(func.attr)), end))
            else:
                spots.append(_Spot(node, source.start(func), end))
        elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in BINARY:
            left, right = (node.left, node.right) if isinstance(node, ast.BinOp) \
                else (node.target, node.value)
            symbol = BINARY[type(node.op)] + ("=" if isinstance(node, ast.AugAssign) else "")
            written = source.operator(left, right, symbol)
            if written is not None:
                spots.append(_Spot(node, written.start, written.end))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            start = source.start(node)
            spots.append(_Spot(node, start, (start[0], start[1] + 1)))
    return spots


def _is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex)) \
        and not isinstance(node.value, bool)


def _is_literal(node: ast.AST) -> bool:
    return _is_number(node) or isinstance(node, (ast.Constant, ast.JoinedStr))


def _pick(table: dict[str, Effect], keys: list[str]) -> tuple[str, Effect] | None:
    for key in keys:
        if key in table:
            return key, table[key]
    return None


def _flag(where: InplaceFlag | None, call: ast.Call) -> ast.expr | None:
    """The expression given to an ``inplace`` switch, if any."""
    if where is None:
        return None
    for keyword in call.keywords:
        if keyword.arg == where.name:
            return keyword.value
    position = where.position
    if position is not None and position < len(call.args) and \
            not any(isinstance(a, ast.Starred) for a in call.args):
        return call.args[position]
    return None


class _Resolver:
    def __init__(self, source: _Source, facts: Facts) -> None:
        self.source = source
        self.facts = facts

    def text(self, node: ast.AST | None) -> str | None:
        return None if node is None else self.source.segment(node)

    def switched(self, effect: Effect, call: ast.Call) -> tuple[Effect, str | None]:
        """The effect as its ``inplace`` switch is set at this call, and a note when the
        switch is not a literal."""
        given = _flag(effect.inplace_flag, call)
        if given is None or effect.inplace is None:
            return effect, None
        if isinstance(given, ast.Constant):
            return effect.with_inplace(bool(given.value)), None
        return effect, (f"`inplace={self.text(given)}` is not known here: shown as with "
                        f"`inplace=False`; with `inplace=True` it runs "
                        f"{', '.join(f'`{a}`' for a in effect.inplace.aten)} and writes its "
                        "input.")

    def call(self, node: ast.Call) -> TorchCall | None:
        func = node.func
        dotted = dotted_name(func)
        name = qualify(dotted, self.source.aliases) if dotted else None
        if name is not None and name.startswith("torch."):
            return self.torch_name(name, node)
        if not isinstance(func, ast.Attribute):
            return None
        receiver = func.value
        if isinstance(receiver, ast.Name) and receiver.id == "self":
            return self.layer_attribute(func.attr, node)
        head = dotted.split(".", 1)[0] if dotted else None
        if head is not None and head in self.source.aliases:
            return None  # a function of another module (np.exp, math.exp)
        return self.method(func.attr, node)

    def torch_name(self, name: str, node: ast.Call) -> TorchCall | None:
        facts = self.facts
        if name in facts.modules:
            return self.layer(name, node, None)
        args = node.args
        keys = []
        second = args[1] if len(args) > 1 else None
        if second is not None and _is_number(second) or any(k.arg == "dim" for k in node.keywords):
            keys.append(f"{name}#dim")
        if second is not None and _is_number(second):
            if isinstance(second, ast.Constant) and second.value == 1:
                keys.append(f"{name}#1")
            keys.append(f"{name}#scalar")
        found = _pick(facts.functions, [*keys, name])
        if found is None:
            return None
        effect, note = self.switched(found[1], node)
        operands = [a for a in args if not _is_literal(a)]
        return TorchCall(name, effect, input=self.text(operands[0]) if operands else None,
                         other=self.text(operands[1]) if len(operands) > 1 else None,
                         note=note)

    def method(self, name: str, node: ast.Call) -> TorchCall | None:
        keys = []
        first = node.args[0] if node.args else None
        if first is not None and _is_literal(first) or any(k.arg == "dim" for k in node.keywords):
            keys.append(f"{name}#dim")
        if first is not None and _is_number(first):
            keys.append(f"{name}#scalar")
        found = _pick(self.facts.methods, [*keys, name])
        effect = found[1] if found else self.facts.inplace_method(name)
        if effect is None:
            return None
        assert isinstance(node.func, ast.Attribute)
        operands = [a for a in node.args if not _is_literal(a)]
        return TorchCall(f"Tensor.{name}", effect, input=self.text(node.func.value),
                         other=self.text(operands[0]) if operands else None)

    def layer(self, name: str, built: ast.Call, called: ast.Call | None) -> TorchCall | None:
        """A torch layer, as built by ``built``; called by ``called`` if that is the spot."""
        for keyword in built.keywords:
            variant = f"{name}#{keyword.arg}"
            if variant in self.facts.modules and not (
                    isinstance(keyword.value, ast.Constant) and keyword.value.value is None):
                name = variant
                break
        module = self.facts.modules[name]
        given = _flag(module.ctor_inplace, built)
        inplace = isinstance(given, ast.Constant) and given.value is True
        note = None
        if given is not None and not isinstance(given, ast.Constant):
            note = f"`inplace={self.text(given)}` is not known here: shown as with `inplace=False`."
        title = name.split("#", 1)[0] + ("(inplace=True)" if inplace else "")
        operands = [] if called is None else called.args
        return TorchCall(title, module.effect(inplace), layer=True,
                         input=self.text(operands[0]) if operands else None,
                         other=self.text(operands[1]) if len(operands) > 1 and
                         not module.has_parameters else None, note=note)

    def layer_attribute(self, attribute: str, node: ast.Call) -> TorchCall | None:
        """``self.<attribute>(...)``: the one torch layer the enclosing class builds there."""
        owner = self.enclosing_class(node)
        if owner is None:
            return None
        built: list[tuple[str, ast.Call]] = []
        for inner in ast.walk(owner):
            targets: list[ast.expr] = []
            value: ast.expr | None = None
            if isinstance(inner, ast.Assign):
                targets, value = inner.targets, inner.value
            elif isinstance(inner, ast.AnnAssign) and inner.value is not None:
                targets, value = [inner.target], inner.value
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr == attribute and \
                        isinstance(target.value, ast.Name) and target.value.id == "self":
                    dotted = dotted_name(value.func) if isinstance(value, ast.Call) else None
                    name = qualify(dotted, self.source.aliases) if dotted else None
                    if name not in self.facts.modules or not isinstance(value, ast.Call):
                        return None  # built as something else somewhere
                    built.append((name, value))
        layers = [self.layer(name, value, node) for name, value in built]
        return layers[0] if layers and all(layer == layers[0] for layer in layers) else None

    def enclosing_class(self, node: ast.AST) -> ast.ClassDef | None:
        line = self.source.start(node)[0]
        found = None
        for candidate in ast.walk(self.source.tree):
            if isinstance(candidate, ast.ClassDef) and \
                    self.source.start(candidate)[0] <= line <= self.source.end(candidate)[0]:
                if found is None or self.source.start(candidate) > self.source.start(found):
                    found = candidate
        return found

    def operator(self, node: ast.BinOp | ast.AugAssign | ast.UnaryOp) -> TorchCall | None:
        operators = self.facts.operators
        left: ast.expr
        right: ast.expr
        if isinstance(node, ast.UnaryOp):
            found = _pick(operators, ["unary-"])
            return None if found is None or _is_literal(node.operand) else \
                TorchCall("Tensor.__neg__", found[1], input=self.text(node.operand))
        if isinstance(node, ast.AugAssign):
            symbol = BINARY[type(node.op)] + "="
            left, right = node.target, node.value
            keys = [f"{symbol}#scalar"] if _is_number(right) else []
            found = _pick(operators, [*keys, symbol])
            title = f"Tensor.__i{DUNDER[symbol[:-1]]}__"
        else:
            symbol = BINARY[type(node.op)]
            left, right = node.left, node.right
            if _is_literal(left) and _is_literal(right):
                return None
            if _is_number(left):
                if symbol not in REFLECTED:
                    return None  # no traced spelling: 2 ** x is not x ** 2
                found = _pick(operators, [f"{REFLECTED[symbol]}#scalar"])
                title = f"Tensor.__r{DUNDER[symbol]}__"
                left, right = right, left
            else:
                keys = [f"{symbol}#scalar"] if _is_number(right) else []
                found = _pick(operators, [*keys, symbol])
                title = f"Tensor.__{DUNDER[symbol]}__"
        if found is None:
            return None
        return TorchCall(f"{title} ({symbol})", found[1], input=self.text(left),
                         other=None if _is_literal(right) else self.text(right))

    def at(self, node: ast.AST) -> TorchCall | None:
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, (ast.BinOp, ast.AugAssign, ast.UnaryOp)):
            return self.operator(node)
        return None


def hover_at(text: str, line: int, column: int, facts: Facts | None = None) -> Hover | None:
    """What autograd keeps of the torch call at a 0-based line and code-point column."""
    source = _source(text) or _line_alone(text, line)
    if source is None:
        return None
    facts = facts or load()
    at = (line, column)
    spots = sorted((s for s in _spots(source, line) if s.holds(at)), key=lambda s: s.size)
    resolver = _Resolver(source, facts)
    for spot in spots[:1]:
        call = resolver.at(spot.node)
        if call is None:
            return None
        return Hover(explain(call, facts, load_formulas()), spot.start[0], spot.start[1],
                     spot.end[0], spot.end[1])
    return None


def torch_call_at(text: str, line: int, column: int, end_line: int, end_column: int,
                  facts: Facts | None = None) -> TorchCall | None:
    """The torch call whose node spans exactly this range of ``text`` (0-based lines,
    code-point columns), as the hover recognises it: what a chain's saving step says."""
    source = _source(text)
    if source is None:
        return None
    for node in ast.walk(source.tree):
        if isinstance(node, (ast.Call, ast.BinOp, ast.AugAssign, ast.UnaryOp)) and \
                source.start(node) == (line, column) and \
                source.end(node) == (end_line, end_column):
            return _Resolver(source, facts or load()).at(node)
    return None
