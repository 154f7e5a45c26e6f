"""Fix coverage on the corpus: how many of the hazards ``gradguard check`` reports on
tests/corpus carry a fix (per rule), and whether each offered fix, applied by
``check --fix`` to a copy of its file and run under torch, runs backward and computes
the same first loss as the original or as the maintainers' fix. The measuring is
``tools/fix_coverage.py``, which tests/test_fix_coverage.py uses too.

Usage::

    python -m bench.fix_coverage                 # coverage, then fixes verified under torch
    python -m bench.fix_coverage --no-torch      # coverage only
    python -m bench.fix_coverage --only leaf     # cases whose file or pattern has "leaf"
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tools.corpus import load_manifest
from tools.fix_coverage import Coverage, Verification, measure, verify_all

REPO = Path(__file__).resolve().parent.parent


def print_coverage(coverage: Coverage) -> None:
    print(f"  {'rule':<8} {'reported':>8} {'with fix':>8}")
    for code in sorted(coverage.reported):
        print(f"  {code:<8} {coverage.reported[code]:>8} {coverage.with_fix[code]:>8}")
    total, fixed = sum(coverage.reported.values()), sum(coverage.with_fix.values())
    print(f"  {'total':<8} {total:>8} {fixed:>8}")
    print(f"reported hazards {total}, with fix {fixed}, coverage {coverage.percent:.1f}%")
    for item in coverage.unfixed:
        print(f"  no fix: {item.file}:{item.line} {item.code}: {item.message}")
    for file, error in coverage.errors.items():
        print(f"  check failed on {file}: {error}")


def print_verifications(results: list[Verification]) -> None:
    fixes = sum(r.fixes for r in results)
    verified = sum(r.fixes for r in results if r.ok)
    files = sum(r.ok for r in results)
    print(f"fixes verified under torch {verified}/{fixes} "
          f"(in {files}/{len(results)} files)")
    for result in results:
        if not result.ok:
            print(f"  FAILED {result.case.file} ({result.fixes} fixes): {result.problem}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="cases whose file or pattern contains this")
    parser.add_argument("--no-torch", action="store_true",
                        help="coverage only; do not run the fixed scripts")
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args(argv)
    cases = [c for c in load_manifest()
             if not args.only or args.only in c.file or args.only in c.pattern]
    start = time.monotonic()
    coverage, findings = measure(cases)
    print(f"fix coverage of `gradguard check` on tests/corpus ({len(cases)} cases)")
    print_coverage(coverage)
    ok = not coverage.errors
    if not args.no_torch:
        results = verify_all(cases, findings, args.jobs)
        print_verifications(results)
        ok = ok and all(r.ok for r in results)
    print(f"({time.monotonic() - start:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
