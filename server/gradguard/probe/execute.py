"""Runs one target (script, function, or ``--auto``) under the tracker, in the child.

Whatever the user's code does (raise, ``sys.exit``, return odd values), ``run``
returns an ``Outcome``; exceptions that leave the user's code are offered to the
reporter first, which turns autograd's in-place errors into findings at the user's
line. The traceback printed to the (captured) stderr starts at the user's code, as
``python script.py`` would print it.
"""

from __future__ import annotations

import importlib.util
import os
import runpy
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch
from torch import nn

from gradguard.probe import auto
from gradguard.probe.findings import Reporter
from gradguard.probe.sites import UserFiles, site
from gradguard.probe.target import ProbeTarget

Emit = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class Outcome:
    status: str  # "ok" | "raised" | "exit" | "bad-target"
    error: str | None = None
    explained: bool = False  # a finding accounts for the error
    line: int | None = None
    path: str | None = None


class BadTarget(Exception):
    """The target cannot be run as spelled (no such file, name, or arguments)."""


class Executor:
    def __init__(self, reporter: Reporter, user_files: UserFiles, emit: Emit,
                 device: torch.device) -> None:
        self.reporter = reporter
        self.user_files = user_files
        self.emit = emit
        self.device = device

    def run(self, target: ProbeTarget) -> Outcome:
        path = os.path.abspath(target.path)
        try:
            if not os.path.isfile(path):
                raise BadTarget(f"no such file: {target.path}")
            if target.kind == "script":
                self._script(path, target.argv)
            else:
                module = self._load(path)
                if target.auto:
                    self._auto(module)
                else:
                    assert target.name is not None
                    self._function(module, target.name)
        except BadTarget as error:
            return Outcome("bad-target", str(error))
        except SystemExit as done:
            if done.code in (None, 0):
                return Outcome("ok")
            return Outcome("exit", f"the script exited with status {done.code}")
        except BaseException as error:  # the user's exception, KeyboardInterrupt included
            return self._raised(error)
        return Outcome("ok")

    def _raised(self, error: BaseException) -> Outcome:
        self._print_user_traceback(error)
        explained = self.reporter.exception(error)
        where = self.user_files.innermost_in_traceback(error.__traceback__)
        said = str(error).strip()  # MemoryError() says nothing: its name says it all
        text = f"{type(error).__name__}: {said}".splitlines()[0] if said \
            else type(error).__name__
        if where is None:
            return Outcome("raised", text, explained)
        at = site(where)
        return Outcome("raised", text, explained, at.line, at.path)

    def _print_user_traceback(self, error: BaseException) -> None:
        tb = error.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename not in self.user_files:
            tb = tb.tb_next
        traceback.print_exception(type(error), error, tb or error.__traceback__,
                                  file=sys.stderr)
        sys.stderr.flush()

    # -- the three forms ---------------------------------------------------------------

    def _script(self, path: str, argv: tuple[str, ...]) -> None:
        sys.argv = [path, *argv]
        sys.path.insert(0, os.path.dirname(path))
        runpy.run_path(path, run_name="__main__")

    def _load(self, path: str) -> ModuleType:
        stem = os.path.splitext(os.path.basename(path))[0]
        name = stem if stem.isidentifier() and stem not in sys.modules \
            else f"_gradguard_probe_{abs(hash(path))}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise BadTarget(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        sys.path.insert(0, os.path.dirname(path))
        spec.loader.exec_module(module)
        return module

    def _function(self, module: ModuleType, name: str) -> None:
        if not hasattr(module, name):
            raise BadTarget(f"{module.__file__} has no {name!r}")
        value = getattr(module, name)
        if isinstance(value, type) and issubclass(value, nn.Module):
            self._module_class(value)
            return
        if isinstance(value, nn.Module):
            self._module_instance(value, name)
            return
        if not callable(value):
            raise BadTarget(f"{name!r} is a {type(value).__name__}, not a function")
        required = auto._required_parameters(value, skip=0)
        if required:
            raise BadTarget(f"{name}() needs arguments ({', '.join(required)}); the probe "
                            "calls a function with none")
        torch.manual_seed(0)
        result = value()
        if isinstance(result, tuple) and len(result) in (2, 3) \
                and isinstance(result[0], nn.Module):
            model, inputs = result[0], result[1]
            loss_fn = result[2] if len(result) == 3 else None
            auto.train_step(model, inputs, loss_fn, self.device)
            self.emit("ran", {"what": f"{name}() -> {type(model).__name__}",
                              "detail": "forward, loss and backward"})
        else:
            self.emit("ran", {"what": f"{name}()", "detail": "called"})

    def _auto(self, module: ModuleType) -> None:
        classes = auto.module_classes(vars(module), module.__name__)
        if not classes:
            raise BadTarget(f"{module.__file__} defines no nn.Module subclass")
        for cls in classes:
            self._module_class(cls)

    def _module_class(self, cls: type[nn.Module]) -> None:
        torch.manual_seed(0)
        try:
            model = auto.build(cls)
        except auto.Skip as skip:
            self.emit("skipped", {"what": cls.__name__, "reason": str(skip)})
            return
        self._module_instance(model, cls.__name__)

    def _module_instance(self, model: nn.Module, what: str) -> None:
        arity = auto.forward_arity(model)
        if arity > 1:
            self.emit("skipped", {"what": what, "reason": f"forward needs {arity} inputs; "
                                  "name a function returning (model, inputs) instead"})
            return
        last = "no input tried"
        try:
            candidates = list(auto.examples(model, self.device))
        except auto.Skip as skip:
            self.emit("skipped", {"what": what, "reason": str(skip)})
            return
        for example in candidates:
            torch.manual_seed(0)
            try:
                auto.train_step(model, example.args, None, self.device)
            except auto.Skip as skip:
                self.emit("skipped", {"what": what, "reason": str(skip)})
                return
            except Exception as error:
                if self.reporter.exception(error):
                    self.emit("ran", {"what": what, "detail": f"input {example.description}; "
                                      "stopped by the hazard it found"})
                    return
                last = f"{type(error).__name__}: {str(error).strip().splitlines()[0]}"
                continue
            self.emit("ran", {"what": what, "detail": f"input {example.description}"})
            return
        self.emit("skipped", {"what": what, "reason": f"no inferred input worked "
                              f"({', '.join(e.description for e in candidates)}); last "
                              f"error: {last}"})
