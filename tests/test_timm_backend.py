"""The timm backend: every GELU-like activation layer of the installed timm is measured or
listed as missing with its reason, each is declared with what its source computes, and the
values at GELU's anchors are mpmath's (the accuracy, fingerprints, drift and budgets are the
shipped suite's, in `tox -e timm`)."""
import mpmath
import numpy as np
import pytest

from gelucheck.backends import get_backend

timm = pytest.importorskip("timm", reason="timm is not installed (extra: timm)",
                           exc_type=ImportError)

X_STAR = "-0.75179152469356445746"  # GELU's minimum (docs/design.md)


def _impls():
    backend = get_backend("timm")
    assert backend.available, backend.reason
    return {i.name: i for i in backend.implementations}


def test_every_gelu_layer_timm_builds_by_name_is_measured():
    """A release that adds a GELU variant to timm's activation layers fails here until the
    backend declares what it computes."""
    from timm.layers import create_act

    backend = get_backend("timm")
    measured = {i.name for i in backend.implementations}
    gelus = {name for name in create_act._ACT_LAYER_DEFAULT if "gelu" in name}
    assert gelus
    assert gelus <= measured | set(backend.unavailable), gelus - measured


def test_the_stand_in_is_declared_as_such():
    impls = _impls()
    assert impls["quick_gelu"].approximates.name == "gelu"
    assert impls["quick_gelu"].formula == "sigmoid_1.702"
    assert {i.function.name for i in impls.values() if i.approximates is None} == {
        "gelu", "gelu_tanh"}


@pytest.mark.parametrize("name, approximate", [("gelu", "none"), ("gelu_tanh", "tanh")])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_the_layers_on_torch_kernels_are_torch_s_own(name, approximate, dtype):
    import torch

    from gelucheck.backends.tensors import from_tensor, to_tensor
    from gelucheck.checks import reference_data

    impl = _impls()[name]
    x = reference_data.table(dtype, impl.function).x
    with torch.no_grad():
        expected = from_tensor(torch.nn.functional.gelu(to_tensor(x), approximate=approximate))
    assert np.array_equal(impl(x).view(np.uint8), expected.view(np.uint8))


def _exact(name, x):
    """What ``name`` is declared to compute at float32 ``x``, in 50 digits."""
    with mpmath.workdps(50):
        x = mpmath.mpf(float(x))
        if name == "gelu":
            return float(x * mpmath.ncdf(x))
        if name == "gelu_tanh":
            u = mpmath.sqrt(2 / mpmath.pi) * (x + mpmath.mpf("0.044715") * x ** 3)
            return float(x * (1 + mpmath.tanh(u)) / 2)
        return float(x / (1 + mpmath.exp(-mpmath.mpf(float(np.float32(1.702))) * x)))


@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "quick_gelu"])
def test_float32_values_at_gelu_s_anchors_are_mpmath_s_within_a_few_ulps(name):
    """GELU(-1) ~ -0.159, GELU(2) ~ 1.954 and the minimum at x*: each layer's float32 value
    within 4 ulps of what its own formula gives there (quick_gelu's factor is float32's
    1.702: torch multiplies in the tensor's dtype)."""
    x = np.array([-1.0, 2.0, float(X_STAR)], dtype=np.float32)
    got = _impls()[name](x)
    for xi, yi in zip(x, got, strict=True):
        want = _exact(name, xi)
        assert abs(float(yi) - want) <= 4 * np.spacing(np.float32(abs(want))), (xi, yi, want)


def test_gelu_s_anchors_read_as_documented():
    got = _impls()["gelu"](np.array([-1.0, 2.0], dtype=np.float32))
    assert got[0] == pytest.approx(-0.159, abs=5e-4)
    assert got[1] == pytest.approx(1.954, abs=5e-4)
