"""SciPy: Φ as ndtr, norm.cdf and the erf/erfc formulas; GELU as x times each; erf and erfc."""
from __future__ import annotations

import numpy as np

from ..formats import BFLOAT16, FLOAT16, FLOAT32, FLOAT64
from ..functions import GELU, PHI, get_function
from .base import Backend, Implementation
from .formulas import phi_erf, phi_erfc

# SciPy's special functions have float32 and float64 loops only; float16 and bfloat16 input
# is promoted to float64 by SciPy itself (docs/design.md), so that is how they are measured.
WIDER_16 = {FLOAT16: FLOAT64, BFLOAT16: FLOAT64}
BOTH = (FLOAT32, FLOAT64)


def load() -> Backend:
    try:
        import scipy
        from scipy import special, stats
    except ImportError as exc:
        return Backend("scipy", False, f"scipy is not installed ({exc})", None)

    def norm_cdf(x):
        return stats.norm.cdf(x)

    def x_times(phi):
        return lambda x: x * phi(x)

    phis = {
        "ndtr": (special.ndtr, "scipy.special.ndtr(x)", BOTH, WIDER_16),
        # norm.cdf computes in float64 whatever it is given
        "norm.cdf": (norm_cdf, "scipy.stats.norm.cdf(x), float64 inside", (FLOAT64,),
                     {**WIDER_16, FLOAT32: FLOAT64}),
        "erf": (lambda x: phi_erf(special.erf, np, x), "0.5*(1+erf(x/sqrt(2)))",
                BOTH, WIDER_16),
        "erfc": (lambda x: phi_erfc(special.erfc, np, x), "0.5*erfc(-x/sqrt(2))",
                 BOTH, WIDER_16),
    }
    impls = []
    for name, (phi, text, native, wider) in phis.items():
        impls.append(Implementation("scipy", name, PHI, phi, native, wider, rows_batch=True,
                                    description=text))
        if name != "norm.cdf":
            impls.append(Implementation("scipy", f"x*{name}", GELU, x_times(phi), native, wider,
                                        rows_batch=True, description=f"x * {text}"))
    for name in ("erf", "erfc"):
        impls.append(Implementation("scipy", f"special.{name}", get_function(name),
                                    getattr(special, name), BOTH, WIDER_16, rows_batch=True,
                                    description=f"scipy.special.{name}(x)"))
    missing = {"gelu_tanh": "SciPy has no tanh form of its own (see numpy:tanh)"}
    missing.update({name: "SciPy has no autograd: no derivative is computed by it"
                    for name in ("phi_grad", "gelu_grad", "gelu_tanh_grad")})
    return Backend("scipy", True, "", scipy.__version__, tuple(impls), missing)
