"""What "probe this file" runs, and where the editor offers it (code lenses).

Asked to probe a file, the server runs the entries of ``[tool.gradguard.probe]`` that
name it; failing those, the file as a script if it has an ``if __name__ == "__main__":``
block (what the user runs it for); failing that, its ``nn.Module`` classes (``--auto``).
A lens names one thing: a module class (``file.py::Name``), the script, or an entry.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from gradguard.analysis.blocks import split_blocks
from gradguard.probe.config import ProbeConfig
from gradguard.probe.target import ProbeTarget, TargetError

AUTO = "--auto"
SCRIPT = "__main__"

_MAIN_GUARD = re.compile(r"""if\s+__name__\s*==\s*(['"])__main__\1\s*:""")
_CLASS = re.compile(r"class\s+(\w+)\s*(?:\((.*?)\))?\s*:", re.DOTALL)
_FUNCTION = re.compile(r"(?:async\s+)?def\s+(\w+)\s*\(")
_DECORATOR = re.compile(r"(?:@[^\n]*\n)*")


def targets_for(path: str, name: str | None, text: str,
                config: ProbeConfig | None) -> list[ProbeTarget]:
    """The targets to run for ``path`` (absolute), or for one ``name`` in it.

    ``name``: a function or class of the file, ``"__main__"`` (the file as a script) or
    ``"--auto"`` (every module class); None: the file's entries, else its script, else
    ``--auto``. Raises ``TargetError`` for a name that is none of those."""
    if name == AUTO:
        return [ProbeTarget(path, auto=True)]
    if name == SCRIPT:
        return [ProbeTarget(path)]
    if name is not None:
        if not name.isidentifier():
            raise TargetError(f"{name!r} is not a name of a function or class in the file")
        return [ProbeTarget(path, name)]
    entries = entries_for(path, config)
    if entries:
        return entries
    if has_main_guard(text):
        return [ProbeTarget(path)]
    return [ProbeTarget(path, auto=True)]


def entries_for(path: str, config: ProbeConfig | None) -> list[ProbeTarget]:
    """The configured entries that run ``path``, with absolute paths."""
    if config is None:
        return []
    found = []
    for entry in config.entries:
        absolute = os.path.normpath(os.path.join(config.root, entry.path))
        if absolute == os.path.normpath(path):
            found.append(ProbeTarget(absolute, entry.name, entry.auto, entry.argv))
    return found


def has_main_guard(text: str) -> bool:
    return any(_MAIN_GUARD.match(block.text) for block in split_blocks(text))


@dataclass(frozen=True)
class Lens:
    line: int  # 0-based
    title: str
    name: str  # the second argument of the gradguard.probe command


def _is_module_base(base: str, modules: set[str]) -> bool:
    base = base.strip()
    last = base.rsplit(".", 1)[-1]
    if last in modules or last.endswith("Module"):
        return True
    # nn.Conv2d, torch.nn.Sequential, ...: a subclass of a torch layer is a module.
    return re.fullmatch(r"(?:torch\.)?nn\.[A-Z]\w*", base) is not None


def probe_lenses(text: str, path: str, config: ProbeConfig | None) -> list[Lens]:
    """Where to offer "Run autograd probe" in a file, top-level definitions only."""
    entries = {entry.name: entry for entry in entries_for(path, config) if entry.name}
    modules: set[str] = set()
    lenses = []
    for block in split_blocks(text):
        head = _DECORATOR.match(block.text)
        start = head.end() if head else 0
        line = block.start_line - 1 + block.text.count("\n", 0, start)
        rest = block.text[start:]
        if (match := _CLASS.match(rest)) is not None:
            name, bases = match.group(1), match.group(2) or ""
            if any(_is_module_base(b, modules) for b in bases.split(",") if "=" not in b):
                modules.add(name)
                lenses.append(Lens(line, "Run autograd probe", name))
            elif name in entries:
                lenses.append(Lens(line, "Run autograd probe (entry)", name))
        elif (match := _FUNCTION.match(rest)) is not None and match.group(1) in entries:
            lenses.append(Lens(line, "Run autograd probe (entry)", match.group(1)))
        elif _MAIN_GUARD.match(rest):
            lenses.append(Lens(line, "Run autograd probe on this script", SCRIPT))
    return lenses
