"""Options and steps that several commands share: argparse types, the selection of
implementations (--backend, --impl and how a user's callable is called), the tables and
files every measuring command writes, and the consistency gate."""
from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterator, Sequence

from ..backends.registry import DEVICES, FRAMEWORKS, refuse_named_twice
from ..errors import UsageError
from ..formats import FORMATS
from ..functions import FUNCTIONS
from ..shared_options import (
    add_budgets_option,
    add_impl_options,
    add_kernel_tier_option,
    choices,
)


def backend_spec(text: str) -> str:
    """--backend NAME or NAME:IMPL, the backend's name checked at once (the implementation's
    when the backend loads)."""
    from ..backends import backend_names

    choices("backend", backend_names())(text.partition(":")[0])
    return text


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: need a whole number of at least 1")
    return value


def seconds(text: str) -> float:
    """A time limit: a number of seconds above 0 (NaN waited for ever, and 0 or less failed
    every call)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"{text!r}: need a number of seconds above 0")
    return value


def gate(text: str):
    from ..limits import parse_limit

    try:
        return parse_limit(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_selection(p, backend: bool = True) -> None:
    from ..backends import backend_names

    if backend:
        p.add_argument("--backend", action="append", metavar="NAME[:IMPL]",
                       type=backend_spec,
                       help=f"a backend: {', '.join(backend_names())}, or one implementation "
                       "of it, e.g. torch:F.gelu (repeatable; default: every available one)")
    p.add_argument("--function", action="append", type=choices("function", FUNCTIONS),
                   help=f"a function: {', '.join(FUNCTIONS)} (repeatable; default: all of the "
                   "backends'; with --impl, required: what your callable computes)")
    p.add_argument("--dtype", action="append", type=choices("dtype", FORMATS),
                   help=f"a dtype: {', '.join(FORMATS)} (repeatable; default: all)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write the tables as Markdown")
    add_budgets_option(p.add_argument, default_help=" (exit 1)")
    add_kernel_tier_option(p.add_argument)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_impl(p) -> None:
    """--impl (repeatable) and how a user's callable is called."""
    add_impl_options(p.add_argument)
    add_device_options(p)


def add_user_options(p) -> None:
    """How a user's --impl callable is called (a command that takes --impl its own way)."""
    p.add_argument("--framework", default="numpy", type=choices("framework", FRAMEWORKS),
                   help="what your callable takes and returns: numpy or torch (default: numpy)")
    add_device_options(p)


def add_device_options(p) -> None:
    """Where a torch callable's tensors live, and whether autograd gives its derivative."""
    p.add_argument("--device", default="cpu", type=choices("device", DEVICES),
                   help="where its tensors live: cpu or cuda (cuda needs --framework torch)")
    p.add_argument("--autograd", action="store_true",
                   help="your callable is the forward function: measure its derivative by "
                   "torch autograd (--framework torch, --function gelu_grad and the like)")


def add_levels(p) -> None:
    p.add_argument("--cpu-capability", metavar="LEVELS",
                   help="measure at each of these CPU dispatch levels (comma separated: "
                   "default, avx2, avx512 - those this machine runs), each in a process of its "
                   "own, labelled backend@level; outputs that differ between levels are listed")
    p.add_argument("--keep-outputs", metavar="FILE.npz", help=argparse.SUPPRESS)


def add_isolation(p) -> None:
    p.add_argument("--timeout", type=seconds, metavar="SECONDS",
                   help="run each implementation in a child process; a call that takes longer "
                   "is its error (so is a crash of the child)")
    p.add_argument("--isolate", action="store_true",
                   help="run each implementation in a child process, so that a crash (a "
                   "signal, an abort, running out of memory) is its error and the run goes on")


def user_options(args):
    from ..backends import UserOptions

    return UserOptions(getattr(args, "framework", "numpy"), getattr(args, "device", "cpu"),
                       getattr(args, "isolate", False), getattr(args, "timeout", None),
                       getattr(args, "autograd", False))


