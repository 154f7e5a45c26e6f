"""Runs scripts under torch in one child process and records what they computed.

Every ``Tensor.backward`` call records the value it was called on (the loss) before it
runs, so a script that fails in backward still shows what its forward computed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

RUNNER = r"""
import json, sys
import torch

records = []
original_backward = torch.Tensor.backward

def recording_backward(self, *args, **kwargs):
    records.append(float(self.detach().double().sum()))
    return original_backward(self, *args, **kwargs)

torch.Tensor.backward = recording_backward
results = {}
for name, source in json.load(sys.stdin):
    records = []
    torch.manual_seed(0)
    try:
        exec(compile(source, name, "exec"), {"__name__": "__main__"})
        error = None
    except Exception as caught:
        error = f"{type(caught).__name__}: {caught}"
    results[name] = {"values": records, "error": error}
print(json.dumps(results))
"""


@dataclass(frozen=True)
class Outcome:
    values: list[float]
    error: str | None


def run_scripts(scripts: list[tuple[str, str]], timeout: float = 600) -> dict[str, Outcome]:
    done = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(scripts),
                          text=True, capture_output=True, timeout=timeout, check=True)
    raw = json.loads(done.stdout.strip().splitlines()[-1])
    return {name: Outcome(r["values"], r["error"]) for name, r in raw.items()}
