"""Argument parsing for the ``gradguard`` command."""

from __future__ import annotations

import argparse
import sys

from gradguard.config import Selection
from gradguard.rules import RULES


def _codes(text: str) -> frozenset[str]:
    codes = frozenset(c.strip().upper() for c in text.split(",") if c.strip())
    unknown = [c for c in codes if not any(rule.startswith(c) for rule in RULES)]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown rule code(s): {', '.join(sorted(unknown))}; known: {', '.join(RULES)}"
        )
    return codes


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gradguard", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="find in-place autograd hazards in files")
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text",
                       help="github: workflow commands, shown as annotations in GitHub Actions")
    check.add_argument("--select", type=_codes, default=None, metavar="CODES")
    check.add_argument("--ignore", type=_codes, default=frozenset(), metavar="CODES")
    check.add_argument("--uncertain", action="store_true",
                       help="also report hazards that hold only if tensors of unknown "
                       "origin require grad (warnings)")
    check.add_argument("--jobs", type=int, default=None,
                       help="worker processes (default: all cores)")
    check.add_argument("--fix", action="store_true",
                       help="rewrite files to remove the hazards that have a safe fix")
    check.add_argument("--diff", action="store_true",
                       help="print the fixes as a unified diff; change nothing")
    check.add_argument("--no-cache", action="store_true",
                       help="analyse every file again (results are otherwise kept in "
                       ".gradguard_cache/ and reused while files are unchanged)")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply exclude settings to files named on the command line too "
                       "(for pre-commit, which names every staged file)")
    explain = commands.add_parser(
        "explain", help="show how a finding's saved tensor reaches the write that breaks it")
    explain.add_argument("place", metavar="PATH:LINE",
                         help="the line of a finding (its in-place write), e.g. train.py:42")
    explain.add_argument("--uncertain", action="store_true",
                         help="also explain findings that are warnings because tensors of "
                         "unknown origin may require grad")
    probe = commands.add_parser(
        "probe", help="run code under torch and report what really overwrote a saved tensor"
    )
    from gradguard.probe.arguments import add_arguments

    add_arguments(probe)
    serve = commands.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", default=None,
                       help="listen on a TCP socket instead of stdio (HOST must be a "
                       "loopback address; PORT alone listens on 127.0.0.1); clients "
                       "must present a token, see --token-file")
    serve.add_argument("--token-file", metavar="PATH", default=None,
                       help="with --tcp: the token clients must present, read from PATH "
                       "(which only you may read), or written there if PATH does not "
                       "exist; default: $GRADGUARD_TOKEN, else a new token in a new "
                       "private file whose path is printed")
    serve.add_argument("--allow-remote", action="store_true",
                       help="with --tcp: allow listening on an address other machines "
                       "can reach")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == "check":
        from gradguard.cli.check import run_check

        selection = Selection(args.select, args.ignore, args.uncertain)
        try:
            return run_check(args.paths, args.format, selection, args.jobs, args.fix, args.diff,
                             args.force_exclude, not args.no_cache)
        except BrokenPipeError:  # `gradguard check ... | head`
            return 1
    if args.command == "explain":
        from gradguard.cli.explain import run_explain

        return run_explain(args.place, args.uncertain)
    if args.command == "probe":
        from gradguard.probe.command import run

        return run(args)
    if args.command == "serve":
        from gradguard.server.main import serve

        if args.tcp is None and (args.token_file is not None or args.allow_remote):
            parser.error("--token-file and --allow-remote go with --tcp")
        return serve(args.tcp, args.token_file, args.allow_remote)
    parser.error(f"unknown command {args.command}")
    return 2
