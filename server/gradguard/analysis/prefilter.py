"""Pre-filters on a file's text: which of its definitions interpretation starts from.

Interpreting a definition costs far more than reading its text, so each root is kept
only if it can meet an in-place write, an optimizer step or a backward: its own text
has one, or it runs a definition that can (here, or imported from another file). A
class is kept for the methods that can, not for all of them: a model class's forward
that only calls layers which write nothing is not run, nor is its instance built.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from gradguard.analysis.blocks import defined_name, split_blocks
from gradguard.analysis.program import Program
from gradguard.analysis.signs import BUILD_WRITES, CANDIDATE, STRONG, Signs
from gradguard.text import source_lines

_WORD = re.compile(r"\w+")
# Each word, and whether a call's parenthesis follows it: one pass over the text.
_WORD_CALLED = re.compile(r"(\w+)(\s*\()?")


_CLASS = re.compile(r"(?:\s*@.*\n)*\s*class\s")
_INIT = re.compile(r"^([ \t]+)def __init__\b.*?(?=^\1(?:@|def |async def )|\Z)",
                   re.MULTILINE | re.DOTALL)
# A function that calls what it built (``Net()(x)``, ``Trainer().train(...)``,
# ``m.forward(x)``) runs its methods; so does a script (the module's own statements).
_USES_INSTANCE = re.compile(r"\)\s*\(|\)\s*\.\s*\w+\s*\(|\.forward\s*\(|\.__call__\s*\(")


def candidate_roots(source: str, imported: Callable[[str], str | None] | None = None,
             candidate: Signs = CANDIDATE) -> set[str]:
    """The top-level definitions whose interpretation can meet a write, a step or a
    backward: those whose own text has one, and those that name such a definition or
    use one of the ``imported`` classes that may. ``"<module>"`` stands for the
    module's own statements.

    A function that names a class only builds it (runs its ``__init__``) unless it
    calls what it built: it reaches the class's writes only if ``__init__`` has one (a
    registry of model-building functions builds every model, and runs none of them)."""
    texts: dict[str, list[str]] = {}
    for block in split_blocks(source):
        texts.setdefault(defined_name(block.text) or "<module>", []).append(block.text)
    names = set(texts)
    classes = {name for name, parts in texts.items() if _CLASS.match(parts[-1])}
    tokens = {name: _WORD_CALLED.findall("".join(parts)) for name, parts in texts.items()}
    words = {name: {word for word, _ in found} for name, found in tokens.items()}
    mentions = {name: used & names for name, used in words.items()}
    # A function is run only where it is called (one passed along as a callback, say
    # ``pretrained_filter_fn=fix_keys``, is not run by the code that passes it).
    called = {name: {word for word, call in found if call} & names
              for name, found in tokens.items()}
    inits = {name: "".join(m.group(0) for m in _INIT.finditer(texts[name][-1]))
             for name in classes}
    builds = {name: set(_WORD.findall(inits[name])) & names for name in classes}
    uses = {name for name, parts in texts.items()
            if name in classes or name == "<module>" or _USES_INSTANCE.search("".join(parts))}
    found = {name for name, parts in texts.items()
             if any(candidate.search(part) for part in parts)}
    # Classes whose construction alone can meet one: its __init__ writes a tensor, or
    # calls a function that surely does (dictionaries and counters are filled in most).
    surely = {name for name, parts in texts.items() if name not in classes and
              any(STRONG.search(part) for part in parts)}
    grew = True
    while grew:
        grew = False
        for name in names - classes - surely:
            if called[name] & surely:
                surely.add(name)
                grew = True
    built = {name for name in classes
             if BUILD_WRITES.search(inits[name]) or builds[name] & surely}
    _spread(found, built, classes, mentions, called, builds, uses)
    if imported is not None:
        # Only now, and only for what is not reached yet, the names other files define
        # (asking means reading, perhaps parsing, those files): a function that surely
        # writes, or a class that can, for code that runs what it builds.
        asked: dict[str, str | None] = {}

        def ask(word: str, runs: bool) -> bool:
            if word not in asked:
                asked[word] = imported(word)
            return asked[word] == "function" or (runs and asked[word] == "class")

        more = {name for name in names - found
                if any(ask(w, name in uses) for w in words[name] - names)}
        if more:
            found |= more
            _spread(found, built, classes, mentions, called, builds, uses)
    return found


def _spread(found: set[str], built: set[str], classes: set[str],
            mentions: dict[str, set[str]], called: dict[str, set[str]],
            builds: dict[str, set[str]], uses: set[str]) -> None:
    """Grow ``found`` (and ``built``) to every definition that runs one in it: calls a
    function of it, or uses a class of it (builds one whose construction writes)."""
    grew = True
    while grew:
        grew = False
        for name in classes - built:
            if builds[name] & built:
                built.add(name)
                grew = True
        for name, used in mentions.items():
            if name in found:
                continue
            runs = (found & classes if name in uses else built) & used
            if runs or called[name] & (found - classes):
                found.add(name)
                grew = True


_SELF_NAME = re.compile(r"self\s*\.\s*(\w+)")
_SELF_CALL = re.compile(r"self\s*\(")


def _body_start(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = node.body
    if len(body) > 1 and isinstance(body[0], ast.Expr) and \
            isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        return body[1].lineno
    return body[0].lineno


class _Method:
    """What a method's text shows: a write of its own, the words it names, the names it
    takes from ``self``, and whether it calls the instance or its parent's methods."""

    def __init__(self, text: str, candidate: Signs) -> None:
        self.writes = candidate.search(text)
        self.words = set(_WORD.findall(text))
        self.from_self = set(_SELF_NAME.findall(text))
        if _SELF_CALL.search(text):
            self.from_self |= {"forward", "__call__"}
        self.calls_parent = "super" in self.words


