"""Every backend by name, loaded on first use, and a user's own implementation."""
from __future__ import annotations

import importlib
from functools import cache

from ..functions import check_function
from .base import Backend, Implementation

# name -> "module:loader"; each module imports its framework only when loaded.
BUILTIN = {
    "numpy": "numpy_backend:load",
    "scipy": "scipy_backend:load",
    "torch": "torch_backend:load",
    "torch-cuda": "torch_backend:load_cuda",
    "torch-compile": "torch_compile_backend:load",
    "jax": "jax_backend:load",
    "variants": "variants:load",
}


def backend_names() -> list[str]:
    return list(BUILTIN)


def check_backend(name: str) -> str:
    if name not in BUILTIN:
        raise ValueError(f"unknown backend {name!r}; valid choices: {', '.join(BUILTIN)}")
    return name


@cache
def get_backend(name: str) -> Backend:
    module, loader = BUILTIN[check_backend(name)].split(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), loader)()


def implementations(backends: list[str] | None = None, functions: list[str] | None = None,
                    names: list[str] | None = None) -> list[Implementation]:
    """The implementations of the available named backends (all by default), filtered."""
    out = []
    for b in backends or backend_names():
        backend = get_backend(b)
        out += [i for i in backend.implementations
                if (functions is None or i.function in functions)
                and (names is None or i.name in names or i.id in names)]
    return out


def find(spec: str, function: str | None = None) -> list[Implementation]:
    """Implementations named ``backend:name`` (any function unless given)."""
    backend, _, name = spec.partition(":")
    found = [i for i in implementations([backend]) if i.name == name
             and (function is None or i.function == function)]
    if not found:
        valid = [i.name for i in get_backend(backend).implementations]
        raise ValueError(f"unknown implementation {spec!r}; {backend} offers: "
                         f"{', '.join(sorted(set(valid))) or 'nothing here'}")
    return found


def load_user(spec: str, function: str, framework: str = "numpy",
              device: str = "cpu") -> Implementation:
    """A user's callable ``package.module:callable`` as an implementation of ``function``."""
    check_function(function)
    if framework not in ("numpy", "torch"):
        raise ValueError(f"unknown framework {framework!r}; valid choices: numpy, torch")
    if device not in ("cpu", "cuda"):
        raise ValueError(f"unknown device {device!r}; valid choices: cpu, cuda")
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"--impl {spec!r}: expected the form package.module:callable")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - report any import failure of foreign code
        raise ValueError(f"--impl {spec!r}: cannot import {module_name!r}: "
                         f"{type(exc).__name__}: {exc}") from None
    fn = module
    for part in attr.split("."):
        fn = getattr(fn, part, None)
    if not callable(fn):
        raise ValueError(f"--impl {spec!r}: {module_name} has no callable {attr!r}")
    kernel = fn
    if framework == "torch":
        from .torch_backend import _availability, tensor_kernel

        ok, reason, _ = _availability(device)
        if not ok:
            raise ValueError(f"--impl {spec!r} --framework torch --device {device}: {reason}")
        kernel = tensor_kernel(fn, device)
    return Implementation("user", spec, function, kernel, device=device,
                          description=f"{spec} on {framework} arrays ({device})")
