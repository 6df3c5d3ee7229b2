"""LiteRT (TensorFlow Lite's runtime, ``ai-edge-litert``; no TensorFlow needed): its builtin
``GELU`` operator, exact and approximate (the tanh form), as a one-op model (litert_model.py)
run by the interpreter through its op resolvers:

- the default resolver, which hands the op to the XNNPACK delegate, as a deployed model runs:
  its float32 GELU is a rational approximation whose kernel is chosen by the CPU when XNNPACK
  starts (AVX-512F, FMA3, AVX or SSE2), with no cap, so that its kernel tier is the CPU's
  (tiers.xnnpack_tier());
- the builtin kernels without the default delegates (``*-builtin``), with the reference
  kernels (BUILTIN_REF) as their consistency path: 0.5f·x·erfcf(-x/√2) and the tanh form
  0.5f·x·(1 + tanhf(√(2/π)(x + 0.044715x³))), in float32 (reference/gelu.h).

GELU is the only one of these functions among LiteRT's builtin ops (no Erf, Φ or gradients). It
takes float32 (and quantized int8/uint8, through a table): float16 and bfloat16 go in as
float32, exactly, and are rounded once back."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..formats import BFLOAT16, FLOAT16, FLOAT32
from ..functions import GELU, GELU_TANH, Function
from ..native_output import captured
from .base import Backend, Implementation
from .litert_model import gelu_model

# the interpreter's op resolvers (ai_edge_litert.interpreter.OpResolverType) by what they run
DEFAULT, BUILTIN, REFERENCE = "AUTO", "BUILTIN_WITHOUT_DEFAULT_DELEGATES", "BUILTIN_REF"
# name: (the function, approximate, how the default resolver computes it)
FORMS = {"gelu": (GELU, False, "GELU(approximate=false)"),
         "gelu_tanh": (GELU_TANH, True, "GELU(approximate=true) (the tanh form)")}


def load() -> Backend:
    try:
        from importlib.metadata import version

        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError as exc:
        return Backend("litert", False, f"ai-edge-litert is not installed ({exc}); pip "
                       "install 'gelucheck[litert]'", None)
    from .. import tiers

    def run(approximate: bool, resolver: str) -> Callable[[np.ndarray], np.ndarray]:
        """The model through one resolver: one interpreter, resized to each length."""
        state: dict = {}  # the interpreter, and the length its tensors are allocated for

        def kernel(x: np.ndarray) -> np.ndarray:
            flat = np.ascontiguousarray(x, dtype=np.float32).reshape(-1)
            if flat.size == 0:
                return np.empty_like(x)
            if not state:  # the delegate announces itself on stderr, from C, when applied
                state["interpreter"] = Interpreter(
                    model_content=gelu_model(approximate),
                    experimental_op_resolver_type=OpResolverType[resolver])
                captured(state["interpreter"].allocate_tensors, fd=2)
            interpreter = state["interpreter"]
            given, = interpreter.get_input_details()
            if state.get("length") != flat.size:
                interpreter.resize_tensor_input(given["index"], [flat.size])
                interpreter.allocate_tensors()
                state["length"] = flat.size
            interpreter.set_tensor(given["index"], flat)
            interpreter.invoke()
            out = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
            return out.copy().reshape(x.shape)

        return kernel

    def make(name: str, function: Function, approximate: bool, resolver: str, text: str,
             paths: Callable | None = None) -> Implementation:
        return Implementation("litert", name, function, run(approximate, resolver),
                              native=(FLOAT32,), wider={FLOAT16: FLOAT32, BFLOAT16: FLOAT32},
                              description=text, paths=paths)

    def reference(approximate: bool) -> Callable:
        kernel = run(approximate, REFERENCE)
        return lambda fmt: {"reference-kernels": kernel} if fmt == FLOAT32 else {}

    tier = tiers.xnnpack_tier()
    impls = []
    for name, (function, approximate, op) in FORMS.items():
        impls.append(make(name, function, approximate, DEFAULT,
                          f"{op} through the default op resolver: the XNNPACK delegate's "
                          f"{tier.name} kernel"))
        impls.append(make(f"{name}-builtin", function, approximate, BUILTIN,
                          f"{op} through the builtin kernels, without the default delegates "
                          "(the reference kernels as a consistency path)",
                          paths=reference(approximate)))
    missing = {f: "LiteRT's builtin ops have GELU, not erf, erfc, the Gaussian CDF or "
               "derivatives" for f in ("phi", "phi_grad", "gelu_grad", "gelu_tanh_grad", "erf",
                                       "erfc")}
    return Backend("litert", True, "", f"ai-edge-litert {version('ai-edge-litert')}, "
                   f"kernels {tier}", tuple(impls), missing, tier=tier)