def candidate_methods(source: str, program: Program, found: set[str],
                     imported: Callable[[str], bool] | None = None,
                     candidate: Signs = CANDIDATE) -> dict[str, set[str]]:
    """For each class of ``found`` (``candidate_roots``' answer), the methods whose run can
    meet a write, a step or a backward; a class none of whose methods can is left out.

    A method can when its own text has one; when it names a function that can, or a
    class that runs or builds one (here, or ``imported``); when it uses one of its
    class's methods that can; when it takes something else from ``self`` (a layer
    ``__init__`` built) and ``__init__`` or the class body builds such a class, or an
    in-place layer; when it calls ``super()`` and a parent class can. A class whose
    construction writes (a tensor written in ``__init__``) keeps all its methods: its
    instance is what every one of them runs on."""
    lines = source_lines(source)  # numbered as the parser numbers them
    classes = {name: info for name, info in program.classes.items() if name in found}
    functions = {name for name in found if name not in program.classes}

    def text(first: int, last: int) -> str:
        return "\n".join(lines[first - 1:last])

    methods: dict[str, dict[str, _Method]] = {}
    body: dict[str, str] = {}  # __init__ and the class's own statements
    for name, info in classes.items():
        inside = {}
        spans = []
        for method_name, info_of in info.methods.items():
            node = info_of.node
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            last = node.end_lineno or node.lineno
            if method_name == "__init__":
                continue
            # The decorators and the body after its docstring: a class named in the
            # signature's annotations, or in prose, is not run by the method.
            decorators = "\n".join(text(d.lineno, d.end_lineno or d.lineno)
                                    for d in node.decorator_list)
            inside[method_name] = _Method(decorators + "\n" + text(_body_start(node), last),
                                          candidate)
            spans.append((first, last))
        methods[name] = inside
        start, end = info.node.lineno, info.node.end_lineno or info.node.lineno
        outside = [True] * (end - start + 1)
        for first, last in spans:
            outside[first - start:last - start + 1] = [False] * (last - first + 1)
        body[name] = "\n".join(line for line, keep in zip(lines[start - 1:end], outside,
                                                          strict=False) if keep)
    asked: dict[str, bool] = {}
    # Only imported names can be asked about (asking may read and parse their file).
    aliases = set(program.aliases) - set(program.classes) - set(program.functions)

    def elsewhere(words: set[str]) -> bool:
        if imported is None:
            return False
        for word in words & aliases:
            if word not in asked:
                asked[word] = imported(word)
            if asked[word]:
                return True
        return False

    built = {name for name in program.classes
             if name in body and BUILD_WRITES.search(body[name])}
    chosen: dict[str, set[str]] = {
        name: set(methods[name]) if name in built else set() for name in classes}
    parents = {name: {base.rpartition(".")[2] for base in info.bases}
               for name, info in classes.items()}
    body_words = {name: set(_WORD.findall(body[name])) for name in classes}
    grew = True
    while grew:
        grew = False
        running = {name for name, picked in chosen.items() if picked} | built
        for name in classes:
            # Asked only when a method's choice hangs on them, each at most once a round.
            parent_runs: bool | None = None
            layers_run: bool | None = None
            for method_name, method in methods[name].items():
                if method_name in chosen[name]:
                    continue
                picked = method.writes or bool(
                    method.words & ((functions | running) - {name})
                    or method.from_self & chosen[name])
                others = method.from_self - set(methods[name])
                if not picked and (others or method.calls_parent):
                    if parent_runs is None:
                        parent_runs = bool(parents[name] & running) or \
                            elsewhere(parents[name])
                    picked = parent_runs
                if not picked and others:
                    if layers_run is None:
                        words = body_words[name]
                        layers_run = bool(words & (running - {name})) or \
                            "inplace" in words or elsewhere(words)
                    picked = layers_run
                if picked or elsewhere(method.words):
                    chosen[name].add(method_name)
                    grew = True
    return {name: picked for name, picked in chosen.items() if picked}
