"""ggml (the tensor library under llama.cpp and whisper.cpp) on its CPU backend, through
ggml-python's bindings (the ``ggml`` extra; it builds ggml from source: a C compiler and
cmake). Its three GELU ops, read from its ggml-cpu/vec.h:

- ``ggml_gelu``, the tanh form: in float32 through a table of 2^16 float16 values
  (GGML_GELU_FP16, on by default) - x rounded to float16, the table's float16 value returned -
  with 0 at x <= -10 and x itself at x >= 10; in float16 the table alone;
- ``ggml_gelu_erf``, exact GELU as 0.5·x·(1 + erff(x/√2)) in float32 (the C library's erff),
  float16 computed in float32 and rounded once;
- ``ggml_gelu_quick``, x·σ(1.702x), through its own float16 table likewise (a stand-in for
  GELU, measured as drift).

ggml's unary ops take float32 and float16 only (another type aborts the process); bfloat16
goes in as float32, exactly, and is rounded once back. ggml has no erf, erfc or Φ op, and no
GELU backward."""
from __future__ import annotations

import numpy as np

from ..formats import BFLOAT16, FLOAT16, FLOAT32
from .base import Backend, Implementation

# a context's room beyond the tensors' data: their headers and the graph's
OVERHEAD = 1 << 20


def load() -> Backend:
    try:
        from importlib.metadata import version

        from ggml import ggml, utils
    except ImportError as exc:
        return Backend("ggml", False, f"ggml-python is not installed ({exc}); pip install "
                       "'gelucheck[ggml]' (it builds ggml from source: a C compiler and "
                       "cmake)", None)

    def op(build):
        def kernel(x: np.ndarray) -> np.ndarray:
            flat = np.ascontiguousarray(x).reshape(-1)
            if flat.size == 0:  # ggml asserts, and aborts the process, on an empty tensor
                return np.empty_like(x)
            params = ggml.ggml_init_params(mem_size=4 * flat.nbytes + OVERHEAD,
                                           mem_buffer=None)
            ctx = ggml.ggml_init(params)
            try:
                out = build(ctx, utils.from_numpy(flat, ctx))
                graph = ggml.ggml_new_graph(ctx)
                ggml.ggml_build_forward_expand(graph, out)
                ggml.ggml_graph_compute_with_ctx(ctx, graph, 1)
                return utils.to_numpy(out).copy().reshape(np.shape(x))
            finally:
                ggml.ggml_free(ctx)

        return kernel

    def make(name, function, build, text, **extra):
        return Implementation("ggml", name, function, op(build), native=(FLOAT16, FLOAT32),
                              wider={BFLOAT16: FLOAT32}, description=text, **extra)

    impls = (
        make("gelu", "gelu_tanh", ggml.ggml_gelu, "ggml_gelu: the tanh form; float32 through "
             "its float16 table (x rounded to float16), 0 at x <= -10, x at x >= 10"),
        make("gelu_erf", "gelu", ggml.ggml_gelu_erf, "ggml_gelu_erf: 0.5*x*(1+erff(x/sqrt 2)) "
             "in float32 (the C library's erff)"),
        make("gelu_quick", "gelu", ggml.ggml_gelu_quick, "ggml_gelu_quick: x*sigmoid(1.702x) "
             "through its float16 table", approximates="gelu", formula="sigmoid_1.702"),
    )
    missing = {name: "ggml has no erf, erfc or Gaussian CDF op, and no GELU backward"
               for name in ("phi", "phi_grad", "erf", "erfc", "gelu_grad", "gelu_tanh_grad")}
    return Backend("ggml", True, "", f"ggml-python {version('ggml-python')} (its vendored "
                   "ggml, CPU backend, built from source)", impls, missing)
