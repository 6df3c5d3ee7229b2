"""What the sweep's fork server imports before it forks any worker (runner._workers): torch,
where installed - most sweeps are of it, and each worker importing it anew is slow, several
processes at once on few cores - and the compiled loops every sweep runs, loaded from numba's
disk cache (each worker loads its function's own).
Importing torch starts no thread, so the workers forked after it are sound; JAX, TensorFlow
and ONNX Runtime may start threads, and each worker imports those itself after the fork."""
import contextlib

from ..errors import ReferenceDataError
from .proofs import warm_proofs
from .reference import warm

with contextlib.suppress(ImportError):
    import torch  # noqa: F401

warm([])  # (the sweep's process compiles a function's own meanwhile, the first time)
with contextlib.suppress(ReferenceDataError):  # the sweep refuses it by name (require)
    warm_proofs()
