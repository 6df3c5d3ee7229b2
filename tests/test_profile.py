"""checks/profile.py: per bin of asinh(x/0.01), the worst input and its error, against a plain
loop over the bins (its own reading of the rule: largest error, the last input among equal
errors, NaN as inf, bins whose worst error is 0 left out)."""
import numpy as np
import pytest

from gelucheck.checks import profile


def _by_loop(x, errors):
    t = profile.transform(x)
    edges = np.linspace(t.min(), t.max(), profile.BINS + 1)
    worst: dict[int, tuple[float, int]] = {}
    for i, (ti, e) in enumerate(zip(t, errors)):
        b = min(max(int(np.searchsorted(edges, ti, "right")) - 1, 0), profile.BINS - 1)
        e = np.inf if np.isnan(e) else float(e)
        if b not in worst or e >= worst[b][0]:
            worst[b] = (e, i)
    picked = [worst[b] for b in sorted(worst) if worst[b][0] > 0]
    return {"x": [float(x[i]) for _, i in picked], "max_ulp": [e for e, _ in picked]}


@pytest.mark.parametrize("seed", range(6))
def test_each_bins_worst_input_is_the_loops(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    x = np.sort(rng.standard_normal(n) * 10 ** rng.uniform(-4, 4, n))
    if seed % 2:
        x = x.astype(np.float16)  # repeated inputs, and ties of errors below
        errors = rng.choice([0.0, 0.5, 1.0, 2.0, np.inf, np.nan], n)
    else:
        errors = rng.random(n) * (rng.random(n) < 0.8)
    assert profile.profile(x, errors) == _by_loop(x, errors)


def test_the_same_inputs_with_other_errors_are_binned_alike():
    """The binning is kept per inputs array: a second implementation's errors at the same
    inputs get their own worst inputs, not the first's."""
    x = np.linspace(-10, 10, 1001)
    first = profile.profile(x, np.where(x < 0, 1.0, 0.0))
    second = profile.profile(x, np.where(x > 0, 3.0, 0.0))
    assert first == _by_loop(x, np.where(x < 0, 1.0, 0.0))
    assert second == _by_loop(x, np.where(x > 0, 3.0, 0.0))
    assert min(second["x"]) > 0 and set(second["max_ulp"]) == {3.0}
