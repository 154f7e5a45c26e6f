"""The arguments of ``gradguard probe`` (parsed without importing the probe's runner,
so that ``gradguard check`` starts fast)."""

from __future__ import annotations

import argparse

from gradguard.probe.config import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("text", "json"), default=None)
    parser.add_argument("--timeout", type=float, default=None, metavar="S",
                        help=f"wall-clock seconds per target (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--memory-mb", type=int, default=None, metavar="MB",
                        help=f"address-space limit of the child (default "
                             f"{DEFAULT_MEMORY_MB}; 0: none)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default=None,
                        help="where --auto and (model, inputs) targets run (default cpu)")
    parser.add_argument("--auto", action="store_true",
                        help="build and run every nn.Module subclass of the file")
    parser.add_argument("--show-output", action="store_true",
                        help="print what the code printed (to stderr)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(parser)
    # One REMAINDER positional: argparse cannot mix options after a positional with a
    # `--` section, so `run` parses what follows TARGET itself (the same options).
    parser.add_argument("words", nargs=argparse.REMAINDER,
                        metavar="TARGET... [options] [-- SCRIPT ARGS]",
                        help="path.py (a script), path.py::name (a function or nn.Module "
                             "class), or path.py --auto; none: the entries of "
                             "[tool.gradguard.probe] in pyproject.toml")
