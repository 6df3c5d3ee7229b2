"""The table of proven inputs (sweep/proof_table.py, data/sweep_proofs.npz): its entries are
the correctly rounded results mpmath and Arb give, the sweep's figures are the same with it
as with every input proven afresh, it holds the doubts the compiled loops leave today, and a
damaged copy is refused by name."""
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gelucheck.cli import main
from gelucheck.errors import ReferenceDataError
from gelucheck.formats import FLOAT32
from gelucheck.functions import get_function, sweepable
from gelucheck.reference import arbref
from gelucheck.reference.mpref import correctly_rounded
from gelucheck.sweep import loops, proof_table, proofs, reference
from gelucheck.sweep.inputs import encodings

SWEEPABLE = sorted(f.name for f in sweepable())
# blocks of 2^18 with inputs in doubt: most lie where |x| is small, in the series' pieces
# (near the ties at x/2 and 1/2); some beyond (φ near 0.1, erfc near 3.4)
BLOCKS = [("gelu", 0x33480000), ("gelu", 0xB38C0000), ("gelu", 0x3A100000),
          ("phi", 0x33A00000), ("gelu_grad", 0xB2A00000), ("phi_grad", 0x390C0000),
          ("phi_grad", 0x3DCC0000), ("gelu_tanh", 0x33480000), ("gelu_tanh", 0xBB340000),
          ("gelu_tanh_grad", 0xB2A00000), ("gelu_tanh_grad", 0x3B0C0000),
          ("erf", 0xB7B80000), ("erfc", 0x32E00000), ("erfc", 0x40580000)]


def _compiled():
    if loops.kernels() is None:
        pytest.skip("numba is not installed (pip install 'gelucheck[fast]'): the table holds "
                    "the compiled loops' doubts")


def _block(start, n=1 << 18):
    return encodings(start, start + n).view(np.float32)


def _sign(side):
    return int(math.copysign(1, side))


def test_every_sweepable_function_has_its_entries():
    table = proof_table.table()
    assert sorted(table) == SWEEPABLE
    assert all(len(table[name].x) > 100 for name in SWEEPABLE)


@pytest.mark.parametrize("name", SWEEPABLE)
def test_a_random_sample_of_entries_is_mpmaths_correct_rounding(name):
    """mpmath's Ziv loop, independent of Arb that made the table: the float32, the float64
    and the side of the exact value, for 12 entries drawn at random."""
    f, proven = get_function(name), proof_table.table()[name]
    for j in np.random.default_rng(11).choice(len(proven.x), 12, replace=False):
        x = float(FLOAT32.from_bits(proven.x[j]))
        mp = correctly_rounded(f, x, FLOAT32)
        assert (int(proven.bits[j]), int(proven.bits64[j])) == (mp.bits, mp.float64_bits), x
        assert proven.side[j] == _sign(mp.residual), x


@pytest.mark.slow  # every entry of every function, by Arb
@pytest.mark.parametrize("name", SWEEPABLE)
def test_every_entry_is_arbs_proof(name):
    f, proven = get_function(name), proof_table.table()[name]
    for x, bits, bits64, side in zip(FLOAT32.from_bits(proven.x), proven.bits, proven.bits64,
                                     proven.side):
        assert arbref.rounded(f, float(x), FLOAT32) == (bits, bits64, side), float(x)


@pytest.mark.parametrize("name, start", BLOCKS)
def test_the_table_holds_every_doubt_the_loops_leave_today(name, start):
    """A table made before a change of the loops' bounds or pieces would send the inputs now
    in doubt to Arb again: the figures stay right, the sweep slows. Rewrite it."""
    _compiled()
    with proofs.afresh() as proven:
        reference.values_and_doubts(name, _block(start), monotone=True)
    assert proven, "no input in doubt in this block: choose another"
    stored = proof_table.table()[name]
    missing = [x for _, x, _ in proven
               if stored.find(np.array([x], dtype=np.float32).view(np.uint32))[0] < 0]
    assert not missing, (f"{len(missing)} of {len(proven)} not in the table, e.g. "
                         f"{missing[0]!r}: rewrite it with scripts/make-proof-table.py")


