"""The negative half of erf's sweep read off the positive half (sweep/mirror.py): the same
figures as each task measured alone, whichever implementations are odd; the reference
computed only where a block is not a mirror; the tasks paired only where the reference is
exactly odd."""
import mpmath
import numpy as np
import pytest

from gelucheck.backends import load_user
from gelucheck.functions import ERF, get_function, sweepable
from gelucheck.sweep import chunk, loops, mirror, reference, runner
from gelucheck.sweep.constants import ERF_FAR
from gelucheck.sweep.stats import merge_all, results
from sweep_support import plain

SIGN = mirror.SIGN
# erf's sweep reference is compiled: its tests sweep nothing without numba
compiled = pytest.mark.skipif(loops.kernels() is None, reason="the erf family's sweep "
                              "reference is compiled (numba): pip install 'gelucheck[fast]'")
# positive tasks (each paired with its mirror): blocks about 1, whose negative first block
# holds -1 and so two regions; the subnormals, whose negative first block holds -0 (in [0, 1)
# as +0 is); blocks of erf's series
TASKS = [(0x3F780000, 0x3F880000), (0x00000000, 0x00080000), (0x3D000000, 0x3D100000)]
# the negative blocks that are no mirror of their positive block in one region
TWO_REGIONS = {0xBF800000, 0x80000000}


def _impls(*names):
    return [load_user(f"sweep_impls:{name}", "erf") for name in names]


def _job(task):
    return task, mirror.mirror_of(task)


@pytest.fixture
def blocks_computed(monkeypatch):
    """The first encoding of every block whose reference was computed in full."""
    seen = []
    real = chunk._Reference.values

    def values(self):
        if not self.computed:
            seen.append(self.start)
        return real(self)

    monkeypatch.setattr(chunk._Reference, "values", values)
    return seen


@compiled
@pytest.mark.parametrize("names", [
    ("erf_odd",), ("erff_one_up",), ("erf_odd_but_one",), ("erf_odd_in_one_buffer",),
    ("erf_is_its_input",), ("erf_odd", "erff_one_up"), ("erff_one_up", "erf_odd_in_one_buffer"),
    ("erf_odd", "erf_is_its_input")])
def test_a_job_gives_each_task_the_figures_it_has_alone(names):
    impls = _impls(*names)
    for task in TASKS:
        alone = [chunk.evaluate(impls, ERF, *t) for t in _job(task)]
        assert [plain(c) for c in chunk.evaluate_job(impls, ERF, _job(task))] == \
            [plain(c) for c in alone]


@compiled
def test_the_negative_blocks_of_an_odd_implementation_need_no_reference(blocks_computed):
    impls = _impls("erf_odd")
    for task in TASKS:
        chunk.evaluate_job(impls, ERF, _job(task))
    negative = {start for start in blocks_computed if start >= SIGN}
    assert negative == TWO_REGIONS
    positive = [a for task in TASKS for a, _, _ in chunk.block_plan(ERF, *task)]
    assert sorted(s for s in blocks_computed if s < SIGN) == sorted(positive)


@compiled
@pytest.mark.parametrize("name", ["erff_one_up", "erf_odd_in_one_buffer", "erf_is_its_input"])
def test_an_implementation_not_odd_or_whose_outputs_are_rewritten_is_measured(
        blocks_computed, name):
    """Every negative block measured: outputs that are not odd; odd outputs in one buffer
    that each call rewrites (the positive block's are gone); the inputs returned (their
    array holds the next block's inputs)."""
    chunk.evaluate_job(_impls(name), ERF, _job(TASKS[2]))
    negative = [a for a, _, _ in chunk.block_plan(ERF, *mirror.mirror_of(TASKS[2]))]
    assert len(negative) > 1
    assert sorted(s for s in blocks_computed if s >= SIGN) == negative


@compiled
def test_one_output_not_odd_past_the_first_ones_is_measured(blocks_computed):
    """The mirror's test reads every output: one flaw 1000 outputs into a block is found
    and that block measured, its worst input the flaw."""
    from sweep_impls import NOT_ODD_AT

    task = (0x3F000000, 0x3F040000)
    negative = chunk.evaluate_job(_impls("erf_odd_but_one"), ERF, _job(task))[1]
    assert [s for s in blocks_computed if s >= SIGN] == [0xBF000000]
    whole = negative.implementations["user:sweep_impls:erf_odd_but_one/erf"].whole
    assert whole.worst_bits == NOT_ODD_AT and whole.max_ulp > 0.5


