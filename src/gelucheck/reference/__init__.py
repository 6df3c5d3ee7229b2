"""Correctly rounded references: mpmath of record, Arb as the independent check, stored data."""
from .mpref import correctly_rounded, gelu_minimum, gelu_tanh_minimum
from .store import ReferenceError, Table, load

__all__ = [
           "ReferenceError",
           "Table",
           "correctly_rounded",
           "gelu_minimum",
           "gelu_tanh_minimum",
           "load",
]
