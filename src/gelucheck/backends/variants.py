"""The GELU variants met in model configs (Hugging Face names), in NumPy.

gelu_new and gelu_fast are the tanh form written two ways, so they are measured against the
tanh reference; quick_gelu, x·σ(1.702x), approximates exact GELU and is measured as drift.
"""
from __future__ import annotations

import numpy as np

from ..formats import BFLOAT16, FLOAT16, FLOAT32, FLOAT64
from ..functions import GELU, GELU_TANH
from .base import Backend, Implementation
from .formulas import gelu_tanh_fast, quick_gelu, tanh_form

WIDER = {BFLOAT16: FLOAT32}
NATIVE = (FLOAT16, FLOAT32, FLOAT64)


def load() -> Backend:
    impls = (
        Implementation("variants", "gelu_new", GELU_TANH, lambda x: tanh_form(np, x), NATIVE,
                       WIDER, rows_batch=True,
                       description="HF gelu_new: 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)))"),
        Implementation("variants", "gelu_fast", GELU_TANH, lambda x: gelu_tanh_fast(np, x),
                       NATIVE, WIDER,
                       rows_batch=True,
                       description="HF gelu_fast: 0.5x(1+tanh(0.7978845608x(1+0.044715x^2)))"),
        Implementation("variants", "quick_gelu", GELU, lambda x: quick_gelu(np, x), NATIVE,
                       WIDER, rows_batch=True, description="HF quick_gelu: x*sigmoid(1.702x)",
                       approximates=GELU, formula="sigmoid_1.702"),
    )
    missing = {name: "these NumPy formulas have no autograd"
               for name in ("phi_grad", "gelu_grad", "gelu_tanh_grad")}
    return Backend("variants", True, "", np.__version__, impls, missing)
