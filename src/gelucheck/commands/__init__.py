"""The subcommands of the command line, one module each: ``add(subparsers)`` declares its
options and sets its handler, ``args.handler(args)`` runs it; options several commands share
are in :mod:`.options`. Listed here in the order ``gelucheck --help`` shows them."""
from __future__ import annotations

from ..study import command as study
from . import (
    bench,
    budgets,
    compare,
    consistency,
    drift,
    html,
    listing,
    measure,
    reference,
    search,
    sweep,
)

MODULES = (reference, listing, measure, html, consistency, drift, bench, compare, sweep,
           search, budgets, study)


def add_all(sub) -> None:
    for module in MODULES:
        module.add(sub)
