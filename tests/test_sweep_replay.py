"""Blocks of erf's part below 2^-30 replayed from an earlier binade (sweep/replay.py): a
replayed block's figures are those of scoring it in full, bit for bit - its inputs in doubt
among them -, and a replay is refused wherever one of its conditions fails: outputs that do
not scale, a doubt whose proven value does not, outputs too far from their products to keep,
no memory left."""
import numpy as np
import pytest

from gelucheck.backends import find, load_user
from gelucheck.functions import ERF, ERFC, GELU
from gelucheck.sweep import chunk, loops, reference, replay
from sweep_support import plain

pytest.importorskip("numba", reason="the erf family's sweep reference is compiled (numba)")

BLOCK = chunk.COMPILED_BLOCK  # a block in erf's middle: a replay is one of them
FIELDS = (40, 41, 77)  # three binades of |x| below 2^-30: a source and two replays


@pytest.fixture(autouse=True)
def _fresh(monkeypatch, request):
    monkeypatch.syspath_prepend(str(request.config.rootpath / "tests"))
    replay.clear()
    yield
    replay.clear()


@pytest.fixture
def count(monkeypatch):
    """How many blocks replay.replayed replayed and refused."""
    seen = {"replayed": 0, "refused": 0}
    real = replay.replayed

    def counting(*args):
        out = real(*args)
        seen["replayed" if out is not None else "refused"] += 1
        return out

    monkeypatch.setattr(replay, "replayed", counting)
    return seen


def _doubtful_offset() -> int:
    """The first block of binade 40 whose inputs include some in doubt (proven by Arb)."""
    for offset in range(0, 1 << 23, BLOCK):
        start = (40 << 23) + offset
        x = np.arange(start, start + BLOCK, dtype=np.uint32).view(np.float32)
        if len(reference.values_and_doubts(ERF, x, monotone=True)[2]):
            return offset
    raise AssertionError("no block of binade 40 with an input in doubt")


def _impls(*names):
    return [find(n)[0] if n.startswith("libm:") else load_user(n, "erf") for n in names]


def _figures(impls, starts):
    """Each block's figures, as plain data, in order."""
    return [plain(chunk.evaluate(impls, ERF, s, s + BLOCK)) for s in starts]


def _in_full(monkeypatch, impls, starts):
    with monkeypatch.context() as m:
        m.setattr(replay, "applies", lambda *args: False)
        return _figures(impls, starts)


@pytest.mark.parametrize("sign", [0, 1 << 31], ids=["positive", "negative"])
def test_a_replayed_block_has_the_figures_of_scoring_it_in_full(monkeypatch, count, sign):
    offset = _doubtful_offset()
    starts = [sign | field << 23 | offset for field in FIELDS]
    impls = _impls("libm:erff", "sweep_impls:erff_one_up", "sweep_impls:erf_scipy_once")
    replayed = _figures(impls, starts)
    assert count["replayed"] == 2 * len(impls)  # every implementation, in both later binades
    in_full = _in_full(monkeypatch, impls, starts)
    assert replayed == in_full
    assert all(f["n_slow_reference"] > 0 for f in in_full)  # doubts proven, and counted
    one_up = in_full[2]["implementations"]["user:sweep_impls:erff_one_up/erf"]
    assert one_up["not_correctly_rounded"] >= BLOCK // 5  # a figure that is not all zeros


def test_outputs_that_do_not_scale_are_scored_in_full(monkeypatch, count):
    from sweep_impls import PLANTED_BINADE

    offset = PLANTED_BINADE % (1 << 23) // BLOCK * BLOCK
    starts = [field << 23 | offset for field in FIELDS]
    impls = _impls("sweep_impls:erff_planted_binade")
    replayed = _figures(impls, starts)
    assert count["replayed"] == 0  # 41 has the planted input, 77 not: neither is 40's or 41's
    assert replayed == _in_full(monkeypatch, impls, starts)
    planted = replayed[1]["implementations"]["user:sweep_impls:erff_planted_binade/erf"]
    assert planted["worst_bits"] == PLANTED_BINADE and planted["max_ulp"] > 0.5


def test_a_doubt_whose_proven_value_does_not_scale_stops_the_replay(monkeypatch, count):
    offset = _doubtful_offset()
    starts = [field << 23 | offset for field in FIELDS]
    impls = _impls("libm:erff")
    real = replay.proven

    def nudged(function, x):  # a proven value one float64 step from the source's, scaled
        v, unit = real(function, x)
        return np.nextafter(v, np.inf), unit

    monkeypatch.setattr(replay, "proven", nudged)
    assert _figures(impls, starts) == _in_full(monkeypatch, impls, starts)
    assert count["replayed"] == 0  # (the same blocks replay unnudged: the first test)


@pytest.mark.parametrize("case", ["far from the products", "no memory"])
def test_a_block_that_cannot_be_a_source_is_never_replayed(monkeypatch, count, case):
    starts = [field << 23 for field in FIELDS]
    impls = _impls("sweep_impls:erf_as_x" if case == "far from the products" else "libm:erff")
    if case == "no memory":
        monkeypatch.setattr(replay, "MEMORY", BLOCK - 1)
    assert _figures(impls, starts) == _in_full(monkeypatch, impls, starts)
    assert count["replayed"] == 0


