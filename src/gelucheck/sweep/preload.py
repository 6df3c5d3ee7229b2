"""What the sweep's fork server imports before it forks any worker (runner._fork_server): the
compiled loops every sweep runs, loaded from numba's disk cache (each worker loads its
function's own), and the stored proofs. torch, where the sweep's implementations are of it,
is preloaded beside this module (each worker importing it anew is slow, several processes at
once on few cores), never for the others: importing it would delay every worker of theirs.
Importing torch starts no thread, so the workers forked after it are sound; JAX, TensorFlow
and ONNX Runtime may start threads, and each worker imports those itself after the fork."""
import contextlib

from ..errors import ReferenceDataError
from .proofs import warm_proofs
from .reference import warm

warm([])  # (the sweep's process compiles a function's own meanwhile, the first time)
with contextlib.suppress(ReferenceDataError):  # the sweep refuses it by name (require)
    warm_proofs()
