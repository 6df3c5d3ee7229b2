"""The subcommands of the command line, one module each: ``add(subparsers)`` declares its
options and sets its handler, ``args.handler(args)`` runs it; options several commands share
are in :mod:`.options`. Listed here in the order ``gelucheck --help`` shows them."""
from __future__ import annotations

import argparse

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
    _given_once(sub)


def _given_once(sub) -> None:
    """Every command's options, and its subcommands' (reference build, study moons), take
    each value once: a single-valued option refuses a second value, a repeatable one a value
    it holds already."""
    for command in sub.choices.values():
        for action in command._actions:
            if type(action) is argparse._StoreAction:
                action.__class__ = _StoreOnce
            elif type(action) is argparse._AppendAction:
                action.__class__ = _AppendOnce
            elif isinstance(action, argparse._SubParsersAction):
                _given_once(action)


class _StoreOnce(argparse._StoreAction):
    """A single-valued option given twice with two values is refused: argparse would keep
    the last one silently."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = f"_given_{self.dest}"
        if getattr(namespace, given, False) and getattr(namespace, self.dest) != values:
            parser.error(f"{option_string} is given twice ({getattr(namespace, self.dest)} "
                         f"and {values}): give it once")
        setattr(namespace, given, True)
        super().__call__(parser, namespace, values, option_string)


class _AppendOnce(argparse._AppendAction):
    """A repeatable option given the same value twice is refused: the value would be
    measured, trained or merged twice (or, deduplicated, one of the two dropped silently)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if values in (getattr(namespace, self.dest, None) or ()):
            parser.error(f"{option_string} {getattr(values, 'name', values)} is given twice: "
                         "give it once")
        super().__call__(parser, namespace, values, option_string)
