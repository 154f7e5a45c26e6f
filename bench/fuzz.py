"""The fuzz suite's properties (tests/fuzz), run much longer, on fresh random inputs.

    python -m bench.fuzz [--check N] [--fix N] [--server N] [--seed S]

Prints how many inputs each property tried and how many failed (the first failure is
printed whole, and the script exits 1). The test run tries 40 of each, always the same.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from harness.fuzz_check import check_property, fix_property
from harness.fuzz_inputs import SOURCES, mutated_source
from harness.fuzz_server import edit_sequence_property, sessions
from harness.stdio import StdioClient


def run(name: str, strategy: st.SearchStrategy[Any], examples: int, random_seed: int,
        check: Callable[[Any], None]) -> bool:
    tried = 0

    @seed(random_seed)
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def property_(value: Any) -> None:
        nonlocal tried
        tried += 1
        check(value)

    started = time.perf_counter()
    try:
        property_()
        failed = 0
    except Exception:
        traceback.print_exc()
        failed = 1
    elapsed = time.perf_counter() - started
    print(f"{name:<8} {tried:>6} inputs tried  {failed} failed  {elapsed:7.1f} s", flush=True)
    return failed == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", type=int, default=2000)
    parser.add_argument("--fix", type=int, default=1000)
    parser.add_argument("--server", type=int, default=300)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    print(f"seed {args.seed}")
    ok = True
    with tempfile.TemporaryDirectory() as folder:
        ok &= run("check", SOURCES, args.check, args.seed,
                  lambda data: check_property(data, Path(folder)))
        ok &= run("fix", mutated_source(), args.fix, args.seed,
                  lambda data: fix_property(data, Path(folder)))
    client = StdioClient()
    try:
        ok &= run("server", sessions(), args.server, args.seed,
                  lambda session: edit_sequence_property(client, session))
        print(f"server   up at the end: {client.alive()}")
        ok &= client.alive()
    finally:
        client.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
