"""The errors gelucheck raises on purpose, and the one way it names valid choices.

The command line turns a :class:`GelucheckError` into a clear message and exit status 2;
anything else is a bug (ours or a library's) and surfaces with its traceback.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


class GelucheckError(Exception):
    """Base of every error gelucheck raises deliberately."""


class UsageError(GelucheckError):
    """A name, option or value the user gave that cannot be used."""


class ReferenceDataError(GelucheckError):
    """Reference data that is missing, unreadable or does not match its manifest."""


class ImplementationError(GelucheckError):
    """An implementation raised, returned the wrong dtype or shape, or changed its input;
    ``traceback``: where it raised, in its own code's frames, when known."""

    def __init__(self, message: str, traceback: str | None = None):
        super().__init__(message)
        self.traceback = traceback


def choose(kind: str, value, valid: Iterable) -> Any:
    """``valid[value]`` for a mapping, ``value`` for a collection that holds it; else a
    UsageError that names every valid choice."""
    if value in valid:
        return valid[value] if isinstance(valid, Mapping) else value
    raise UsageError(f"unknown {kind} {value!r}; valid choices: {', '.join(map(str, valid))}")


def refuse_repeats(option: str, values) -> None:
    """A value given twice is refused: measuring it once would silently drop the other."""
    seen = set()
    for v in values or ():
        if v in seen:
            raise UsageError(f"{option} {str(v)!r} is given twice")
        seen.add(v)
