"""Running programs under torch, to judge that a transformation kept what each computes.

A program is run as ``python ENTRY`` would run it (``__main__``, its folder first on
``sys.path`` and as the working directory), each in a process of its own forked from a
runner that imported torch once: thousands of runs cost seconds each, not the import. As
tests/torchrun.py does, every ``Tensor.backward`` call records the value it is called on
before it runs, so what the forward computed is compared too, not only how the run ended.

The outcome is the in-place RuntimeError kind (``saved-modified``, ``leaf``, ``view``,
tools/corpus.py's ``ERROR_TEXTS``), ``clean``, or ``other: ...``. A silent positive (a write
through ``.data``) is run with ``.data`` read as ``.detach()`` (the same storage under
autograd's version counter), as tests/test_families.py judges it: the write then raises.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.metamorphic.programs import POSITIVE, Subject, write
from tests.metamorphic.variants import Variant
from tools.corpus import ERROR_TEXTS

TIMEOUT = 120  # seconds a program may run; corpus scripts take a few

RUNNER = r"""
import json, os, signal, sys, warnings
warnings.simplefilter("ignore")
import torch

ERROR_TEXTS = json.loads(sys.argv[1])
TIMEOUT = int(sys.argv[2])
original_data = torch.Tensor.data


def classify(error):
    message = f"{type(error).__name__}: {error}"
    if isinstance(error, RuntimeError):
        for kind, texts in ERROR_TEXTS.items():
            if any(text in message for text in texts):
                return kind
    return "other: " + message[:300]


def run(entry, detach):
    import random
    import runpy
    folder = os.path.dirname(entry)
    os.chdir(folder)
    sys.path.insert(0, folder)
    sys.argv = [entry]
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    random.seed(0)
    torch.manual_seed(0)
    values = []
    backward = torch.Tensor.backward

    def recording(self, *args, **kwargs):
        values.append(float(self.detach().double().sum()))
        return backward(self, *args, **kwargs)

    torch.Tensor.backward = recording
    if detach:
        torch.Tensor.data = property(lambda self: self.detach(),
                                     torch._C.TensorBase.data.__set__)
    signal.alarm(TIMEOUT)
    try:
        runpy.run_path(entry, run_name="__main__")
        outcome = "clean"
    except SystemExit as exit:
        outcome = "clean" if exit.code in (None, 0) else f"other: exit {exit.code}"
    except BaseException as error:
        outcome = classify(error)
    return {"outcome": outcome, "values": values}


results = {}
for name, entry, detach in json.load(sys.stdin):
    read, written = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            result = run(entry, detach)
        except BaseException as error:
            result = {"outcome": f"other: runner {error!r}", "values": []}
        with os.fdopen(written, "w") as out:
            json.dump(result, out)
        os._exit(0)
    os.close(written)
    with os.fdopen(read) as got:
        text = got.read()
    os.waitpid(pid, 0)
    results[name] = json.loads(text) if text else {"outcome": "other: killed", "values": []}
sys.stdout.write(json.dumps(results))
"""


@dataclass(frozen=True)
class Run:
    outcome: str  # an ERROR_TEXTS kind, "clean" or "other: ..."
    values: tuple[float, ...]  # what each backward was called on


def run_programs(programs: Sequence[tuple[str, Variant, bool]], jobs: int = 2,
                 ) -> dict[str, Run]:
    """Run each (name, program, detach) under torch, ``jobs`` runners at once."""
    with tempfile.TemporaryDirectory(prefix="gradguard-judge-") as scratch:
        root = Path(scratch)
        work = [(name, str(write(v.texts, v.entry, root / str(i))), detach)
                for i, (name, v, detach) in enumerate(programs)]
        shares = [work[i::jobs] for i in range(jobs)]
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            parts = list(pool.map(_runner, [s for s in shares if s]))
    return {name: Run(r["outcome"], tuple(r["values"])) for part in parts
            for name, r in part.items()}


def _runner(work: list[tuple[str, str, bool]]) -> dict[str, dict[str, Any]]:
    done = subprocess.run([sys.executable, "-c", RUNNER, json.dumps(ERROR_TEXTS),
                           str(TIMEOUT)], input=json.dumps(work), capture_output=True,
                          text=True, check=True, env=_env())
    result: dict[str, dict[str, Any]] = json.loads(done.stdout)
    return result


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = "1"  # runs side by side on few cores
    env["PYTHONWARNINGS"] = "ignore"
    return env


def detach_mode(subject: Subject) -> bool:
    return subject.silent and subject.kind == POSITIVE


def expected(subject: Subject, run: Run) -> bool:
    """Whether the original behaves as its label says under this runner."""
    if subject.kind == POSITIVE:
        return run.outcome in ERROR_TEXTS
    return run.outcome == "clean"


def same(original: Run, transformed: Run) -> str | None:
    """None when the transformed program ended as the original did, having computed the
    same values; else what differs."""
    if transformed.outcome != original.outcome:
        return f"{original.outcome} became {transformed.outcome}"
    if len(original.values) != len(transformed.values) or not all(
            math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-5) or (math.isnan(a) and math.isnan(b))
            for a, b in zip(original.values, transformed.values, strict=True)):
        return f"backward values {list(original.values)} became {list(transformed.values)}"
    return None
