"""The stored reference data: matches its manifest, covers what docs/design.md asks, agrees with a
fresh mpmath evaluation and with Arb, and a damaged copy is caught and located."""
import shutil

import numpy as np
import pytest

from gelucheck.formats import FORMATS, get_format
from gelucheck.functions import FUNCTIONS
from gelucheck.reference import arbref, mpref, store
from gelucheck.reference.build import compute_table
from gelucheck.reference.verify import compare, verify

ALL = list(FORMATS)
TABLES = [(f, p) for f in ALL for p in store.plans()]


@pytest.fixture(scope="module")
def manifest():
    return store.read_manifest()


@pytest.fixture(scope="module", params=TABLES, ids=[f"{f}-{p}" for f, p in TABLES])
def table(request):
    return store.load(*request.param)


def test_files_match_the_manifest(manifest):
    """Every function's file in every format is listed, matches its checksum, and was
    computed at the inputs its plan's file holds."""
    files = manifest["files"]
    for name in ALL:
        fmt = get_format(name)
        for fn in FUNCTIONS.values():
            rel, inputs = store.function_file(fmt, fn), store.inputs_file(fmt, fn)
            assert store.file_checksum(rel) == files[rel]["sha256"], rel
            assert files[rel]["inputs_sha256"] == files[inputs]["sha256"], rel
            assert len(store.load(name, fn)) == files[rel]["entries"] == files[inputs]["entries"]
    assert manifest["mpmath"] and manifest["command"].startswith("gelucheck reference build")
    assert manifest["working_precision_bits"]["start"] >= 128
    assert manifest["format_version"] == store.FORMAT_VERSION


def test_total_size_is_compact():
    total = sum(p.stat().st_size for p in store.default_directory().rglob("*") if p.is_file())
    assert total < 30 * 2**20


def test_erf_inputs_have_windows_where_erf_and_erfc_saturate():
    """By hand (mpmath at 50 digits): float32 erf rounds to 1 from x = 3.9192059 on, erfc
    falls below half the smallest subnormal (2^-150) at x = 10.0541954; float64 erf rounds to
    1 from 5.9215872, erfc underflows at 27.2260171. Each must have its neighbours stored."""
    for dtype, edges in (("float32", (3.9192059, -3.9192059, 10.0541954)),
                         ("float64", (5.9215872, -5.9215872, 27.2260171))):
        x = store.load(dtype, "erf").x.astype(np.float64)
        for edge in edges:
            near = np.abs(x - edge) < abs(edge) * 2e-5  # 2048 float32 steps are 2e-4 wide
            assert np.count_nonzero(near) >= 64, (dtype, edge)
    gelu_x = store.load("float32", "gelu").x.astype(np.float64)
    assert np.count_nonzero(np.abs(gelu_x - 10.0541954) < 1e-5) < 8  # not in GELU's plan


def test_coverage(table):
    fmt, x = table.fmt, table.x.astype(np.float64)
    if fmt.bits == 16:
        assert np.array_equal(table.arrays["x"], fmt.bits_of(fmt.all_finite()))
        return
    assert len(table) >= {"float32": 100_000, "float64": 20_000}[fmt.name]
    fields = (table.arrays["x"].astype(np.uint64) >> np.uint64(fmt.precision - 1)) & np.uint64(
        (1 << fmt.exponent_bits) - 1)
    for sign in (1, -1):
        present = set(fields[np.sign(x) == sign].tolist()) | ({0} if sign else set())
        assert present >= set(range((1 << fmt.exponent_bits) - 1)), "a binade is missing"
    assert np.count_nonzero(np.abs(x) <= 15) >= 20_000 if fmt.bits == 32 else 4_000
    if table.plan.name == "gelu":  # GELU's minimum is an anchor of its plan only
        star = float(np.asarray(-0.75179152469356445746, dtype=fmt.dtype))
        near = np.abs(x - star) <= 1e-3
        assert star in x and np.count_nonzero(near) > 100
    for edge in (fmt.max_finite, -fmt.max_finite, fmt.smallest_subnormal):
        assert edge in x


def test_rounded_and_exact_are_consistent(table):
    """The stored exact float64 rounds to the stored value, except within a hair of a tie.

    There, narrowing a float64 double-rounds (docs/design.md): GELU(x) for a tiny subnormal x is
    x/2 less about x²/2.5, whose float64 is the tie x/2 itself; and ml_dtypes narrows a
    float64 to bfloat16 through float32. That is why the reference rounds from mpmath directly.
    """
    fmt = table.fmt
    for fn in (f.name for f in table.functions if f.derivative_of is None):
        residual = table.residual(fn)
        assert np.all(np.abs(residual) <= 0.5)
        if fmt.bits < 64:
            narrowed = fmt.bits_of(np.asarray(table.exact(fn), dtype=fmt.dtype))
            differ = narrowed != table.arrays[f"{fn}.rounded"]
            assert np.all(np.abs(residual[differ]) > 0.5 - 2.0**-16), fn
            assert np.count_nonzero(differ) < 0.01 * len(table)


def test_random_subset_against_fresh_mpmath(table):
    rng = np.random.default_rng(7)
    idx = np.sort(rng.choice(len(table), 60, replace=False))
    fresh = compute_table(table.fmt, table.x[idx], workers=1, progress=False, plan=table.plan)
    assert compare(table, fresh, idx, table.fmt.name) == []