@compiled
def test_a_mirrored_block_moves_every_encoding_and_negates_the_exact_value():
    task = (0x3D000000, 0x3D040000)
    impls = _impls("erff_one_up")  # not correctly rounded: a worst input that is not the first
    positive = chunk.evaluate(impls, ERF, *task).implementations
    (stats,) = positive.values()
    moved = mirror.mirrored(stats, "-1<=x<0")
    assert moved.whole.worst_bits == stats.whole.worst_bits | SIGN
    assert moved.regions["-1<=x<0"].worst_bits == stats.whole.worst_bits | SIGN
    assert moved.max_abs_bits == stats.max_abs_bits | SIGN
    assert moved.exact == -stats.exact and moved.histogram == stats.histogram
    assert (moved.whole.max_ulp, moved.whole.sum_ulp) == (stats.whole.max_ulp,
                                                         stats.whole.sum_ulp)


def _sample_of_every_part(function):
    """|x| in every part of erf's reference: subnormal, tiny, each series piece and its
    edges, each interval of the fit and its edges, the far part; and the inputs the stored
    proofs hold, the reference's doubts."""
    from gelucheck.sweep import erf_kernels, proof_table

    edges = [2.0**-126, erf_kernels.TINY, *(e for e, _ in erf_kernels.SERIES_PIECES),
             *np.arange(0.25, ERF_FAR + 0.25, 0.25), ERF_FAR]
    rng = np.random.default_rng(7)
    x = [np.float32(2.0**-140), np.float32(3e-39), np.float32(1e30)]
    for edge in edges:
        e = np.float32(edge)
        x += [np.nextafter(e, np.float32(0)), e, np.nextafter(e, np.float32(np.inf))]
    x += list(rng.uniform(0, ERF_FAR + 1, 2000).astype(np.float32))
    x += list((2.0 ** rng.uniform(-149, -3, 2000)).astype(np.float32))
    proven = proof_table.entries(function.name).x.view(np.float32)
    x += list(np.abs(proven[np.isfinite(proven)]))
    return np.unique(np.array(x, dtype=np.float32))


@compiled
@pytest.mark.parametrize("function", [f for f in sweepable() if reference.spec(f).mirrored])
def test_a_mirrored_reference_is_odd_bit_for_bit(function):
    """SweepSpec.mirrored's claim, held to the loops: v, unit and doubt at -x are -v, unit
    and doubt at x, at both edges of every part - and the function itself is odd."""
    assert function.limits["-inf"] == -function.limits["+inf"]
    assert function.mp(mpmath.mpf(-0.75)) == -function.mp(mpmath.mpf(0.75))
    x = _sample_of_every_part(function)
    v, unit, doubt = reference.module_of(function).compiled_run(function, x)
    nv, nunit, ndoubt = reference.module_of(function).compiled_run(function, -x)
    assert np.array_equal(nv.view(np.uint64), (-v).view(np.uint64))
    assert np.array_equal(nunit, unit) and np.array_equal(ndoubt, doubt)
    assert doubt.sum() > 1000  # (the proofs' inputs: the reference's doubts)


def test_only_erf_is_mirrored():
    """Φ, GELU, their derivatives and erfc are not odd: their tasks run alone."""
    assert [f.name for f in sweepable() if reference.spec(f).mirrored] == ["erf"]


def test_jobs_pair_a_task_with_its_mirror_where_both_are_pending():
    pending = [(0x00000000, 0x01000000), (0x3F000000, 0x40000000), (0x80000000, 0x81000000),
               (0xBF000000, 0xC0000000), (0xC0000000, 0xC1000000)]
    assert runner.jobs(pending, ERF) == [
        ((0x00000000, 0x01000000), (0x80000000, 0x81000000)),
        ((0x3F000000, 0x40000000), (0xBF000000, 0xC0000000)), ((0xC0000000, 0xC1000000),)]
    # the order of submission does not matter; a task whose mirror ran already runs alone
    assert runner.jobs(pending[::-1], ERF) == runner.jobs(pending, ERF)
    assert runner.jobs(pending[2:], ERF) == [((t),) for t in pending[2:]]
    assert runner.jobs(pending, get_function("gelu")) == [(t,) for t in pending]


@pytest.mark.parametrize("job", [
    ((0x3F000000, 0x3F040000), (0xBF000000, 0xBF080000)),
    ((0xBF000000, 0xBF040000), (0x3F000000, 0x3F040000)),
    ((0x3F000000, 0x3F040000),) * 3])
def test_a_job_that_is_no_task_and_its_mirror_is_refused(job):
    with pytest.raises(ValueError, match="a job is one task or a positive task"):
        chunk.evaluate_job(_impls("erf_odd"), ERF, job)


def test_the_tasks_of_a_function_not_mirrored_are_not_paired():
    task = (0x3F000000, 0x3F040000)
    with pytest.raises(ValueError, match="not mirrored"):
        chunk.evaluate_job(_impls("erf_odd"), "erfc", _job(task))


