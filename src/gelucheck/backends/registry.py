"""Every backend, found through the entry-point group ``gelucheck.backends`` and loaded on first
use; the selection of implementations the command line, the plugin and the benchmarks run;
and a user's own callable as an implementation.

A backend is a function that returns a :class:`Backend`; a package declares it with
``[project.entry-points."gelucheck.backends"] NAME = "package.module:load"`` (gelucheck's own
backends are declared the same way in its pyproject.toml; see docs/design.md).
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import sys
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from ..errors import GelucheckError, UsageError, choose, refuse_repeats
from ..functions import FUNCTIONS, Function, get_function
from ..results import Identity
from .base import Backend, Implementation
from .isolated import ChildKernel, isolate
from .tensors import tensor_kernel, torch_availability, torch_gradient

GROUP = "gelucheck.backends"
OWN = "gelucheck."  # the built-in backends' modules
# Only the order in which reports list gelucheck's own backends (installers sort entry points
# by name): the plain library first, then each framework with its variants. Not a registry:
# a backend missing here is listed after these, by name.
READING_ORDER = ("numpy", "scipy", "torch", "torch-cuda", "torch-compile", "jax", "variants")
# the backends that import torch when they load, in backend_names()'s order: measured in a
# process of their own beside the others (commands/beside.py), preloaded by a sweep's fork
# server (sweep/runner.py)
TORCH_FAMILY = ("torch", "torch-cuda", "torch-compile", "transformers", "timm")
# What a backend imports as it loads that a sweep's fork server imports once for all the
# workers it forks (sweep/runner.py): modules that start no thread at import, so that forking
# after them is sound, and whose import is a large part of each worker's start (ml_dtypes:
# onnx and JAX import it, NumPy's loop registration makes it slow).
FORK_SAFE_IMPORTS: dict[str, tuple[str, ...]] = {
    **{name: ("torch",) for name in TORCH_FAMILY},
    "onnxruntime": ("ml_dtypes",), "jax": ("ml_dtypes",)}


@cache
def _entry_points() -> dict[str, EntryPoint]:
    """name -> entry point, gelucheck's own first; where two packages claim a name,
    gelucheck's own wins."""
    found: dict[str, EntryPoint] = {}
    for ep in sorted(entry_points(group=GROUP), key=lambda ep: not ep.value.startswith(OWN)):
        found.setdefault(ep.name, ep)
    if not any(ep.value.startswith(OWN) for ep in found.values()):
        # gelucheck imported from a folder it was never installed from: its own backends are
        # declared in the package's metadata, which such a Python does not have
        raise GelucheckError("no gelucheck backend is declared to this Python: gelucheck is "
                             "imported without being installed (its backends are entry points "
                             "in its package metadata); install it, e.g. `pip install --no-deps "
                             "-e .` in a checkout")
    rank = {name: i for i, name in enumerate(READING_ORDER)}
    order = sorted(found, key=lambda n: (not found[n].value.startswith(OWN),
                                         rank.get(n, len(rank)), n))
    return {n: found[n] for n in order}


def backend_names() -> list[str]:
    return list(_entry_points())


@cache
def get_backend(name: str) -> Backend:
    """The backend of that name, loaded once. A loader that fails makes the backend
    unavailable with the reason, as a missing framework does."""
    ep = choose("backend", name, _entry_points())
    try:
        backend = ep.load()()
    except Exception as exc:  # noqa: BLE001 - a third-party loader may fail in any way
        return Backend(name, False, f"its loader {ep.value} failed: {type(exc).__name__}: "
                       f"{exc}", None)
    if not isinstance(backend, Backend):
        return Backend(name, False, f"its loader {ep.value} returned {type(backend).__name__}, "
                       "not a gelucheck Backend", None)
    return backend


@dataclass
class Selection:
    """The implementations chosen, and the backends that could not take part, with why."""

    implementations: list[Implementation] = field(default_factory=list)
    unavailable: list[tuple[str, str]] = field(default_factory=list)
    # (backend, function, why): functions a backend cannot compute (no autograd, no erf...)
    not_applicable: list[tuple[str, str, str]] = field(default_factory=list)


def select(backends: list[str] | None = None,
           functions: list[Function] | None = None) -> Selection:
    """The implementations of the named backends (all by default) of the given functions."""
    out = Selection()
    for name in backend_names() if backends is None else backends:
        backend = get_backend(name)
        if not backend.available:
            out.unavailable.append((name, backend.reason))
        out.implementations += [i for i in backend.implementations
                                if functions is None or i.function in functions]
        out.not_applicable += [(name, what, why) for what, why in backend.unavailable.items()
                               if functions is not None and what in {f.name for f in functions}]
    return out