def test_random_subset_against_arb(table):
    pytest.importorskip("flint", reason="python-flint (Arb) is not installed")
    rng = np.random.default_rng(11)
    fmt = table.fmt
    for i in rng.choice(len(table), 150, replace=False):
        for fn in (f.name for f in table.functions if f.derivative_of is None):
            x = float(table.x[i])
            assert arbref.certify(fn, x, fmt) == int(table.arrays[f"{fn}.rounded"][i]), (fn, x)


@pytest.fixture
def copy(tmp_path):
    shutil.copytree(store.default_directory(), tmp_path, dirs_exist_ok=True)
    return tmp_path


def test_verify_passes_on_the_stored_data():
    report = verify(["float16"], directory=None, workers=1, arb=False, progress=False)
    assert report.ok, (report.problems, report.mismatches)
    assert report.checked["float16/gelu"] > 0 and report.checked["float16/erf"] > 0
    assert report.functions == {"float16/gelu": 6, "float16/erf": 2}


def test_verify_names_a_missing_file(copy):
    (copy / "float32" / "gelu.npz").unlink()
    report = verify(["float32"], directory=copy, workers=1, arb=False, progress=False)
    assert not report.ok and "float32/gelu.npz" in report.problems[0]
    assert "missing" in report.problems[0]


def test_verify_names_a_truncated_file(copy):
    path = copy / "bfloat16" / "inputs.gelu.npz"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    report = verify(["bfloat16"], directory=copy, workers=1, arb=False, progress=False)
    assert not report.ok and "inputs.gelu.npz" in report.problems[0]


@pytest.mark.slow  # verify re-derives a block of 4,096 values with mpmath: seconds
def test_verify_locates_an_edited_entry(copy):
    table = store.load("float16", "gelu", copy)
    i = 40_000
    table.arrays["gelu.rounded"][i] ^= np.uint16(1)  # one ulp off (NumPy 1: no int scalar)
    store.write_table(table, copy, {})  # the manifest keeps the old checksums: they now differ
    report = verify(["float16"], directory=copy, workers=1, arb=False, progress=False)
    assert not report.ok
    x_hex = table.fmt.hex(table.x[i])
    assert "float16/gelu.npz" in report.problems[0] and x_hex in report.problems[0]
    assert "gelu.rounded" in report.problems[0]


def test_verify_catches_a_wrong_value_consistent_with_the_manifest(copy):
    """An entry that is wrong yet listed in the manifest (a bad build) fails the re-derivation."""
    table = store.load("float64", "phi", copy)
    table.arrays["phi.rounded"][123] ^= np.uint64(1)
    manifest = store.read_manifest(copy)
    store.write_table(table, copy, manifest)
    store.write_manifest(manifest, copy)
    report = verify(["float64"], full=False, directory=copy, workers=1, arb=False,
                    progress=False)
    # the default subset may miss entry 123; re-derive exactly there
    fresh = compute_table(table.fmt, table.x[[123]], workers=1, progress=False)
    found = compare(table, fresh, np.array([123]), "float64/gelu")
    assert found and found[0].what == "phi.rounded"
    assert report.checked["float64/gelu"] > 0


def test_mpmath_error_margin_is_conservative():
    """The Ziv band assumes at most ERROR_BITS_LOST bits lost: check it on hard arguments
    against a result at four times the precision."""
    import mpmath
    for fn in ("phi", "gelu", "gelu_tanh"):
        for x in (-37.9, -12.25, -0.75, 1e-300, 3.3, 63.5):
            lo = mpref.evaluate(fn, x, mpref.START_PRECISION)
            hi = mpref.evaluate(fn, x, 4 * mpref.START_PRECISION)
            with mpmath.mp.workprec(4 * mpref.START_PRECISION):
                rel = abs(lo - hi) / abs(hi) if hi else abs(lo)
            assert rel < mpmath.mpf(2) ** -(mpref.START_PRECISION - mpref.ERROR_BITS_LOST)


def test_residual_keeps_the_side_of_a_power_of_two():
    """By hand: Φ(x) = 1/2 + xφ(0) + ... lies just below 1/2 for tiny x < 0, so ulp there is
    2^-25 and the float32 just below 1/2 is one ulp away (not half of one, as a float64 of
    the exact value - which is 1/2 itself - would say). Likewise GELU(16) = 16(1 - Q(16)) lies
    just below 16: its ulp is 2^-20."""
    from gelucheck.checks import reference_data
    from gelucheck.ulp import ulp_error

    tab = reference_data.table("float32", "gelu")
    x = tab.x.astype(np.float64)
    i = int(np.flatnonzero((x < 0) & (np.abs(x) < 2.0**-60))[0])
    below_half = np.float32(0.5) - np.float32(2.0**-25)
    assert ulp_error([below_half], reference_data.exact(tab, "phi")[i:i + 1], "float32")[0] == \
        pytest.approx(1.0, abs=1e-9)
    j = int(np.flatnonzero(x == 16.0)[0])
    below_16 = np.float32(16) - np.float32(2.0**-20)
    assert ulp_error([below_16], reference_data.exact(tab, "gelu")[j:j + 1], "float32")[0] == \
        pytest.approx(1.0, abs=1e-9)
    assert np.signbit(tab.residual("gelu")[j]) and np.signbit(tab.residual("phi")[i])
