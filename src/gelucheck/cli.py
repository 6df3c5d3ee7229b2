"""gelucheck: how accurate is each GELU and Gaussian CDF, in ulps, per backend and dtype."""
from __future__ import annotations

import argparse
import os
import sys

from .errors import GelucheckError


def build_parser() -> argparse.ArgumentParser:
    from . import __version__
    from .commands import add_all

    parser = argparse.ArgumentParser(prog="gelucheck", description=__doc__)
    parser.add_argument("--version", action="version", version=f"gelucheck {__version__}")
    add_all(parser.add_subparsers(dest="command", required=True))
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        # (the parser names the backends: none declared is said plainly too)
        args = build_parser().parse_args(argv)
        args.argv = argv
        from .shared_options import one_kernel_tier

        tier = one_kernel_tier("--kernel-tier", getattr(args, "kernel_tier", None))
        if tier:  # before any backend loads
            from . import tiers

            tiers.apply(tier)
        return args.handler(args)
    except GelucheckError as exc:  # bad input, damaged data: said plainly; anything else is a bug
        print(f"gelucheck: error: {exc}", file=sys.stderr)
        return 2


def run() -> None:
    """The command line (the ``gelucheck`` script, ``python -m gelucheck``): main, then out
    without the interpreter's teardown - torch's and numba's cost a large part of a short
    command (docs/design.md, Errors). The output is
    flushed and the exit handlers run (multiprocessing's, the isolated children's cleanup,
    logging's), and the sweep's fork server ended, before the process ends with main's status;
    a bug's traceback takes the usual way."""
    import atexit

    status: int | str | None
    try:
        status = main()
    except SystemExit as exc:  # argparse's: --help, a bad option
        status = exc.code
    if not isinstance(status, int):  # sys.exit's rules: None is 0, anything else printed, 1
        if status is not None:
            print(status, file=sys.stderr)
        status = 0 if status is None else 1
    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()  # (no public name: sys.exit runs the same at the teardown)
    if (runner := sys.modules.get("gelucheck.sweep.runner")) is not None:
        runner.end_fork_server()  # where a sweep or search started one
    os._exit(status)


if __name__ == "__main__":
    run()
