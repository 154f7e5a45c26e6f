"""The project's own classes as the interpreter meets them: which class a user module
is, and what it derives from along a chain of the project's classes (a torch layer with
parameters, ``nn.Sequential``). Lookups only: each is recorded in the run's reads."""

from __future__ import annotations

from gradguard.analysis.interpreter.state import MAX_DEPTH, State
from gradguard.analysis.program import ClassInfo
from gradguard.analysis.values import UserModule


def class_of(state: State, spec: UserModule) -> ClassInfo | None:
    program = state.programs.get(spec.path)
    if program is None:
        return None
    return program.class_info(spec.class_name, state.run.reads)


def parent_of(state: State, info: ClassInfo) -> ClassInfo | None:
    """The first of a class's bases that is a class of the project."""
    program = state.program_at(info.path)
    parents = [program.class_info(base.rpartition(".")[2], state.run.reads)
               for base in info.bases]
    return next((parent for parent in parents if parent is not None), None)


def has_layer_parameters(state: State, spec: UserModule) -> bool:
    """Whether a user class derives from a torch layer with parameters (``class
    CatConv2d(nn.Conv2d)``): its ``weight`` and ``bias`` are that layer's."""
    info = class_of(state, spec)
    modules = state.facts.modules
    for _ in range(MAX_DEPTH):  # a chain of the project's own classes, bounded
        if info is None:
            return False
        module = next((modules[base] for base in info.bases if base in modules), None)
        if module is not None:
            return module.has_parameters
        info = parent_of(state, info)
    return False


def is_sequential(state: State, info: ClassInfo) -> bool:
    """Whether a user class derives from ``nn.Sequential`` (through its own classes)."""
    return derives_from(state, info, "torch.nn.Sequential")


def is_autograd_function(state: State, info: ClassInfo) -> bool:
    """Whether a user class is a custom ``torch.autograd.Function``."""
    return derives_from(state, info, "torch.autograd.Function")


def derives_from(state: State, info: ClassInfo, base: str) -> bool:
    """Whether a user class derives from the torch class ``base`` (through its own)."""
    current: ClassInfo | None = info
    for _ in range(MAX_DEPTH):
        if current is None:
            return False
        if base in current.bases:
            return True
        current = parent_of(state, current)
    return False
