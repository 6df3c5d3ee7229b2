"""Backends and their implementations of Φ, GELU and the tanh form."""
from ..errors import ImplementationError
from .base import Backend, Implementation
from .registry import (
    FORK_SAFE_IMPORTS,
    TORCH_FAMILY,
    Selection,
    UserOptions,
    backend_names,
    backend_version,
    find,
    get_backend,
    identity,
    implementations,
    kernel_tier,
    load_user,
    member,
    select,
)

__all__ = ["FORK_SAFE_IMPORTS", "TORCH_FAMILY", "Backend", "Implementation", "ImplementationError",
           "Selection", "UserOptions", "backend_names", "backend_version", "find", "get_backend",
           "identity", "implementations", "kernel_tier", "load_user", "member", "select"]
