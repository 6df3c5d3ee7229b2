"""Backends and their implementations of Φ, GELU and the tanh form."""
from .base import Backend, Implementation, ImplementationError
from .registry import backend_names, check_backend, find, get_backend, implementations, load_user

__all__ = ["Backend", "Implementation", "ImplementationError", "backend_names", "check_backend",
           "find", "get_backend", "implementations", "load_user"]