def backend_version(impl: Implementation) -> str | None:
    """The version of the backend an implementation belongs to; for a user's own callable,
    the digest of its source."""
    return get_backend(impl.backend).version if impl.backend in backend_names() else impl.version


def identity(impl: Implementation, fmt) -> Identity:
    """What a result of ``impl`` in ``fmt`` is of: the implementation, the dtype, the release
    and the kernel tier it ran on."""
    return Identity.of(impl, fmt, backend_version(impl), kernel_tier(impl))


def kernel_tier(impl: Implementation) -> str | None:
    """The name of the kernel tier an implementation's backend runs on (tiers.py), None
    where its backend has none."""
    if impl.backend not in backend_names():
        return None
    tier = get_backend(impl.backend).tier
    return tier.name if tier is not None else None


def _source_digest(fn, module) -> str:
    """What changes when the user's code changes: its source, else its module's file."""
    try:
        text = inspect.getsource(fn)
    except (OSError, TypeError):
        path = getattr(module, "__file__", None)
        text = Path(path).read_text(encoding="utf-8", errors="replace") if path else repr(fn)
    return "source sha256 " + hashlib.sha256(text.encode()).hexdigest()[:16]


def find(spec: str, function: str | Function | None = None) -> list[Implementation]:
    """Implementations named ``backend:name`` (any function unless given)."""
    backend, _, name = spec.partition(":")
    function = get_function(function) if function is not None else None
    offered = get_backend(backend).implementations
    found = [i for i in offered if i.name == name and function in (None, i.function)]
    if not found:
        computes = sorted(i.function.name for i in offered if i.name == name)
        if computes and function is not None:
            raise UsageError(f"{spec} does not compute {function.name}; it computes: "
                             f"{', '.join(computes)}")
        valid = sorted({i.name for i in offered})
        raise UsageError(f"unknown implementation {spec!r}; {backend} offers: "
                         f"{', '.join(valid) or 'nothing here'}")
    return found


def child_kernel(spec: str, function: str, framework: str | None, device: str):
    """The kernel an isolated implementation's child process builds for itself
    (isolated.ChildKernel): a built-in one by ``backend:name`` (framework None), else a
    user's callable."""
    if framework is None:
        return find(spec, function)[0].kernel
    return load_user(spec, function, framework, device).kernel


FRAMEWORKS = ("numpy", "torch")
DEVICES = ("cpu", "cuda")


def load_user(spec: str, function: str | Function, framework: str = "numpy",
              device: str = "cpu", isolate: bool = False, timeout: float | None = None,
              autograd: bool = False) -> Implementation:
    """A user's callable ``package.module:callable`` as an implementation of ``function``,
    imported as ``python -c`` would: from the current directory too. With ``isolate`` (or a
    ``timeout`` in seconds per call) it runs in a child process (backends.isolated). With
    ``autograd`` the callable is the forward function and ``function`` its derivative,
    computed by torch's backward pass."""
    function = get_function(function)
    choose("framework", framework, FRAMEWORKS)
    choose("device", device, DEVICES)
    if device != "cpu" and framework == "numpy":
        raise UsageError(f"--device {device} needs --framework torch: a NumPy callable runs on "
                         "the CPU")
    if autograd and (framework != "torch" or function.derivative_of is None):
        raise UsageError("--autograd differentiates a torch callable: it needs --framework "
                         "torch and a derivative as --function (phi_grad, gelu_grad, "
                         "gelu_tanh_grad)")
    if autograd and (isolate or timeout is not None):
        raise UsageError("--autograd cannot be combined with --isolate or --timeout yet")
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--impl {spec!r}: expected the form package.module:callable")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - report any import failure of foreign code
        raise UsageError(f"--impl {spec!r}: cannot import {module_name!r}: "
                         f"{type(exc).__name__}: {exc}") from None
    fn: Any = module
    for part in attr.split("."):
        fn = getattr(fn, part, None)
    if not callable(fn):
        raise UsageError(f"--impl {spec!r}: {module_name} has no callable {attr!r}")
    kernel: Any = fn
    if framework == "torch":
        ok, reason, _ = torch_availability(device)
        if not ok:
            raise UsageError(f"--impl {spec!r} --framework torch --device {device}: {reason}")
        kernel = tensor_kernel(torch_gradient(fn) if autograd else fn, device)
    if isolate or timeout is not None:
        if timeout is not None and not timeout > 0:
            raise UsageError(f"--timeout {timeout}: need a positive number of seconds")
        kernel = ChildKernel(child_kernel, spec, function.name, framework, device, timeout)
    how = f"d/dx of {spec} by torch autograd" if autograd else spec
    return Implementation("user", spec, function, kernel, device=device,
                          description=f"{how} on {framework} arrays ({device})",
                          version=_source_digest(fn, module))


