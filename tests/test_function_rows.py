"""A function is one row: every facet the code asks for is present or explicitly absent, and a
new row (a toy, Φ(2x)) gets data of its own with `reference build --function` and is measured
through `check` - leaving every other function's files byte for byte as they were."""
import hashlib
import json
import shutil

import mpmath
import numpy as np
import pytest

from gelucheck import functions
from gelucheck.cli import main
from gelucheck.errors import UsageError
from gelucheck.formats import FLOAT32
from gelucheck.functions import FUNCTIONS, Function
from gelucheck.reference import arbformulas, mpformulas, store
from gelucheck.reference.plans import GELU_FAMILY, InputPlan


@pytest.mark.parametrize("function", FUNCTIONS.values(), ids=str)
def test_every_row_has_every_facet_or_says_why_not(function):
    assert callable(function.mp) and function.description
    assert function.family in functions._LIMITS and function.family in functions._SIDES
    assert callable(function.arb)  # every function has its certified second reference
    assert isinstance(function.inputs, InputPlan)
    for name in (function.approximates, function.derivative_of):
        assert name is None or name in FUNCTIONS
    assert (function.curvature is not None) == function.has_minimum
    if function.no_sweep is None:  # the module its row names computes its reference
        from gelucheck.sweep.reference import module_of, spec

        module = module_of(function)
        assert function in module.FUNCTIONS and function in module.SPECS
        facts = spec(function)  # its parts in order, the tiny part inside (-1, 1)
        assert facts.far_left < 0 < facts.right_edge and 0 <= facts.known_tiny < 1
    else:
        with pytest.raises(UsageError, match=f"no exhaustive sweep of {function.name}"):
            function.require_sweep()


@pytest.mark.parametrize("function", [f for f in FUNCTIONS.values() if f.has_minimum], ids=str)
def test_the_curvature_is_f_second_derivative_at_the_minimum(function):
    """The row's curvature sizes the minimum's window: within 1% of mpmath's f''(x*)."""
    with mpmath.mp.workdps(30):
        x = mpmath.findroot(function.mp_derivative, mpmath.mpf("-0.75"))
        exact = float(mpmath.diff(function.mp_derivative, x))
    assert function.curvature == pytest.approx(exact, rel=0.01)


def test_the_limits_of_erf_and_erfc_are_their_own():
    """By hand: erf(±inf) = ±1, erfc(-inf) = 2, erfc(+inf) = +0; erf(-0) = -0 is negative."""
    assert functions.ERF.limits == {"+inf": 1.0, "-inf": -1.0, "nan": functions.ERF.limits["nan"]}
    assert functions.ERFC.limits["-inf"] == 2.0 and functions.ERFC.limits["+inf"] == 0.0
    assert functions.ERF.zero_is_negative(-0.0) and not functions.ERFC.zero_is_negative(-1.0)
    # erfc(x) = 1 - 2x/√π near 0: just below 1 for tiny x > 0, above for x < 0
    assert functions.ERFC.residual_side(1e-30) < 0 < functions.ERFC.residual_side(-1e-30)


def _phi_twice(x):
    return mpformulas.phi(2 * x)


TOY = Function("phi_twice", "Φ(2x), the CDF of N(0, 1/4): a toy row", functions.CDF,
               _phi_twice, arb=lambda a: arbformulas.phi(2 * a), inputs=GELU_FAMILY,
               no_sweep="a toy")


def _hashes(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in folder.rglob("*.npz")}


@pytest.mark.slow  # builds 63,488 values with mpmath and runs `check` twice
def test_a_new_row_builds_its_own_data_and_is_measured(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "reference"
    shutil.copytree(store.default_directory(), folder)
    before = _hashes(folder)
    monkeypatch.setitem(FUNCTIONS, TOY.name, TOY)
    monkeypatch.setenv("GELUCHECK_REFERENCE", str(folder))
    assert main(["reference", "build", "--function", "phi_twice", "--dtype", "float16",
                 "--workers", "1", "--directory", str(folder)]) == 0  # in this process
    after = _hashes(folder)
    assert set(after) - set(before) == {"float16/phi_twice.npz"}
    assert {k: after[k] for k in before} == before  # no other file moved by a byte
    entry = store.read_manifest(folder)["files"]["float16/phi_twice.npz"]
    assert entry["inputs_sha256"] == store.read_manifest(folder)["files"][
        "float16/inputs.gelu.npz"]["sha256"]
    table = store.load("float16", TOY, folder)
    x = table.x.astype(np.float64)
    i = int(np.flatnonzero(x == 0.5)[0])  # Φ(1) = 0.841344746...: float16 0.8413 (0x3abb)
    assert table.rounded(TOY)[i] == np.float16(0.84134474606854293)

    (tmp_path / "toy.py").write_text(
        "import numpy as np\nfrom scipy import special\n"
        "def phi_twice(x):\n"
        "    return special.ndtr(2 * x.astype(np.float64)).astype(x.dtype)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    out_json = tmp_path / "toy.json"
    status = main(["check", "--impl", "toy:phi_twice", "--function", "phi_twice",
                   "--dtype", "float16", "--max-ulp", "0.5", "--no-progress",
                   "--json", str(out_json)])
    assert status == 0, capsys.readouterr()
    (result,) = [r for r in json.loads(out_json.read_text())["results"]
                 if r.get("kind", "accuracy") == "accuracy"]
    assert result["function"] == "phi_twice" and result["max_ulp"] <= 0.5

    (tmp_path / "toy.py").write_text(  # Φ(x) where Φ(2x) was asked: found, and fails
        "import numpy as np\nfrom scipy import special\n"
        "def phi_twice(x):\n"
        "    return special.ndtr(x.astype(np.float64)).astype(x.dtype)\n")
    import sys
    sys.modules.pop("toy", None)
    assert main(["check", "--impl", "toy:phi_twice", "--function", "phi_twice",
                 "--dtype", "float16", "--max-ulp", "0.5", "--no-progress"]) == 1


def test_a_row_without_data_is_refused_with_the_command_that_builds_it(monkeypatch):
    monkeypatch.setitem(FUNCTIONS, TOY.name, TOY)
    from gelucheck.errors import ReferenceDataError

    with pytest.raises(ReferenceDataError, match="reference build --function phi_twice"):
        store.load(FLOAT32, TOY)


def test_a_row_whose_sweep_module_has_no_reference_for_it_is_refused_by_name():
    from gelucheck.sweep.reference import require

    unswept = Function("phi_thrice", "Φ(3x): a row with no fast reference", functions.CDF,
                       lambda x: TOY.mp(x))
    with pytest.raises(UsageError, match=r"gelucheck\.sweep\.fastref, which its row names, "
                       "computes no reference for it"):
        require(unswept)
    with pytest.raises(UsageError, match="no exhaustive sweep of phi_twice: a toy"):
        require(TOY)
