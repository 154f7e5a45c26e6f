"""What the probe runs: a script, a function in a file, or the modules of a file.

The three spellings, on the command line, in ``[tool.gradguard.probe]`` and in the
server's API alike:

- ``path/to/script.py [-- args]``: run as ``__main__``, as ``python script.py args``;
- ``path/to/file.py::name``: call ``name()`` (no required arguments); if it returns
  ``(model, inputs)`` or ``(model, inputs, loss_fn)`` the probe runs the step itself;
  if ``name`` is an ``nn.Module`` subclass, it is built and fed as ``--auto`` does;
- ``path/to/file.py --auto``: build and run every ``nn.Module`` subclass of the file.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any


class TargetError(ValueError):
    """A target spelled wrong; the message says how to spell it."""


@dataclass(frozen=True)
class ProbeTarget:
    path: str
    name: str | None = None
    auto: bool = False
    argv: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.auto and self.name is not None:
            raise TargetError(f"{self.path}::{self.name}: --auto runs every module of a "
                              "file; name one (::Name) or use --auto, not both")
        if (self.auto or self.name is not None) and self.argv:
            raise TargetError("script arguments (after --) apply to a script target only")

    @property
    def kind(self) -> str:
        return "auto" if self.auto else "function" if self.name is not None else "script"

    def __str__(self) -> str:
        text = self.path if self.name is None else f"{self.path}::{self.name}"
        if self.auto:
            text += " --auto"
        if self.argv:
            text += " -- " + shlex.join(self.argv)
        return text

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "name": self.name, "auto": self.auto,
                "argv": list(self.argv)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProbeTarget:
        return cls(str(data["path"]), data.get("name"), bool(data.get("auto")),
                   tuple(data.get("argv") or ()))


def parse_target(text: str, auto: bool = False, argv: tuple[str, ...] = ()) -> ProbeTarget:
    """``"f.py"``, ``"f.py::main"``, ``"f.py --auto"``, ``"f.py -- --lr 3"``."""
    words = shlex.split(text)
    if not words:
        raise TargetError("empty probe target")
    head, rest = words[0], words[1:]
    extra: list[str] = []
    if "--" in rest:
        cut = rest.index("--")
        rest, extra = rest[:cut], rest[cut + 1:]
    for word in rest:
        if word == "--auto":
            auto = True
        else:
            raise TargetError(f"{text!r}: unexpected {word!r} (script arguments go after --)")
    path, sep, name = head.partition("::")
    if not path.endswith(".py"):
        raise TargetError(f"{head!r}: a probe target is a .py file, optionally with "
                          "::name (a function or nn.Module class in it)")
    if sep and not name.isidentifier():
        raise TargetError(f"{head!r}: {name!r} after :: is not a name in the file")
    return ProbeTarget(path, name or None, auto, tuple(argv) + tuple(extra))
