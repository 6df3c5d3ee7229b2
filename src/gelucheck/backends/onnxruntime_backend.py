"""ONNX Runtime on its CPU execution provider: one-node graphs of ONNX's Gelu (opset 20, both
forms) and the com.microsoft contrib ops Gelu, FastGelu, BiasGelu (zero bias) and QuickGelu,
and the Erf decomposition exporters write for exact GELU. Graphs are built with the onnx
package, one session per graph and dtype, reused.

The CPU provider has no bfloat16 kernel for any of them (NOT_IMPLEMENTED: Sqrt, Mul), and no
float64 Erf: exact GELU runs in float16 and float32, the tanh form and QuickGelu also in
float64. ORT's default graph optimizations may rewrite a graph (the Erf decomposition can be
fused into one Gelu kernel, as when a model is served): the consistency check's other path runs
each graph with every optimization off.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import threads
from .base import Backend, Implementation

EXACT = ("float16", "float32")  # no float64 Erf kernel, no bfloat16 kernels on the CPU provider
TANH = ("float16", "float32", "float64")


def make_session(model: bytes, optimize: bool = True) -> Any:
    """An InferenceSession of the serialized model on the CPU provider: with ORT's default
    graph optimizations or none, on its default thread pool or, where backends/threads.py
    says so (a sweep's or a search's worker), on the calling thread alone."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    if threads.one_thread():
        options.intra_op_num_threads = options.inter_op_num_threads = 1
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def load() -> Backend:
    try:
        import onnx
        import onnxruntime as ort
    except ImportError as exc:
        return Backend("onnxruntime", False, f"onnxruntime or onnx is not installed ({exc}); "
                       "pip install 'gelucheck[onnxruntime]'", None)
    from onnx import TensorProto, helper, numpy_helper

    ort.set_default_logger_severity(3)  # kernels that do not exist are said by our errors
    types = {"float16": TensorProto.FLOAT16, "float32": TensorProto.FLOAT,
             "float64": TensorProto.DOUBLE}

    def graph(nodes, dtype, constants=None, contrib=False):
        constants = constants or {}
        init = [numpy_helper.from_array(np.asarray(v, dtype=dtype), k)
                for k, v in constants.items()]
        # no shape: any rank, so 0-d and 2-D inputs go in as they are
        g = helper.make_graph(nodes, "gelu", [helper.make_tensor_value_info("x", types[dtype],
                                                                             None)],
                              [helper.make_tensor_value_info("y", types[dtype], None)],
                              initializer=init)
        opsets = [helper.make_opsetid("", 20)]
        if contrib:
            opsets.append(helper.make_opsetid("com.microsoft", 1))
        model = helper.make_model(g, opset_imports=opsets, producer_name="gelucheck")
        model.ir_version = 9  # onnx 1.15's, enough for opset 20: ORT 1.17 reads no newer IR
        return model.SerializeToString()

    def session(build, dtype, optimize=True):
        return make_session(build(dtype), optimize)

    def runner(build, reshape=None, optimize=True):
        sessions = {}

        def run(x):
            key = (x.dtype.name, threads.one_thread())
            if key not in sessions:
                sessions[key] = session(build, key[0], optimize)
            given = x.reshape(reshape(x)) if reshape else x
            return sessions[key].run(None, {"x": given})[0].reshape(x.shape)
        return run

    def node(op, contrib=False, **attrs):
        domain = {"domain": "com.microsoft"} if contrib else {}
        return lambda dtype: graph([helper.make_node(op, ["x"], ["y"], **domain, **attrs)],
                                   dtype, contrib=contrib)

    def bias_gelu(dtype):
        return graph([helper.make_node("BiasGelu", ["x", "b"], ["y"], domain="com.microsoft")],
                     dtype, {"b": np.zeros(1)}, contrib=True)

    def erf_decomposition(dtype):
        """0.5 * (x * (1 + Erf(x / sqrt 2))), the node order torch.onnx writes for F.gelu."""
        nodes = [helper.make_node("Div", ["x", "sqrt2"], ["a"]),
                 helper.make_node("Erf", ["a"], ["b"]),
                 helper.make_node("Add", ["b", "one"], ["c"]),
                 helper.make_node("Mul", ["x", "c"], ["d"]),
                 helper.make_node("Mul", ["d", "half"], ["y"])]
        return graph(nodes, dtype, {"sqrt2": np.sqrt(2.0), "one": 1.0, "half": 0.5})

    # BiasGelu adds its bias (one value) along the last axis, which must then have length 1:
    # every input goes in as a column, whatever its shape (reshaped back after)
    column = lambda x: (-1, 1)
    at_least_1d = lambda x: (1,) if x.ndim == 0 else x.shape  # FastGelu refuses 0-d input

    def loads(build, dtype) -> bool:
        """Whether this ONNX Runtime has the kernel (1.17 has no float64 FastGelu or
        QuickGelu): the dtypes an implementation takes are what the installed one loads."""
        try:
            session(build, dtype)
        except Exception:  # noqa: BLE001 - ORT's own error types: any failure to load is a no
            return False
        return True

    def make(name, function, build, native, text, reshape=None, **extra):
        offered = tuple(d for d in native if loads(build, d))
        if offered != native:
            text += (f" (no {', '.join(d for d in native if d not in offered)} kernel in "
                     f"ONNX Runtime {ort.__version__})")
        return Implementation(
            "onnxruntime", name, function, runner(build, reshape), native=offered,
            description=text,
            paths=lambda fmt: {"optimizations-off": runner(build, reshape, optimize=False)},
            **extra)

    impls = (
        make("Gelu", "gelu", node("Gelu", approximate="none"), EXACT,
             "ONNX Gelu (opset 20), approximate='none'"),
        make("Gelu", "gelu_tanh", node("Gelu", approximate="tanh"), TANH,
             "ONNX Gelu (opset 20), approximate='tanh'"),
        make("ms.Gelu", "gelu", node("Gelu", contrib=True), EXACT, "com.microsoft Gelu"),
        make("ms.FastGelu", "gelu_tanh", node("FastGelu", contrib=True), TANH,
             "com.microsoft FastGelu (the tanh form); a 0-d input goes in as shape (1,), "
             "which FastGelu requires", reshape=at_least_1d),
        make("ms.BiasGelu", "gelu", bias_gelu, EXACT, "com.microsoft BiasGelu, bias 0",
             reshape=column),
        make("ms.QuickGelu", "gelu", node("QuickGelu", contrib=True, alpha=1.702), TANH,
             "com.microsoft QuickGelu, alpha 1.702: x*sigmoid(1.702x)", approximates="gelu",
             formula="sigmoid_1.702"),
        make("Erf-decomposition", "gelu", erf_decomposition, EXACT,
             "0.5*(x*(1+Erf(x/sqrt 2))) as torch.onnx exports F.gelu; ORT may fuse it"),
        make("Erf", "erf", node("Erf"), ("float16", "float32", "float64"),
             "ONNX Erf (opset 20), one node"),
    )
    missing = {name: "ONNX Runtime serves forward graphs only: no derivative"
               for name in ("phi_grad", "gelu_grad", "gelu_tanh_grad")}
    missing["phi"] = "ONNX has no Gaussian CDF op (Erf is there; graphs of it are GELU here)"
    missing["erfc"] = "ONNX has no Erfc op (1 - Erf would be a formula, not the op)"
    return Backend("onnxruntime", True, "",
                   f"{ort.__version__} (onnx {onnx.__version__}, CPUExecutionProvider)", impls,
                   missing)