def _leave_out_compiled(chosen) -> None:
    """report's default: no implementation that compiles before its first call (torch.compile
    compiled for a minute before a new user saw any result; tinygrad compiles each kernel
    for each new length), each backend said left out with the options that bring it back."""
    compiled: dict[str, int] = {}
    for impl in chosen.implementations:
        if impl.warm_up is not None and impl.backend != "user":
            compiled[impl.backend] = compiled.get(impl.backend, 0) + 1
    if not compiled:
        return
    chosen.implementations = [i for i in chosen.implementations
                              if i.backend not in compiled or i.backend == "user"]
    for backend, count in compiled.items():
        what = "implementation compiles" if count == 1 else "implementations compile"
        print(f"left out: {backend} ({count} {what} before being measured, seconds to "
              f"minutes): add --all or --backend {backend}")


def selected(args) -> list:
    """The implementations --backend and --impl name (backends.implementations); ``report``
    measures every backend beside an --impl, the other commands only what is named."""
    from ..backends import implementations

    impls = getattr(args, "impl", None) or []
    named = bool(args.backend)  # a backend asked for by name must be measurable
    if args.command == "check" and not named and not impls and not args.function:
        raise UsageError("check: name what to measure: --backend NAME[:IMPL], --impl MOD:FN "
                         "(either repeatable, both together for one table), or --function F "
                         "(every installed backend's)")
    chosen = implementations(args.backend, impls, args.function, user_options(args),
                             every_backend=args.command == "report" or not impls)
    _said(args, chosen)
    _refuse_nothing(args, bool(chosen.implementations or chosen.unavailable))
    return chosen.implementations


def selected_by_backend(args, names: list[str] | None = None, own_impls: bool = True
                        ) -> Iterator[str | list]:
    """``report`` of every backend: what ``selected`` gives, one backend at a time, each
    named, then loaded (imported) only when the one before it has been measured - so that the
    first results are on screen before the last backend's framework has been imported - and the
    user's --impl last, as ``selected`` orders them (loaded first: a bad one is refused
    before any work). With ``names``, those backends alone (a part of the report, the other
    measured in a process of its own: commands/beside.py), the user's only if ``own_impls``."""
    from ..backends import backend_names, implementations

    impls = (getattr(args, "impl", None) or []) if own_impls else []
    own = implementations([], impls, args.function, user_options(args),
                          every_backend=False) if impls else None
    found = bool(own and own.implementations)
    # (importing the next backend in a thread while one is measured gained nothing measurable
    # on 2 cores: the imports hold the GIL)
    for name in backend_names() if names is None else names:
        yield name  # said on the progress bar while it loads
        chosen = implementations([name], [], args.function, user_options(args))
        _said(args, chosen)
        found |= bool(chosen.implementations or chosen.unavailable)
        if chosen.implementations:
            yield chosen.implementations
    if names is None:
        _refuse_nothing(args, found)
    if own and own.implementations:
        yield own.implementations


def streams(args) -> bool:
    """Whether ``report`` measures backend by backend (selected_by_backend): every backend,
    none named."""
    return args.command == "report" and not args.backend


def _said(args, chosen) -> None:
    """A selection's notes: what report leaves out, what a backend does not compute, the
    backends that are unavailable (an error where ``check`` names one)."""
    from ..report.tables import wrapped

    named = bool(args.backend)  # a backend asked for by name must be measurable
    if args.command == "report" and not named and not getattr(args, "all", False):
        _leave_out_compiled(chosen)
    for name, function, reason in chosen.not_applicable:
        print(wrapped(f"note: {name} has no {function}: {reason}"), file=sys.stderr)
    for name, reason in chosen.unavailable:
        if args.command == "check" and named:  # asked for by name: it cannot be measured
            raise UsageError(f"backend {name} is unavailable: {reason}")
        print(wrapped(f"note: backend {name} is unavailable: {reason}"), file=sys.stderr)


def _refuse_nothing(args, found: bool) -> None:
    """--function that no selected backend computes (nothing ``found``, not even a backend
    that is unavailable)."""
    if args.function and not found:
        raise UsageError("nothing to measure: no selected backend computes "
                         f"{', '.join(f.name for f in args.function)}")


def add_details(p) -> None:
    p.add_argument("--details", "-v", action="store_true",
                   help="after the summary, every table: per region, the worst inputs, the "
                   "minimum, the derivative's sign, the special inputs, fingerprints, drift "
                   "(the Markdown and HTML always hold them)")