@pytest.mark.parametrize("name, start", BLOCKS[::3])
def test_the_reference_from_the_table_is_the_one_proven_afresh(name, start, monkeypatch):
    """Bit for bit: v, unit and the inputs in doubt; and from the table no input is proven."""
    _compiled()
    x = _block(start)
    with proofs.afresh() as proven:
        fresh = reference.values_and_doubts(name, x, monotone=True)
    assert proven

    def refuse(function, xi):
        raise AssertionError(f"{function.name}({xi!r}) proven, not read from the table")

    monkeypatch.setattr(proofs, "resolve", refuse)
    stored = reference.values_and_doubts(name, x, monotone=True)
    for a, b in zip(fresh, stored):
        assert np.array_equal(a.view(np.uint64) if a.dtype == np.float64 else a,
                              b.view(np.uint64) if b.dtype == np.float64 else b)


def test_an_input_not_in_the_table_is_proven(monkeypatch):
    """A float32 the table lacks, and a float64 that is no float32 (not looked up at all):
    each proven, its v rounding to mpmath's correctly rounded float32."""
    f = get_function("gelu")
    stored = proof_table.table()["gelu"]
    absent = next(b for b in range(0x3F800000, 0x3F800100)
                  if stored.find(np.array([b], dtype=np.uint32))[0] < 0)
    x = np.array([float(FLOAT32.from_bits(np.uint32(absent))), 1.0 + 2.0**-40])
    asked = []
    resolve = proofs.resolve
    monkeypatch.setattr(proofs, "resolve", lambda fn, xi: asked.append(xi) or resolve(fn, xi))
    v, unit = np.empty(2), np.empty(2)
    proofs.resolve_all(f, x, np.arange(2), v, unit)
    assert asked == x.tolist()
    assert proof_table.encodings_of(x) is None
    for xi, vi in zip(x, v):
        assert np.float32(vi).view(np.uint32) == correctly_rounded(f, float(xi), FLOAT32).bits


def _damaged(tmp_path, damage):
    path = tmp_path / "sweep_proofs.npz"
    proof_table.write(proof_table.table(), path)
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:5000])
    elif damage == "entry":  # one float64 moved by an ulp, the digest kept
        with np.load(path) as data:
            arrays = {name: data[name] for name in data.files}
        arrays["gelu.bits64"] = arrays["gelu.bits64"].copy()
        arrays["gelu.bits64"][7] += 1
        np.savez_compressed(path, **arrays)
    elif damage == "order":  # two entries swapped, the digest made anew
        table = dict(proof_table.table())
        g = table["gelu"]
        swap = np.arange(len(g.x))
        swap[[3, 4]] = [4, 3]
        table["gelu"] = proof_table.Proven(*(getattr(g, f)[swap] for f in proof_table.FIELDS))
        proof_table.write(table, path)
    return path


@pytest.mark.parametrize("damage", ["truncated", "entry", "order"])
def test_a_damaged_table_is_refused_with_its_name(tmp_path, damage):
    path = _damaged(tmp_path, damage)
    with pytest.raises(ReferenceDataError, match=str(path)):
        proof_table.table(path)