@compiled
def test_a_sweep_pairs_its_tasks_and_resumes_from_either_half(tmp_path, monkeypatch):
    """runner.sweep over two mirrored tasks: one job, the figures of the tasks measured
    alone; with a checkpoint that holds the negative task only, the positive runs alone
    and the figures are the same."""
    task = (0x3D000000, 0x3D080000)
    monkeypatch.setattr(runner, "tasks", lambda start, stop: list(_job(task)))
    ran = []
    real = runner._run_job

    def recorded(job):
        ran.append(job)
        return real(job)

    monkeypatch.setattr(runner, "_run_job", recorded)
    spec = [{"kind": "user", "impl": "sweep_impls:erf_odd", "function": "erf",
             "framework": "numpy", "device": "cpu"}]
    paired = runner.sweep(spec, "erf", (0, 1 << 32), checkpoint=tmp_path, progress=False)
    assert ran == [_job(task)]
    impls = _impls("erf_odd")
    (alone,) = results(merge_all([chunk.evaluate(impls, ERF, *t) for t in _job(task)]), impls,
                       (0, 1 << 32))
    assert paired[0].figures == alone.figures and paired[0].histogram == alone.histogram
    assert paired[0].n_slow_reference == alone.n_slow_reference
    (tmp_path / f"task_{task[0]:08x}_{task[1]:08x}.json").unlink()
    ran.clear()
    resumed = runner.sweep(spec, "erf", (0, 1 << 32), checkpoint=tmp_path, progress=False)
    assert ran == [(task,)]
    assert resumed[0].figures == paired[0].figures
    assert resumed[0].histogram == paired[0].histogram


_SPEC = [{"kind": "user", "impl": "sweep_impls:erf_odd", "function": "erf",
          "framework": "numpy", "device": "cpu"}]


@compiled
def test_a_dask_worker_runs_a_job_of_two_tasks_as_evaluate_job_does():
    """cluster.run_job, what each Dask worker runs: a pair's two results, in order."""
    from gelucheck.sweep import cluster, worker

    task = (0x3D000000, 0x3D080000)
    impls = _impls("erf_odd")
    meta = worker._meta(ERF, impls, (0, 1 << 32))
    got = cluster.run_job(_SPEC, "erf", _job(task), meta)
    assert [plain(c) for c in got] == [plain(chunk.evaluate(impls, ERF, *t)) for t in _job(task)]


@compiled
@pytest.mark.slow  # a local Dask cluster: seconds
def test_a_sweep_on_dask_pairs_its_tasks_with_the_same_figures(monkeypatch):
    pytest.importorskip("distributed", reason="dask.distributed is not installed: pip "
                        "install 'gelucheck[cluster]'")
    tasks = [(0x3D000000, 0x3D080000), (0x3F000000, 0x3F080000)]
    tasks += [mirror.mirror_of(t) for t in tasks]
    monkeypatch.setattr(runner, "tasks", lambda start, stop: list(tasks))
    on_dask = runner.sweep(_SPEC, "erf", (0, 1 << 32), workers=2, progress=False,
                           engine="dask")
    here = runner.sweep(_SPEC, "erf", (0, 1 << 32), workers=1, progress=False)
    assert on_dask[0].engine["name"] == "dask" and on_dask[0].engine["tasks"] == 4
    assert on_dask[0].figures == here[0].figures and on_dask[0].histogram == here[0].histogram


@pytest.mark.parametrize("without_numba", [True, False])
def test_the_test_of_opposite_outputs_finds_any_difference(without_numba, monkeypatch):
    """Outputs and their negation bit for bit pass; a sign left alone, a last bit off, a NaN
    of the same sign anywhere, or a strided array fail - by NumPy's passes without numba as
    by the compiled loop (kernels.opposite)."""
    if without_numba:
        monkeypatch.setattr(loops, "kernels", lambda: None)
    elif loops.kernels() is None:
        pytest.skip("numba is not installed: pip install 'gelucheck[fast]'")
    y = np.linspace(-3, 3, 1001, dtype=np.float32)
    y[[0, 500]] = (np.nan, 0.0)
    bits = y.view(np.uint32)
    negated = bits ^ np.uint32(SIGN)
    assert mirror._opposite(bits, negated) and mirror._opposite(negated, bits)
    for at in (0, 1, 500, 999, 1000):
        for broken in (negated[at] ^ np.uint32(SIGN), negated[at] ^ np.uint32(1)):
            other = negated.copy()
            other[at] = broken
            assert not mirror._opposite(bits, other), (at, hex(broken))
    wide = np.repeat(negated, 2)[::2]  # the same values, strided
    assert mirror._opposite(bits, wide) and not mirror._opposite(bits[::2], negated[1::2])
