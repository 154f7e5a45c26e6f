"""What the probe costs: a small CNN training step, plain, under the probe, and under
``torch.autograd.detect_anomaly``, in the same process and the same run.

    .venv/bin/python -m bench.probe_overhead [--repeat 30] [--batch 16] [--size 32] [--threads 1]

The step is forward, a cross-entropy loss, backward and an SGD step of a small
conv/batch-norm/ReLU(inplace=True) network. Each variant runs ``--repeat`` times after
a warm-up, interleaved (plain, probe, anomaly, plain, ...) so that the load of a shared
machine falls on all three alike; the figures are medians of the wall time (the
target) and of the thread's CPU time (steadier when other processes compete for the
cores; one torch thread by default for the same reason). "probe" is the in-process
instrumented step: the dispatch mode, the saved-tensor hooks and the module hooks the
child installs, with its finding reporter. Separately, the cost of starting a probe
(spawning the child, importing torch, installing the hooks, running an empty script)
is measured with ``gradguard.probe.runner.run_probe``, beside a bare
``python -c "import torch"``. Targets: probe <= 3x plain, and no slower than
detect_anomaly (which only names the forward op whose backward failed).
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

import torch
from torch import nn

from gradguard.probe.findings import Reporter
from gradguard.probe.runner import run_probe
from gradguard.probe.sites import UserFiles, library_dirs
from gradguard.probe.tracker import Tracker


def small_cnn() -> nn.Module:
    def block(c_in: int, c_out: int, stride: int) -> list[nn.Module]:
        return [nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False), nn.BatchNorm2d(c_out),
                nn.ReLU(inplace=True)]

    return nn.Sequential(*block(3, 16, 1), *block(16, 16, 1), *block(16, 32, 2),
                         *block(32, 32, 1), *block(32, 64, 2), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Dropout(0.1), nn.Linear(64, 10))


def make_step(batch: int, size: int) -> Callable[[], None]:
    torch.manual_seed(0)
    model = small_cnn().train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(batch, 3, size, size)
    labels = torch.randint(0, 10, (batch,))
    loss_fn = nn.CrossEntropyLoss()

    def step() -> None:
        optimizer.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()

    return step


def probe_context() -> AbstractContextManager[object]:
    """The instruments the probe's child installs, as it installs them."""
    here = os.path.dirname(os.path.abspath(__file__))
    user_files = UserFiles([*library_dirs(), os.path.dirname(torch.__file__)], [here])
    reporter: list[Reporter] = []
    tracker = Tracker(user_files, lambda e: reporter[0].clobber(e),
                      lambda e: reporter[0].stale(e), lambda f: reporter[0].release(f))
    reporter.append(Reporter(tracker, user_files, lambda kind, data: None, itertools.count()))
    return tracker.installed()


def anomaly_context() -> AbstractContextManager[object]:
    return torch.autograd.detect_anomaly()


def time_once(step: Callable[[], None], context: Callable[[], AbstractContextManager[object]]
              ) -> tuple[float, float]:
    """Wall time and this thread's CPU time of one step (installing the hooks excluded:
    the child installs them once per run, not per step)."""
    with context():
        wall, cpu = time.perf_counter(), time.thread_time()
        step()
        return time.perf_counter() - wall, time.thread_time() - cpu


def startup_cost() -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as directory:
        script = os.path.join(directory, "empty.py")
        with open(script, "w") as file:
            file.write("import torch\n")
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True,
                       capture_output=True)
        bare = time.perf_counter() - start
        start = time.perf_counter()
        result = run_probe(script, cwd=directory)
        probe = time.perf_counter() - start
        if result.error:
            raise SystemExit(f"probe start failed: {result.error}")
    return bare, probe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch intra-op threads (1: steadier on a shared machine)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")

    step = make_step(args.batch, args.size)
    variants: dict[str, Callable[[], AbstractContextManager[object]]] = {
        "plain": nullcontext, "probe": probe_context, "detect_anomaly": anomaly_context}
    walls: dict[str, list[float]] = {name: [] for name in variants}
    cpus: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(3):  # warm-up: allocator, kernels, lazy imports
        for context in variants.values():
            time_once(step, context)
    for _ in range(args.repeat):
        for name, context in variants.items():
            wall, cpu = time_once(step, context)
            walls[name].append(wall)
            cpus[name].append(cpu)
    wall_of = {name: statistics.median(values) for name, values in walls.items()}
    cpu_of = {name: statistics.median(values) for name, values in cpus.items()}
    print(f"small CNN training step, batch {args.batch}, {args.size}x{args.size}, "
          f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), "
          f"median of {args.repeat}")
    print(f"  {'':15s} {'wall':>10s} {'ratio':>7s}   {'cpu':>10s} {'ratio':>7s}")
    for name in variants:
        print(f"  {name:15s} {wall_of[name] * 1000:8.2f}ms {wall_of[name] / wall_of['plain']:6.2f}x"
              f"   {cpu_of[name] * 1000:8.2f}ms {cpu_of[name] / cpu_of['plain']:6.2f}x")
    ratio = wall_of["probe"] / wall_of["plain"]
    versus = wall_of["probe"] / wall_of["detect_anomaly"]
    print(f"  wall: probe/plain x{ratio:.2f} (target <= 3), probe/detect_anomaly "
          f"x{versus:.2f} (target <= 1)")
    bare, probe = startup_cost()
    print(f"starting a probe: {probe:.2f} s (child process, torch import, hooks, an empty "
          f"script); python -c 'import torch' alone: {bare:.2f} s")


if __name__ == "__main__":
    main()
