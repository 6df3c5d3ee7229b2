"""NumPy: the tanh form with ufuncs. NumPy has no erf, so neither exact form."""
from __future__ import annotations

import numpy as np

from ..formats import BFLOAT16, FLOAT16, FLOAT32, FLOAT64
from ..functions import GELU_TANH
from .base import Backend, Implementation
from .formulas import tanh_form

# NumPy ufuncs have no bfloat16 loops worth the name (ml_dtypes casts through float32 itself);
# say so, rather than hiding it.
WIDER = {BFLOAT16: FLOAT32}


def load() -> Backend:
    impl = Implementation(
        "numpy", "tanh", GELU_TANH, lambda x: tanh_form(np, x),
        native=(FLOAT16, FLOAT32, FLOAT64), wider=WIDER,
        rows_batch=True,
        description="0.5*x*(1+np.tanh(sqrt(2/pi)*(x+0.044715*x**3))), constants in the input "
                    "dtype")
    missing = {name: "NumPy has no erf or erfc ufunc" for name in ("phi", "gelu", "erf", "erfc")}
    missing.update({name: "NumPy has no autograd: no derivative is computed by it"
                    for name in ("phi_grad", "gelu_grad", "gelu_tanh_grad")})
    return Backend("numpy", True, "", np.__version__, (impl,), missing)
