"""The language server under a burst of edits (issue 18's load figure).

    .venv/bin/python -m bench.lsp_burst [--edits 500] [--settle 5]

Over a real stdio session with ``gradguard serve``:

1. ``didOpen`` of the 10,191-line file of real model code (bench/real_trees.py), then a
   pause for the server to settle; its resident memory (VmRSS) then is the start.
2. 500 ``didChange`` notifications sent in one burst, as fast as the pipe takes them:
   a statement typed into a method one character at a time and deleted again, over and
   over (bench/lsp_latency.py's edits; the states that do not parse included).
3. How long after the burst's last notification the diagnostics of its version came,
   whether the server is still up (it answers a request), and its memory once it has
   been quiet for ``--settle`` seconds, against the start.

Targets: diagnostics of the last version <= 2 s after the burst; memory back within 10%
of the start.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
import time
from typing import Any

from lsprotocol import types

from bench.lsp_latency import Session, edit_plan
from bench.real_trees import ten_thousand_lines

TARGETS = {"last_s": 2.0, "memory_ratio": 1.10}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    path = ten_thousand_lines()
    text = path.read_text("utf-8")
    uri = path.as_uri()
    # Typing into the methods spread through the file, in turn, until there are enough.
    changes: list[types.TextDocumentContentChangePartial] = []
    for _, keys in itertools.cycle(edit_plan(text, 24)):
        if len(changes) >= args.edits:
            break
        changes += keys
    changes = changes[:args.edits]
    session = Session()
    await session.start()
    results: dict[str, Any] = {"lines": text.count("\n"), "edits": len(changes)}
    results["first_s"] = await session.open(uri, text)
    await asyncio.sleep(args.settle)
    results["rss_start_mb"] = session.rss_mb()

    last_version = len(changes) + 1
    future = session.arrival(uri, last_version)
    before = len(session.published)
    for change in changes:
        session.session.change(uri, change)
    await asyncio.sleep(0)  # hands the last write to the pipe
    burst_end = time.perf_counter()
    results["last_s"] = await asyncio.wait_for(future, 600) - burst_end
    results["publishes"] = len([p for p in session.published[before:] if p.uri == uri])
    results["rss_after_burst_mb"] = session.rss_mb()

    answer = await asyncio.wait_for(session.client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(uri))), 30)
    results["up"] = answer is not None
    await asyncio.sleep(args.settle)
    results["rss_end_mb"] = session.rss_mb()
    await session.stop()
    return results


def report(results: dict[str, Any]) -> str:
    ratio = results["rss_end_mb"] / results["rss_start_mb"]

    def meets(name: str, value: float) -> str:
        return "meets" if value <= TARGETS[name] else "MISSES"

    return "\n".join([
        f"file: {results['lines']} lines; first diagnostics {results['first_s']:.2f} s",
        f"burst: {results['edits']} didChange in one go; {results['publishes']} "
        f"publishDiagnostics for it; the last version's {results['last_s']:.2f} s after the "
        f"burst (target <= {TARGETS['last_s']:.0f} s: {meets('last_s', results['last_s'])})",
        f"server up after the burst (answers a request): {results['up']}",
        f"memory: {results['rss_start_mb']:.0f} MB before, "
        f"{results['rss_after_burst_mb']:.0f} MB right after, {results['rss_end_mb']:.0f} MB "
        f"once quiet: x{ratio:.3f} (target <= x{TARGETS['memory_ratio']:.2f}: "
        f"{meets('memory_ratio', ratio)})",
    ])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edits", type=int, default=500)
    parser.add_argument("--settle", type=float, default=5.0)
    args = parser.parse_args()
    results = asyncio.run(run(args))
    print(report(results))
    ratio = results["rss_end_mb"] / results["rss_start_mb"]
    ok = results["up"] and results["last_s"] <= TARGETS["last_s"] and \
        ratio <= TARGETS["memory_ratio"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
