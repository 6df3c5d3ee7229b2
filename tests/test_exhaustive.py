"""The exhaustive float32 sweep as pytest items, one per chunk of encodings (marker
``exhaustive``, out of the default run):

    pytest -n auto -m exhaustive tests/test_exhaustive.py --gelucheck-backend torch \
        --gelucheck-function gelu

spreads the chunks over cores (or hosts, with xdist's own remote workers), or, with
--gelucheck-scheduler ADDRESS, over a Dask cluster; the controller merges the chunk results
into one report (--gelucheck-sweep-json FILE writes it).
"""
from gelucheck.pytest_plugin import SWEEP
from gelucheck.sweep import chunk
from gelucheck.sweep.stats import ImplFailure


def test_sweep_chunk(sweep_case, request):
    function, impls, (start, stop) = sweep_case
    scheduler = request.config.getoption("--gelucheck-scheduler")
    if scheduler:
        from gelucheck.sweep import cluster

        result = cluster.evaluate_on(scheduler, impls, function, (start, stop),
                                     request.config.getoption("--gelucheck-framework"))
    else:
        result = chunk.evaluate(impls, function, start, stop)
    errors = {k: s.error for k, s in result.implementations.items()
              if isinstance(s, ImplFailure)}
    assert not errors, errors
    for key, stats in result.implementations.items():
        assert stats.whole.n == stop - start, key  # every encoding of the chunk was checked
        assert sum(stats.histogram) == stats.whole.n
    from gelucheck.report import jsonio

    request.node.user_properties.append((SWEEP, jsonio.encode(result.to_data())))
