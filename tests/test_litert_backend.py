"""The LiteRT backend: its one-op model as LiteRT's schema reads it back, outputs of any shape
and length, a quiet delegate, and GELU's anchors from mpmath (the accuracy, fingerprints,
budgets and signatures are the shipped suite's, in `tox -e litert`)."""
import subprocess
import sys

import mpmath
import numpy as np
import pytest

pytest.importorskip("ai_edge_litert", reason="ai-edge-litert is not installed (extra: litert)")

from gelucheck.backends import get_backend
from gelucheck.backends.litert_model import gelu_model
from gelucheck.formats import FLOAT16, FLOAT32

X_STAR = "-0.75179152469356445746"  # GELU's minimum (docs/design.md)


def _impls():
    backend = get_backend("litert")
    assert backend.available, backend.reason
    return {i.name: i for i in backend.implementations}


@pytest.mark.parametrize("approximate", [False, True])
def test_the_model_reads_back_as_one_gelu_op_on_a_resizable_float32_vector(approximate):
    from ai_edge_litert import schema_py_generated as schema

    model = schema.ModelT.InitFromPackedBuf(gelu_model(approximate), 0)
    graph, = model.subgraphs
    op, = graph.operators
    assert model.operatorCodes[op.opcodeIndex].builtinCode == schema.BuiltinOperator.GELU
    assert op.builtinOptions.approximate is approximate
    for tensor in (graph.tensors[i] for i in (*graph.inputs, *graph.outputs)):
        assert tensor.type == schema.TensorType.FLOAT32
        assert list(tensor.shapeSignature) == [-1]


def _gelu(x, approximate):
    """GELU at float32 ``x`` in 50 digits (the tanh form where ``approximate``)."""
    with mpmath.workdps(50):
        x = mpmath.mpf(float(x))
        if approximate:
            u = mpmath.sqrt(2 / mpmath.pi) * (x + mpmath.mpf("0.044715") * x ** 3)
            return float(x * (1 + mpmath.tanh(u)) / 2)
        return float(x * mpmath.ncdf(x))


@pytest.mark.parametrize("name", ["gelu", "gelu-builtin", "gelu_tanh", "gelu_tanh-builtin"])
def test_each_resolver_gives_gelu_at_its_anchors(name):
    """GELU(-1), GELU(2) and the minimum at x*, within 4 float32 ulps of mpmath's value, one
    at a time and among other inputs."""
    approximate = name.startswith("gelu_tanh")
    x = np.array([-1.0, 2.0, float(X_STAR)], dtype=np.float32)
    want = np.array([_gelu(v, approximate) for v in x])
    for got in (_impls()[name](x), np.concatenate([_impls()[name](x[i:i + 1]) for i in range(3)])):
        assert got.dtype == np.float32
        assert np.all(np.abs(got - want) <= 4 * np.spacing(np.abs(want).astype(np.float32)))


@pytest.mark.parametrize("name", ["gelu", "gelu-builtin"])
def test_outputs_keep_the_input_shape_and_an_empty_input_gives_an_empty_output(name):
    impl = _impls()[name]
    x = np.linspace(-4, 4, 60, dtype=np.float32)
    assert np.array_equal(impl(x.reshape(3, 4, 5)), impl(x).reshape(3, 4, 5))
    assert impl(np.float32(0.5).reshape(())).shape == ()
    assert impl(np.empty((0, 3), np.float32)).shape == (0, 3)


def test_the_delegate_says_nothing_on_stderr():
    """XNNPACK's delegate announces itself from C, once a process, when an interpreter first
    applies it: a report's output must not carry it (a process of its own, as a report is)."""
    code = ("import numpy as np; from gelucheck.backends.litert_backend import load; "
            "impl = {i.name: i for i in load().implementations}['gelu']; "
            "print(impl(np.linspace(-3, 3, 7, dtype=np.float32))[3])")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert run.stdout.split() == ["0.0"]
    assert "XNNPACK" not in run.stderr, run.stderr


def test_the_reference_kernels_are_a_path_of_the_builtin_ones_in_float32():
    impls = _impls()
    for name, impl in impls.items():
        want = {"reference-kernels"} if name.endswith("-builtin") else set()
        assert set(impl.paths(FLOAT32) if impl.paths else ()) == want
        assert not (impl.paths(FLOAT16) if impl.paths else {})


def test_its_kernel_tier_is_named_in_its_version_line():
    backend = get_backend("litert")
    assert backend.tier is not None and f"kernels {backend.tier.name}" in backend.version