def show(results, json_path, markdown_path, budgets=None, details: bool = True) -> dict:
    """Print the tables (with the environment; with ``budgets``, the summary first, and
    without ``details`` the summary alone) and write the JSON and Markdown asked for (the
    Markdown whole); returns the environment."""
    from ..report import environment, jsonio, tables

    env = environment.describe(results)
    print(tables.render(results, environment=env, budgets=budgets, details=details))
    if json_path:
        jsonio.write(results, json_path)
    if markdown_path:
        markdown_path.write_text(tables.render(results, "markdown", env, budgets=budgets))
    return env


def judge_consistency(args, results) -> int:
    """--budgets: each path's differing outputs against the recorded counts (a path not
    recorded - a dispatch level, say - may differ nowhere)."""
    from .. import budgets as budgets_mod
    from .. import judge

    if not args.budgets:
        return 0
    budgets = budgets_mod.load(args.budgets)
    status = 0
    for r in results:
        verdict = judge.judge_consistency(r, budgets)
        if verdict.missing:
            continue
        if verdict.failed or verdict.better:
            print(f"BUDGET {r.label}: {verdict.message()}")
        status |= verdict.failed
    return int(status)


def warn_stale(budgets, path, impls: Sequence = ()) -> None:
    from .. import budgets as budgets_mod

    users = [i for i in impls if i.backend == "user"]
    for line in budgets_mod.stale_warnings(budgets, path, users):
        print(f"warning: {line}", file=sys.stderr)


def record_and_gate(args, results, key: str, entry_of, line_of) -> int:
    """--write-budgets records each result's figures (``entry_of``) under ``key`` of its
    entry, which must exist; --budgets judges them (``line_of``: failed, the line to print).
    The sweep's and the search's gates; exit status 1 where one failed."""
    from .. import budgets as budgets_mod

    if args.write_budgets:
        recorded = budgets_mod.load(args.write_budgets)
        for r in results:
            entry = recorded.get(r)
            if entry is None or r.failure:
                print(f"warning: nothing recorded for {r.label}", file=sys.stderr)
            else:
                recorded.record(r.identity, {**entry, key: entry_of(r)})
        budgets_mod.write(args.write_budgets, recorded)
    status = 0
    if args.budgets:
        gate = budgets_mod.load(args.budgets)
        for r in results:
            failed, line = line_of(r, gate)
            if line:
                print(f"BUDGET {line}")
            status |= failed
    return status


def add_one_function(p, verb: str, dtype: str, dtype_help: str) -> None:
    """What the sweep and the search take: implementations (--backend, repeatable; --impl),
    one --function, one --dtype."""
    p.add_argument("--backend", action="append", default=[], metavar="NAME[:IMPL]",
                   help="a backend, or one implementation of it (repeatable)")
    add_impl(p)
    p.add_argument("--function", required=True, type=choices("function", FUNCTIONS),
                   help=f"the function to {verb}: {', '.join(FUNCTIONS)}")
    p.add_argument("--dtype", default=FORMATS[dtype], type=choices("dtype", FORMATS),
                   help=dtype_help)


def add_engine(p, tasks: str) -> None:
    """Where the sweep's and the search's tasks run: --workers, --engine, --scheduler."""
    import os

    from ..sweep import ENGINES

    p.add_argument("--workers", type=positive, default=os.cpu_count() or 1,
                   help="processes (default: the number of cores)")
    p.add_argument("--engine", default="local", type=choices("engine", ENGINES),
                   help=f"where the {tasks} run: local (a pool of --workers processes, the "
                   "default) or dask (a local Dask cluster of --workers processes)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help=f"run the {tasks} on the Dask cluster whose scheduler is at ADDRESS "
                   "(tcp://host:port; implies --engine dask): every worker needs the same "
                   "gelucheck, libraries and kernel tier, and is refused otherwise")


def named_specs(args, what: str) -> list:
    """The implementations --backend and --impl name, as the workers rebuild them; none is
    a usage error."""
    from ..sweep.worker import Spec

    refuse_named_twice(args.backend, args.impl or [])
    specs = [Spec(kind="builtin", impl=b, function=args.function.name) for b in args.backend]
    specs += [Spec(kind="user", impl=spec, function=args.function.name,
                   framework=args.framework, device=args.device, autograd=args.autograd)
              for spec in args.impl or []]
    if not specs:
        raise UsageError(f"name what to {what}: --backend NAME[:IMPL] or --impl MOD:FN")
    return specs