def _f32(x: float) -> int:
    return int(np.float32(x).view(np.uint32))


@pytest.mark.parametrize(("function", "start", "stop", "expected"), [
    (ERF, _f32(2.0**-126), _f32(2.0**-126) + BLOCK, True),  # the smallest normal binade
    (ERF, _f32(-(2.0**-31)), _f32(-(2.0**-31)) + BLOCK, True),
    (ERF, _f32(2.0**-30) - BLOCK, _f32(2.0**-30), True),  # the last block below 2^-30
    (ERF, _f32(2.0**-30), _f32(2.0**-30) + BLOCK, False),  # the series from 2^-30 on
    (ERF, 0x00100000, 0x00100000 + BLOCK, False),  # subnormal x
    (ERF, _f32(2.0**-40) - BLOCK // 2, _f32(2.0**-40) + BLOCK // 2, False),  # two binades
    (ERFC, _f32(2.0**-40), _f32(2.0**-40) + BLOCK, False),  # 1 - 2x/√π: no scaling
    (GELU, _f32(2.0**-40), _f32(2.0**-40) + BLOCK, False),
])
def test_replays_apply_to_erf_below_2_to_the_minus_30_alone(function, start, stop, expected):
    assert replay.applies(function, start, stop) is expected


def test_the_outputs_test_is_the_same_without_the_compiled_loops(monkeypatch):
    start, n, slope = _f32(2.0**-50), 4096, 2 / np.sqrt(np.pi)
    x = np.arange(start, start + n, dtype=np.uint32).view(np.float32)
    y = (x.astype(np.float64) * slope).astype(np.float32).view(np.uint32)
    delta = (y.astype(np.int64) - replay._products(start, n, slope).astype(np.int64))
    delta = delta.astype(np.int8)
    off = y.copy()
    off[-1] += 1
    compiled = [replay._near_product(b, start, slope, delta) for b in (y, off)]
    monkeypatch.setattr(loops, "kernels", lambda: None)
    assert [replay._near_product(b, start, slope, delta) for b in (y, off)] == compiled
    assert compiled == [True, False]


@pytest.mark.parametrize("far", [0, 127, 128, -128, -129])
def test_a_sources_deltas_are_the_same_without_the_compiled_loops(monkeypatch, far):
    """The outputs less their products as bytes, the exponent fields the outputs and products
    span, and the largest difference - which says whether a byte kept them - computed here
    from the floats' exponents and encodings, and alike with the loops or without."""
    start, n, slope = _f32(2.0**-50), 4096, 2 / np.sqrt(np.pi)
    x = np.arange(start, start + n, dtype=np.uint32).view(np.float32)
    product = (x * np.float32(slope)).view(np.uint32).astype(np.int64)
    y = (x.astype(np.float64) * slope).astype(np.float32).view(np.uint32).copy()
    y[n // 3] = product[n // 3] + far
    differences = y.astype(np.int64) - product
    exponents = np.frexp(np.concatenate([y.view(np.float32), x * np.float32(slope)]))[1]
    fields = (int(exponents.min()) + 126, int(exponents.max()) + 126)  # 2^(f-127) <= |v|
    expected = (*fields, int(np.abs(differences).max()))
    compiled = replay._deltas(y, start, slope)
    assert compiled[1] == expected and expected[2] == max(abs(far), 1)
    assert np.array_equal(compiled[0], (differences % 256).astype(np.uint8).view(np.int8))
    monkeypatch.setattr(loops, "kernels", lambda: None)
    numpy = replay._deltas(y, start, slope)
    assert numpy[1] == expected and np.array_equal(numpy[0], compiled[0])


def test_a_replay_whose_outputs_would_leave_the_normal_range_is_refused(count):
    """A source whose outputs reach down to the exponent field 30, replayed 37 binades
    lower: those would be subnormal, which no exponent shift gives."""
    import dataclasses

    impls = _impls("libm:erff")
    source, target = 77 << 23, 40 << 23
    _figures(impls, [source])
    (key, kept), = replay._sources.items()
    replay._sources[key] = dataclasses.replace(kept, fields=(30, kept.fields[1]))
    _figures(impls, [target])
    assert count["replayed"] == 0
    replay._sources[key] = kept  # as it was: the same replay holds
    _figures(impls, [target])
    assert count["replayed"] == 1


@pytest.mark.parametrize("order", ["descending", "shuffled"])
def test_the_inputs_in_doubt_are_named_in_the_inputs_own_order(order):
    """reference.values_and_doubts, whose indices a source keeps, on the general path too:
    the same inputs as in the ascending run, at their positions in the order given."""
    start = 40 << 23 | _doubtful_offset()
    x = np.arange(start, start + BLOCK, dtype=np.uint32).view(np.float32)
    v, _, at = reference.values_and_doubts(ERF, x, monotone=True)
    assert len(at)
    rng = np.random.default_rng(5)
    moved = np.arange(BLOCK)[::-1] if order == "descending" else rng.permutation(BLOCK)
    v_moved, _, at_moved = reference.values_and_doubts(ERF, x[moved])
    assert at_moved.tolist() == np.flatnonzero(np.isin(moved, at)).tolist()
    assert np.array_equal(v_moved, v[moved])
