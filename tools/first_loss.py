"""Run a script as ``__main__`` and record the first loss it runs backward on.

Usage: ``python tools/first_loss.py RECORD.json SCRIPT.py`` (run it with the script's
folder as the working directory). RECORD.json gets::

    {"loss": [...] or null, "backwards": N, "error": "Type: message" or null}

``loss`` is the value of the first tensor ``backward`` was called on, taken *before*
autograd runs, so a script that fails in its first backward still shows what its
forward computed. ``backwards`` counts the backward calls that completed; ``error`` is
the exception the script ended with. The random generators are seeded first, so that
an original, its fix and the maintainers' fix draw the same numbers (a script that
seeds them itself does so again).

Run in a subprocess of its own (tools/fix_coverage.py does): it patches torch.
"""

from __future__ import annotations

import json
import os
import random
import runpy
import sys
import traceback
from typing import Any

# A loss with more elements than this is recorded by its sum and sum of squares.
MAX_VALUES = 64


def summary(tensor: Any) -> list[float]:
    """A tensor's values, or two sums of them when it is large."""
    values = tensor.detach().double().flatten()
    if values.numel() <= MAX_VALUES:
        return [float(v) for v in values.tolist()]
    return [float(values.sum()), float((values * values).sum())]


def main(record_path: str, script: str) -> int:
    import torch

    record: dict[str, Any] = {"loss": None, "backwards": 0, "error": None}
    original = torch.autograd.backward

    # Tensor.backward calls torch.autograd.backward, so this sees both spellings.
    def recording(tensors: Any, *args: Any, **kwargs: Any) -> Any:
        if record["loss"] is None:
            first = tensors[0] if isinstance(tensors, (tuple, list)) else tensors
            record["loss"] = summary(first)
        result = original(tensors, *args, **kwargs)
        record["backwards"] += 1
        return result

    torch.autograd.backward = recording
    random.seed(0)
    torch.manual_seed(0)
    try:
        import numpy

        numpy.random.seed(0)
    except ImportError:
        pass
    # The script's folder is where its own imports are found, as ``python SCRIPT`` has it.
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    sys.argv = [script]
    status = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        if stop.code not in (None, 0):
            record["error"] = f"SystemExit: {stop.code}"
            status = 1
    except BaseException as error:  # noqa: BLE001 - whatever the script raised is the result
        lines = traceback.format_exception_only(type(error), error)
        record["error"] = lines[-1].strip()[:500]
        status = 1
    with open(record_path, "w", encoding="utf-8") as handle:
        json.dump(record, handle)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
