import sys

import numpy as np
import pytest

from gelucheck.errors import UsageError
from gelucheck.formats import BFLOAT16, FLOAT16, FLOAT32, FLOAT64, FORMATS, get_format


@pytest.mark.parametrize("fmt, p, emin, emax, largest, tiny", [
    (FLOAT16, 11, -14, 15, 65504.0, 2.0**-24),
    (BFLOAT16, 8, -126, 127, (2 - 2.0**-7) * 2.0**127, 2.0**-133),
    (FLOAT32, 24, -126, 127, (2 - 2.0**-23) * 2.0**127, 2.0**-149),
    (FLOAT64, 53, -1022, 1023, np.finfo(np.float64).max, 2.0**-1074),
])
def test_parameters_match_ieee_by_hand(fmt, p, emin, emax, largest, tiny):
    assert (fmt.precision, fmt.emin, fmt.emax) == (p, emin, emax)
    assert fmt.max_finite == largest
    assert fmt.smallest_subnormal == tiny
    assert fmt.smallest_normal == 2.0**emin


@pytest.mark.parametrize("fmt", [FLOAT16, BFLOAT16])
def test_every_finite_value_in_order(fmt):
    values = fmt.all_finite()
    # 2**16 encodings less the 2 * 2**(p-1) with an all-ones exponent field (inf and NaN)
    assert len(values) == 2**16 - 2 ** fmt.precision
    as64 = values.astype(np.float64)
    assert np.all(np.isfinite(as64))
    assert np.all(np.diff(as64) >= 0)
    assert len(np.unique(fmt.bits_of(values))) == len(values)


def test_all_finite_refuses_wide_formats():
    with pytest.raises(ValueError, match="sample"):
        FLOAT32.all_finite()


@pytest.mark.parametrize("fmt", list(FORMATS.values()))
def test_neighbours(fmt):
    one = np.asarray(1.0, dtype=fmt.dtype)
    assert float(fmt.next_up(one)) == 1 + 2.0 ** (1 - fmt.precision)
    assert float(fmt.next_down(one)) == 1 - 2.0 ** -fmt.precision
    assert float(fmt.next_up(np.asarray(0.0, fmt.dtype))) == fmt.smallest_subnormal
    assert float(fmt.next_down(np.asarray(0.0, fmt.dtype))) == -fmt.smallest_subnormal
    assert float(fmt.next_up(np.asarray(fmt.max_finite, fmt.dtype))) == np.inf
    assert float(fmt.next_down(np.asarray(-np.inf, fmt.dtype))) == -np.inf


def test_bit_views_and_hex():
    assert FLOAT32.hex(-0.75) == "0xbf400000"
    assert BFLOAT16.hex(1.0) == "0x3f80"
    assert FLOAT16.hex(65504.0) == "0x7bff"
    assert FLOAT64.hex(-0.0) == "0x8000000000000000"
    assert float(BFLOAT16.from_bits(0x3f80)) == 1.0


@pytest.mark.parametrize("fmt", list(FORMATS.values()))
def test_value_of_one_encoding_by_hand(fmt):
    """value_of reads an encoding as IEEE lays it out: sign, exponent field, fraction."""
    bias, fraction = fmt.emax, fmt.precision - 1
    one, two_less = bias << fraction, ((bias + 1) << fraction) - 1  # 1.0, 2 - 2^(1-p)
    assert fmt.value_of(one) == 1.0
    assert fmt.value_of(one | 1 << (fmt.bits - 1)) == -1.0
    assert fmt.value_of(two_less) == 2 - 2.0 ** (1 - fmt.precision)
    assert fmt.value_of(1) == fmt.smallest_subnormal
    assert str(fmt.value_of(1 << (fmt.bits - 1))) == "-0.0"
    assert fmt.value_of(((1 << fmt.exponent_bits) - 1) << fraction) == np.inf
    assert np.isnan(fmt.value_of((((1 << fmt.exponent_bits) - 1) << fraction) | 1))
    bits = np.random.default_rng(7).integers(0, 1 << fmt.bits, 500, dtype=np.uint64)
    with np.errstate(invalid="ignore"):  # a signalling NaN, quieted
        values = fmt.from_bits(bits.astype(fmt.uint)).astype(np.float64)
    got = np.array([fmt.value_of(int(b)) for b in bits])
    assert np.array_equal(got, values, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(values))


def test_unknown_dtype_lists_the_valid_names():
    with pytest.raises(UsageError, match="float16, bfloat16, float32, float64"):
        get_format("float8")
    with pytest.raises(UsageError, match="'int32'; valid choices: float16, bfloat16"):
        get_format(np.dtype(np.int32))


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_a_numpy_dtype_is_its_format(name):
    """Looked up as a dtype (the sweep's path) or by its name: the same format."""
    dtype = np.zeros(1, dtype=FORMATS[name].dtype).dtype
    assert get_format(dtype) is get_format(dtype.name) is FORMATS[name]


