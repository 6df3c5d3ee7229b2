"""Backends and their implementations of Φ, GELU and the tanh form."""
from ..errors import ImplementationError
from .base import Backend, Implementation
from .registry import (
                       Selection,
                       backend_names,
                       backend_version,
                       find,
                       get_backend,
                       load_user,
                       select,
)

__all__ = ["Backend", "Implementation", "ImplementationError", "Selection", "backend_names",
           "backend_version", "find", "get_backend", "load_user", "select"]
