"""OpenVINO's CPU plugin: one-op models - opset ``Gelu`` with approximation mode erf and tanh,
and ``Erf`` - compiled for the CPU and run as a deployed model runs them.

Each is compiled with ``INFERENCE_PRECISION_HINT`` f32, so that a float32 model computes in
float32 (the plugin's default on a CPU with bfloat16 instructions may lower it); the same ops
compiled with the hint bf16 (and f16), where the CPU offers them, are consistency paths of
float32 (checks.consistency): a lowered precision is measured, never silently taken. The
plugin's kernels are oneDNN's, chosen by the CPU and capped by ONEDNN_MAX_CPU_ISA: its kernel
tier is tiers.openvino_tier() (docs/findings/openvino-2026.4.md)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..formats import BFLOAT16, FLOAT16, FLOAT32, FLOAT64
from ..functions import ERF, GELU, GELU_TANH, Function
from . import threads
from .base import Backend, Implementation

# name: (the function, how the op is built, what it computes)
OPS: dict[str, tuple[Function, str, str]] = {
    "Gelu(erf)": (GELU, "erf", "opset13.gelu(x, 'erf')"),
    "Gelu(tanh)": (GELU_TANH, "tanh", "opset13.gelu(x, 'tanh')"),
    "Erf": (ERF, "", "opset13.erf(x)"),
}
# a lowered inference precision: the CPU capability that offers it
LOWERED = {"bf16": "BF16", "f16": "FP16"}


def compile_config(hint: str) -> dict[str, object]:
    """The CPU plugin's configuration for a model compiled now: the inference precision hint
    and, where backends/threads.py says so (a sweep's or a search's worker), one thread."""
    config: dict[str, object] = {"INFERENCE_PRECISION_HINT": hint}
    if threads.one_thread():
        config["INFERENCE_NUM_THREADS"] = 1
    return config


def load() -> Backend:
    try:
        import openvino as ov
        from openvino import opset13
    except ImportError as exc:
        return Backend("openvino", False, f"openvino is not installed ({exc}); pip install "
                       "'gelucheck[openvino]'", None)
    from .. import tiers

    core = ov.Core()
    capabilities = set(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"))

    def compiled(op: str, hint: str) -> Callable[[np.ndarray], np.ndarray]:
        """The op as a one-op model, compiled once per dtype, rank (the CPU plugin takes
        dynamic dimensions, not a dynamic rank) and thread setting (backends/threads.py)."""
        made: dict[tuple[np.dtype, int, bool], object] = {}

        def kernel(x: np.ndarray) -> np.ndarray:
            key = (x.dtype, x.ndim, threads.one_thread())
            if key not in made:
                p = opset13.parameter([-1] * x.ndim, x.dtype)
                node = opset13.gelu(p, op) if op else opset13.erf(p)
                made[key] = core.compile_model(ov.Model([node], [p]), "CPU",
                                               compile_config(hint))
            return np.asarray(made[key](x)[0]).reshape(x.shape)  # type: ignore[operator]
        return kernel

    lowered = [hint for hint, capability in LOWERED.items() if capability in capabilities]

    def paths(op: str) -> Callable[[object], dict[str, Callable[[np.ndarray], np.ndarray]]]:
        """float32's other precisions: the op compiled with each lowered hint the CPU offers."""
        return lambda fmt: ({f"hint-{hint}": compiled(op, hint) for hint in lowered}
                            if fmt == FLOAT32 else {})

    impls, missing = [], {}
    for name, (function, op, text) in OPS.items():
        impls.append(Implementation(
            "openvino", name, function, compiled(op, "f32"),
            native=(FLOAT16, FLOAT32, FLOAT64), wider={BFLOAT16: FLOAT32},
            description=f"{text}, compiled for the CPU with INFERENCE_PRECISION_HINT f32",
            paths=paths(op)))
    missing.update({f: "OpenVINO's opset has Gelu and Erf, not the Gaussian CDF, erfc or "
                    "derivatives (training is not what it runs)"
                    for f in ("phi", "phi_grad", "gelu_grad", "gelu_tanh_grad", "erfc")})
    tier = tiers.openvino_tier()
    return Backend("openvino", True, "", f"{ov.get_version().split('-')[0]}, kernels {tier}",
                   tuple(impls), missing, tier=tier)