@dataclass(frozen=True)
class UserOptions:
    """How a user's ``--impl`` callable is called (load_user's arguments)."""

    framework: str = "numpy"
    device: str = "cpu"
    isolate: bool = False
    timeout: float | None = None
    autograd: bool = False


def refuse_named_twice(backends: list[str], impls: list[str]) -> None:
    """Each implementation named once: a name given twice, or one of a backend's
    implementations (backend:name) beside the whole backend, which selects it already, is
    refused - measured once, one of the two would be dropped silently; measured twice, its
    figures would stand twice in every table."""
    refuse_repeats("--backend", backends)
    refuse_repeats("--impl", impls)
    whole = {b for b in backends if ":" not in b}
    for spec in backends:
        if (backend := spec.partition(":")[0]) != spec and backend in whole:
            raise UsageError(f"--backend {spec!r} is named already by --backend {backend!r} "
                             f"(every implementation of {backend}): name one of them")


def implementations(backends: list[str] | None, impls: list[str] | None,
                    functions: list[Function] | None, user: UserOptions = UserOptions(),
                    every_backend: bool = True) -> Selection:
    """What the command line's --backend (a backend, or backend:name) and --impl (a user's
    callable, MOD:FN, repeatable) name, for every command and the pytest plugin alike: the
    backends' implementations of ``functions`` (all where None) beside each user callable,
    once per function. With no --backend: every backend where ``every_backend``, else none
    once an --impl is given. A user's callable computes what --function says: it must say."""
    backends, impls = list(backends or []), list(impls or [])
    refuse_named_twice(backends, impls)
    if impls and not functions:
        raise UsageError("--impl: name the function your callable computes with --function "
                         f"(valid choices: {', '.join(FUNCTIONS)})")
    if isinstance(functions, list):
        refuse_repeats("--function", [f.name for f in functions])
    whole = [b for b in backends if ":" not in b]
    single = [b for b in backends if ":" in b]
    if whole or (not backends and (every_backend or not impls)):
        out = select(whole or None, functions)
    else:
        out = Selection()
    for spec in single:
        chosen = find(spec) if functions is None else [
            i for f in functions for i in _found(spec, f)]
        if not chosen:
            raise UsageError(f"{spec} computes none of "
                             f"{', '.join(f.name for f in functions or [])}")
        out.implementations += chosen
    if user.isolate or user.timeout is not None:
        out.implementations = [isolate(i, child_kernel, user.timeout)
                               for i in out.implementations]
    out.implementations += [load_user(spec, f, user.framework, user.device, user.isolate,
                                      user.timeout, user.autograd)
                            for spec in impls for f in functions or []]
    return out


def _found(spec: str, function: Function) -> list[Implementation]:
    try:
        return find(spec, function)
    except UsageError:
        find(spec)  # an unknown name: its own message, with what the backend offers
        return []


def member(spec: str, user: UserOptions = UserOptions()) -> Implementation:
    """One implementation named by ``backend:name[@function]`` or ``user:MOD:FN@function``
    (a user's callable: the function must be given), for the commands that take two
    implementations by name (drift). Usage errors name the valid choices."""
    name, _, function = spec.partition("@")
    if name.startswith("user:"):
        if not function:
            raise UsageError(f"{spec}: a user's callable needs its function: "
                             f"{name}@FUNCTION ({', '.join(FUNCTIONS)})")
        return load_user(name.removeprefix("user:"), function, user.framework, user.device,
                         user.isolate, user.timeout, user.autograd)
    backend = name.partition(":")[0]
    choose("backend", backend, backend_names())
    b = get_backend(backend)
    if not b.available:
        raise UsageError(f"{spec}: backend {backend} is not available here: {b.reason}")
    found = find(name, function or None)
    if len(found) > 1:
        gelu = [i for i in found if i.function.name == "gelu"]
        if not gelu:
            raise UsageError(f"{spec}: {name} computes "
                             f"{', '.join(i.function.name for i in found)}; add @FUNCTION")
        found = gelu
    return found[0]
