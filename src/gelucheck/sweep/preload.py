"""What the sweep's fork server imports before it forks any worker (runner._fork_server): the
compiled loops every sweep runs, loaded from numba's disk cache (each worker loads its
function's own), and the stored proofs. What the sweep's implementations import and is safe
to fork after (torch for torch's, ml_dtypes for ONNX Runtime's and JAX's: the registry's
FORK_SAFE_IMPORTS) is preloaded before this module - each worker importing it anew is slow,
several processes at once on few cores - and never for the other sweeps, whose workers it
would delay. Importing those starts no thread, so the workers forked after them are sound;
JAX, TensorFlow and ONNX Runtime themselves may start threads, and each worker imports them
after the fork."""
import contextlib

from ..errors import ReferenceDataError
from .proofs import warm_proofs
from .reference import warm

warm([])  # (the sweep's process compiles a function's own meanwhile, the first time)
with contextlib.suppress(ReferenceDataError):  # the sweep refuses it by name (require)
    warm_proofs()
