"""The released packages of tests/wild other than transformers, as scripts/test.sh installs
them: ``tests/wild/requirements.txt``, with ``--no-deps``, into ``<venv>/wild-packages``.

They live apart from the test venv's site-packages, on ``sys.path`` only once a test here
asks for one, because

- installed without their dependency trees (hundreds of packages for espnet and mmdet),
  they would leave the venv with requirements pip reports as broken;
- torchvision from the registry is built for torch's CUDA build: beside the CPU wheel its
  compiled operators do not load, and its ``import`` then raises a RuntimeError (see
  ``_declare_torchvision_operators``). In site-packages, every ``import torchvision`` of
  the rest of the suite (user code the probe runs, corpus programs run under torch) would
  raise that instead of an ImportError, and transformers would take torchvision as there.

A test that needs them skips where the folder is missing (a venv set up by hand), but
fails under CI, where scripts/test.sh always installs them: a reproduction that skips in
CI would show nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

FOLDER = Path(sys.prefix) / "wild-packages"
# Kept for the whole session: a library's definitions last as long as it does.
_TORCHVISION = torch.library.Library("torchvision", "FRAGMENT")


def _declare_torchvision_operators() -> None:
    """torchvision 0.28 imports without its compiled operators (they raise when called,
    ``torchvision.extension._has_ops()``), except for two lines of its
    ``_meta_registrations.py``: ``register_fake("torchvision::nms")`` and ``"::qnms"`` run
    whether or not the library loaded, and fail as the operators do not exist. Declaring
    their schemas, as the library would, lets the released Python package import as it
    intends without its operators. Nothing here calls them (timm's FasterNet uses none of
    torchvision); where the library does load (torch's CUDA build) nothing is declared."""
    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return
    library = Path(next(iter(spec.submodule_search_locations))) / "_C.so"
    try:
        torch.ops.load_library(str(library))
        return
    except OSError:
        pass
    for name in ("nms", "qnms"):
        _TORCHVISION.define(f"{name}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")


def _on_path() -> None:
    if not FOLDER.is_dir():
        reason = (f"{FOLDER} is missing: scripts/test.sh installs tests/wild/requirements.txt "
                  "there")
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    if str(FOLDER) not in sys.path:
        # After site-packages: what the venv has (torch, numpy) is what the tests run on.
        sys.path.append(str(FOLDER))
        importlib.invalidate_caches()
        _declare_torchvision_operators()


def released(name: str) -> ModuleType:
    """A released module, imported as its users import it."""
    _on_path()
    return importlib.import_module(name)


def released_file(name: str) -> ModuleType:
    """A released module loaded from its own file, under its own dotted name, without
    running its packages' ``__init__`` (which import what the test venv lacks: mmdet's
    needs mmcv's compiled operators, ``torchgeo.models`` all its models' dependencies).
    The top package is set up bare, its folder the released one, so that the module's
    own imports of its package (``from mmdet.registry import ...``) load the released
    files they name."""
    _on_path()
    if name in sys.modules:
        return sys.modules[name]
    top = name.split(".")[0]
    spec = importlib.util.find_spec(top)
    assert spec is not None and spec.submodule_search_locations, f"{top} is not installed"
    folder = Path(next(iter(spec.submodule_search_locations)))
    if top not in sys.modules:
        package = ModuleType(top)
        package.__path__ = [str(folder)]
        sys.modules[top] = package
    path = folder.joinpath(*name.split(".")[1:]).with_suffix(".py")
    loaded = importlib.util.spec_from_file_location(name, path)
    assert loaded is not None and loaded.loader is not None
    module = importlib.util.module_from_spec(loaded)
    sys.modules[name] = module  # inspect and dataclasses look modules up by name
    loaded.loader.exec_module(module)
    return module