def test_a_sweep_with_a_damaged_table_is_refused_before_any_work(tmp_path, monkeypatch,
                                                                 capsys):
    path = _damaged(tmp_path, "entry")
    monkeypatch.setattr(proof_table, "PATH", path)
    assert main(["sweep", "--backend", "scipy:x*ndtr", "--function", "gelu", "--range",
                 "0x3f800000:0x3f800100", "--workers", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "make-proof-table.py" in err and "Traceback" not in err


def _make(*argv):
    script = Path(__file__).parents[1] / "scripts" / "make-proof-table.py"
    return subprocess.run([sys.executable, str(script), *argv], text=True,
                          capture_output=True, timeout=300)


def test_the_script_writes_the_doubts_of_a_range_and_keeps_the_other_functions(tmp_path):
    """Two runs into one file: the second function's entries join the first's; each is the
    range's inputs in doubt (those the reference proves there afresh), mpmath's rounding."""
    _compiled()
    out = tmp_path / "t.npz"
    for name, start in (("gelu_tanh", 0x33480000), ("erfc", 0x32E00000)):
        done = _make(name, "--range", f"{start:#x}:{start + (1 << 18):#x}", "--out", str(out),
                     "--workers", "1")
        assert done.returncode == 0, done.stderr[-2000:]
        with proofs.afresh() as proven:
            reference.values_and_doubts(name, _block(start), monotone=True)
        made = proof_table.table(out)[name]
        expected = sorted(np.array([x for _, x, _ in proven], np.float32).view(np.uint32))
        assert made.x.tolist() == expected and len(expected) > 5
        f = get_function(name)
        for j in (0, len(made.x) // 2, len(made.x) - 1):
            mp = correctly_rounded(f, float(FLOAT32.from_bits(made.x[j])), FLOAT32)
            assert (made.bits[j], made.bits64[j]) == (mp.bits, mp.float64_bits)
    assert sorted(proof_table.table(out)) == ["erfc", "gelu_tanh"]


def test_the_script_refuses_a_function_it_cannot_sweep():
    done = _make("gelu", "nope", "--out", "/nonexistent/t.npz")
    assert done.returncode != 0 and "not sweepable: nope; choose from" in done.stderr


def test_verify_rederives_a_sample_of_each_function_and_finds_the_shipped_table_right():
    found = proof_table.verify(["gelu", "erfc"], arb=False)
    assert found.ok and found.checked == {"gelu": proof_table.DEFAULT_SUBSET,
                                          "erfc": proof_table.DEFAULT_SUBSET}


def test_reference_verify_names_an_entry_that_is_not_the_correct_rounding(tmp_path,
                                                                          monkeypatch, capsys):
    """A table whose digest holds but whose float64s are each one step off (made so, not
    damaged in transit): `gelucheck reference verify` exits 1 naming the function and x."""
    table = dict(proof_table.table())
    g = table["gelu"]
    table["gelu"] = proof_table.Proven(g.x, g.bits, g.bits64 + np.uint64(1), g.side)
    path = tmp_path / "sweep_proofs.npz"
    proof_table.write(table, path)
    monkeypatch.setattr(proof_table, "PATH", path)
    assert main(["reference", "verify", "--dtype", "float32", "--function", "gelu",
                 "--no-arb"]) == 1
    out = capsys.readouterr().out
    assert "sweep proofs (sweep_proofs.npz): 50 entries of 1 functions" in out
    assert re.search(rf"ERROR {re.escape(str(path))}: gelu at x=\S+ \(0x[0-9a-f]{{8}}\): "
                     r"stored \(\d+, \d+, -?1\), mpmath", out)
    assert "reference data FAILED verification" in out


@pytest.mark.slow  # the reference of every block of every sweepable function: minutes
def test_the_shipped_table_is_what_the_script_makes_today(tmp_path):
    """Every input the loops leave in doubt today, and no other: a change of the loops that
    moves their doubts asks for the table to be rewritten (the sample of blocks above finds
    most such changes in the default run)."""
    _compiled()
    out = tmp_path / "t.npz"
    done = _make("--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    made, shipped = proof_table.table(out), proof_table.table()
    assert sorted(made) == sorted(shipped)
    for name in made:
        for field in proof_table.FIELDS:
            assert np.array_equal(getattr(made[name], field), getattr(shipped[name], field)), (
                f"{name}.{field} differs: rewrite the table with scripts/make-proof-table.py")


def test_a_rewritten_table_is_read_again_by_resolve_all(monkeypatch):
    """resolve_all's table of made values follows the table itself: a table read again (a
    file rewritten) with another answer for an input gives that answer, not the one made
    from the table before."""
    f = get_function("gelu")
    stored = proof_table.table()["gelu"]
    x = stored.x[:1].view(np.float32)
    before, unit = np.empty(1), np.empty(1)
    proofs.resolve_all(f, x, np.arange(1), before, unit)
    other = proof_table.Proven(stored.x, stored.bits, stored.bits64 + np.uint64(4), stored.side)
    monkeypatch.setattr(proof_table, "entries", lambda name: other if name == "gelu" else None)
    after = np.empty(1)
    proofs.resolve_all(f, x, np.arange(1), after, unit)
    # 4 float64 steps up (the float64 stored was not moved: no float32 nor midpoint there)
    assert after.view(np.uint64)[0] != before.view(np.uint64)[0]
    assert after[0] == float(other.bits64[:1].view(np.float64)[0])
