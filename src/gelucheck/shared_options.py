"""Options that the command line and the pytest plugin share, defined once for both
(pytest-benchmark's ``add_*_options(addoption, prefix)`` pattern): each function takes an
``addoption`` - an argparse parser's ``add_argument`` or a pytest option group's
``addoption``, which take the same keywords - and a prefix ("gelucheck-" in the plugin, whose
options are all prefixed so that they coexist with a project's own)."""
from __future__ import annotations

import argparse
from collections.abc import Callable

from .backends.registry import FRAMEWORKS
from .errors import UsageError, choose
from .ulp import is_ulp_limit

AddOption = Callable[..., object]


def choices(kind: str, valid):
    """An argparse type: the object a name stands for (the name itself for a plain list),
    resolved here once; an unknown name is a usage error that lists the valid ones."""
    def parse(value: str):
        try:
            return choose(kind, value, valid)
        except UsageError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    parse.__name__ = kind
    return parse


def ulps(text: str) -> float:
    """An argparse type: a number of ulps, 0 or more - inf allowed (no limit), NaN not (every
    comparison with it is false: it would pass everything)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not is_ulp_limit(value):
        raise argparse.ArgumentTypeError(f"{text!r}: need a number of ulps, 0 or more")
    return value


def add_impl_options(addoption: AddOption, prefix: str = "") -> None:
    """--impl (a user's callable, repeatable) and --framework (what it takes and returns)."""
    addoption(f"--{prefix}impl", action="append", default=None, metavar="MOD:FN",
              help="your callable, e.g. mypkg.act:gelu (repeatable; imported from the current "
              f"folder too), of the --{prefix}function it computes")
    addoption(f"--{prefix}framework", default="numpy", type=choices("framework", FRAMEWORKS),
              help="what your callable takes and returns: numpy arrays or torch tensors "
              "(default: numpy)")


def add_budgets_option(addoption: AddOption, prefix: str = "", default_help: str = "") -> None:
    """--budgets FILE: the recorded budgets a run is judged against."""
    addoption(f"--{prefix}budgets", default=None, metavar="FILE",
              help="judge the results against this budgets file: worse than recorded fails, "
              f"and so does a recorded defect that no longer shows{default_help}")


def add_range_option(addoption: AddOption, option: str = "--range") -> None:
    """The float32 encodings an exhaustive sweep covers (sweep.runner.parse_range reads it)."""
    addoption(option, default=None, metavar="START:STOP",
              help="float32 encodings to sweep, in hex, STOP excluded (default: all 2^32)")


def add_kernel_tier_option(addoption: AddOption, prefix: str = "") -> None:
    """--kernel-tier: cap the libraries' CPU kernels at a recorded tier before they load, so
    that every x86 machine with the tier's instructions gives the same figures (tiers.py)."""
    from .tiers import CHOICES

    addoption(f"--{prefix}kernel-tier", action="append", default=None,
              type=choices("kernel tier", CHOICES),
              help=f"run torch's, oneDNN's, MKL's and XLA's CPU kernels at this tier: "
              f"{', '.join(CHOICES)} (native: the CPU's own; default: as the environment "
              "sets them; given twice with two values, refused). Results are judged against "
              "the budgets of the tier they ran on")


def one_kernel_tier(option: str, values) -> str | None:
    """The tier a run is capped at: the last given; two different ones are refused (one
    would be dropped)."""
    distinct = list(dict.fromkeys(values or ()))
    if len(distinct) > 1:
        raise UsageError(f"{option} is given as {' and '.join(distinct)}: give one")
    return distinct[0] if distinct else None
