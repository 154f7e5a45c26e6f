"""``gradguard probe``: its arguments and entry point (torch is imported only when run)."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="TARGET")


def run(args: argparse.Namespace) -> int:
    print("gradguard probe: not available yet", file=sys.stderr)
    return 2
