"""Gradients: GELU′, the tanh form′ and φ against facts derived by hand, and the backends'
autograd against the reference."""
import math

import numpy as np
import pytest

from gelucheck.checks import reference_data, sign
from gelucheck.cli import main
from gelucheck.formats import FORMATS
from gelucheck.functions import FUNCTIONS, GELU_GRAD, PHI_GRAD
from gelucheck.reference.mpref import correctly_rounded

X_STAR = -0.75179152469356445746  # GELU's minimum, where GELU′ = 0 (docs/design.md)
SQRT2 = math.sqrt(2)


def _stored(name, function):
    tab = reference_data.table(FORMATS[name], "gelu")
    return tab.x.astype(np.float64), tab.exact(function)


def _exact_side(name, function, bound):
    """Where the exact value lies above ``bound``: decided by the correctly rounded value and
    the sign of its residual, which is kept where the difference is too small for a float64
    (GELU′(9) = 1 + 1e-18)."""
    tab = reference_data.table(FORMATS[name], "gelu")
    rounded, residual = tab.rounded(function).astype(np.float64), tab.residual(function)
    return (rounded > bound) | ((rounded == bound) & (np.copysign(1.0, residual) > 0))


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_gelu_grad_is_symmetric_about_one_half(name):
    """GELU′(x) + GELU′(-x) = Φ(x) + Φ(-x) + xφ(x) - xφ(x) = 1, by hand."""
    x, v = _stored(name, GELU_GRAD)
    at = {float(a): float(b) for a, b in zip(x, v)}
    pairs = [(a, at[-a]) for a in at if a > 0 and -a in at]
    assert len(pairs) > 1000
    worst = max(abs(at[a] + b - 1) for a, b in pairs)
    assert worst <= 2 * 2.0**-53  # the two float64 roundings of the stored values


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_gelu_grad_changes_sign_at_x_star_and_exceeds_one_beyond_minus_x_star(name):
    x, _ = _stored(name, GELU_GRAD)
    above_zero, above_one = _exact_side(name, GELU_GRAD, 0.0), _exact_side(name, GELU_GRAD, 1.0)
    assert np.array_equal(above_zero, x > X_STAR)
    assert np.array_equal(above_one, x > -X_STAR)


def test_gelu_grad_is_largest_at_sqrt2():
    """GELU″(x) = φ(x)(2 - x²) vanishes at √2; GELU′(√2) = Φ(√2) + √2·φ(√2), from math.erf."""
    x, v = _stored("float32", GELU_GRAD)
    i = int(np.argmax(v))
    by_hand = 0.5 * (1 + math.erf(1.0)) + SQRT2 * math.exp(-1.0) / math.sqrt(2 * math.pi)
    assert abs(x[i] - SQRT2) < 1e-3 and v[i] == pytest.approx(by_hand, abs=1e-9)
    assert by_hand == pytest.approx(1.128904145, abs=1e-9)


@pytest.mark.parametrize("name", ["gelu_grad", "gelu_tanh_grad", "phi_grad"])
def test_limits_and_zero(name):
    fn = FUNCTIONS[name]
    f32 = FORMATS["float32"]
    expected_at_zero = 0.5 if name != "phi_grad" else 1 / math.sqrt(2 * math.pi)
    for zero in (0.0, -0.0):
        r = correctly_rounded(fn, zero, f32)
        assert float(f32.from_bits(r.bits)) == pytest.approx(expected_at_zero, rel=2**-24)
    right, left = (1.0, 0.0) if name != "phi_grad" else (0.0, 0.0)
    assert fn.limits["+inf"] == right and fn.limits["-inf"] == left
    if name != "phi_grad":
        # tends to 1 from above at +inf and to 0 from below at -inf
        assert correctly_rounded(fn, 30.0, f32).residual >= 0
        assert math.copysign(1, float(f32.from_bits(correctly_rounded(fn, -30.0, f32).bits))) < 0


def test_torch_backward_at_one_is_phi_plus_density():
    """GELU′(1) = Φ(1) + φ(1), by hand from math.erf and math.exp."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    x = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
    torch.nn.functional.gelu(x).backward(torch.ones_like(x))
    by_hand = 0.5 * (1 + math.erf(1 / SQRT2)) + math.exp(-0.5) / math.sqrt(2 * math.pi)
    assert x.grad.item() == pytest.approx(by_hand, rel=1e-15)


def test_the_sign_check_finds_a_planted_wrong_sign():
    """An implementation correct but for a flipped sign at three inputs is caught, with them."""
    from gelucheck.backends import Implementation

    tab = reference_data.table(FORMATS["float32"], "gelu")
    rounded = tab.rounded(GELU_GRAD)
    far = np.flatnonzero((np.abs(tab.x.astype(np.float64)) > 2) & (rounded != 0))
    planted = {float(tab.x[i]) for i in far[[100, 5000, 20000]]}  # away from x*

    from scipy import special

    def flipped(x):
        wide = x.astype(np.float64)  # GELU′ in float64, then rounded: right in sign near x*
        y = (special.ndtr(wide) + wide * np.exp(-wide * wide / 2) / math.sqrt(2 * math.pi))
        y = y.astype(x.dtype)
        flip = np.isin(x.astype(np.float64), list(planted))
        y[flip] = -y[flip]
        return y

    impl = Implementation("test", "flipped", "gelu_grad", flipped)
    found = sign.check(impl, FORMATS["float32"])
    assert found.n_wrong_sign == len(planted)
    assert {e["x"] for e in found.examples[:len(planted)]} == planted
    assert found.x_star_in_crossing and found.sign_changes == 1


def test_no_autograd_is_said_not_skipped(capsys):
    assert main(["check", "--backend", "scipy", "--function", "gelu_grad", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "scipy has no gelu_grad: SciPy has no autograd" in err
    assert "nothing to measure" in err


def test_a_users_forward_function_differentiated_by_autograd(tmp_path, monkeypatch):
    pytest.importorskip("torch", reason="torch is not installed")
    import json
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    out = tmp_path / "r.json"
    assert main(["check", "--impl", "user_impls:torch_gelu", "--framework", "torch",
                 "--autograd", "--function", "gelu_grad", "--dtype", "float16", "--json",
                 str(out), "--no-progress"]) == 0
    (mine,) = json.loads(out.read_text())["results"]
    assert main(["check", "--backend", "torch", "--function", "gelu_grad", "--dtype",
                 "float16", "--json", str(out), "--no-progress"]) == 0
    theirs = next(r for r in json.loads(out.read_text())["results"]
                  if r["implementation"] == "F.gelu")
    assert mine["max_ulp"] == theirs["max_ulp"] and mine["sign"] == theirs["sign"]


def test_phi_grad_far_out_is_a_positive_zero():
    assert correctly_rounded(PHI_GRAD, -40.0, FORMATS["float32"]).bits == 0
    assert correctly_rounded(PHI_GRAD, 40.0, FORMATS["float32"]).bits == 0