def test_torch_dtype_when_installed():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    assert BFLOAT16.torch_dtype() is torch.bfloat16


def test_the_torch_dtype_is_torchs_attribute_of_the_formats_name(monkeypatch):
    """(without torch too: the lookup against a stand-in module)"""
    import types

    fake = types.SimpleNamespace(**{name: object() for name in FORMATS})
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert all(fmt.torch_dtype() is getattr(fake, name) for name, fmt in FORMATS.items())


from fractions import Fraction  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from gelucheck.formats import narrow  # noqa: E402
from gelucheck.reference.rounding import round_exact  # noqa: E402


@settings(max_examples=500, deadline=None)
@given(fmt=st.sampled_from([FLOAT16, BFLOAT16, FLOAT32]),
       x=st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_narrow_rounds_once_correctly(fmt, x):
    if x == 0:
        return
    f = Fraction(x)
    expected = round_exact(f.numerator, -(f.denominator.bit_length() - 1), fmt)
    assert int(fmt.bits_of(narrow(np.array([x]), fmt))[0]) == expected


def test_narrow_avoids_the_bfloat16_double_rounding():
    x = np.array([1 + 2.0**-8 + 2.0**-30, -(1 + 2.0**-8 + 2.0**-30), 1e300, np.nan])
    got = narrow(x, BFLOAT16).astype(np.float64)
    assert got[0] == 1 + 2.0**-7 and got[1] == -(1 + 2.0**-7) and got[2] == np.inf
    assert np.isnan(got[3])


def test_ulp_of_takes_any_real_array():
    """float32 and integer arrays are read as the values they hold, not as their bits."""
    assert FLOAT16.ulp_of(np.array([1.0, 2.0], np.float32)).tolist() == [2.0**-10, 2.0**-9]
    assert FLOAT32.ulp_of([1, 4]).tolist() == [2.0**-23, 2.0**-21]


def test_hex_is_fixed_width():
    assert FLOAT32.hex(np.float32(2.0**-149)) == "0x00000001"
    assert FLOAT16.hex(np.float16(-0.0)) == "0x8000"
    assert FLOAT64.hex(5e-324) == "0x0000000000000001"


def test_step_keeps_the_format_and_crosses_zero_to_plus_zero():
    up = FLOAT16.step([1.0], 1)
    assert up.dtype == np.float16 and up.tolist() == [1 + 2.0**-10]
    zero = FLOAT32.step(np.float32(-(2.0**-149)), 1)
    assert zero.dtype == np.float32 and int(FLOAT32.bits_of(zero)) == 0


def test_narrow_returns_the_format_and_warns_of_nothing():
    import warnings

    x = np.array([1e300, -1e300, np.nan, np.inf, 1.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fmt in (FLOAT16, BFLOAT16, FLOAT32):
            got = narrow(x, fmt)
            assert got.dtype == fmt.dtype
            assert got.astype(np.float64)[[0, 1, 3, 4]].tolist() == [np.inf, -np.inf, np.inf,
                                                                       1.5]


@pytest.mark.parametrize("x, expected", [
    (1 + 2.0**-8, 1.0),  # a bfloat16 tie, exact in float32: to even, down
    (1 + 3 * 2.0**-8, 1 + 2.0**-6),  # a tie, exact in float32: to even, up
    (0.5 + 2.0**-9 - 2.0**-40, 0.5),  # below a tie; float32 rounds it up onto the tie
    (-(0.5 + 2.0**-9 - 2.0**-40), -0.5),
    (0.5 + 2.0**-9 + 2.0**-40, 0.5 + 2.0**-8),  # above a tie; float32 rounds it down onto it
])
def test_narrow_to_bfloat16_at_and_near_ties(x, expected):
    assert float(narrow(np.array([x]), BFLOAT16)[0]) == expected


def test_unknown_dtype_says_what_it_is():
    with pytest.raises(UsageError, match=r"^unknown dtype 'float8'; valid choices"):
        get_format("float8")
    with pytest.raises(UsageError, match=r"^unknown dtype 'int32'; valid choices"):
        get_format(np.dtype(np.int32))


def test_bfloat16_is_ml_dtypes_type():
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
    assert BFLOAT16.dtype == np.dtype(ml_dtypes.bfloat16)
    assert get_format(np.dtype(ml_dtypes.bfloat16)) is BFLOAT16


@pytest.mark.slow  # a process of its own
def test_a_float32_sweep_never_imports_ml_dtypes():
    """ml_dtypes' import is most of a command's start (NumPy registering each of its loops):
    the command line and a float32 sweep, which never meet a bfloat16, do without it."""
    import subprocess

    script = (
        "import sys\n"
        "from gelucheck.cli import main\n"
        "assert main(['sweep', '--backend', 'scipy:ndtr', '--function', 'phi', '--range',"
        " '0x3f800000:0x3f800100', '--workers', '1', '--no-progress']) == 0\n"
        "print('ml_dtypes' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "False"
