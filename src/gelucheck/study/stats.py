"""Summaries over seeds: mean, standard deviation and a 95% confidence interval (Student's t),
and paired comparisons (differences per seed, Wilcoxon's signed-rank test, wins)."""
from __future__ import annotations

import math

import numpy as np
from scipy import stats


def summary(values) -> dict:
    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    mean = float(v.mean())
    sd = float(v.std(ddof=1)) if n > 1 else math.nan
    half = float(stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)) if n > 1 else math.nan
    return {"n": n, "mean": mean, "sd": sd, "ci95": [mean - half, mean + half]}


def paired(values, baseline, higher_is_better: bool = True) -> dict:
    """values − baseline per seed: their summary, Wilcoxon's two-sided p-value (None when every
    difference is zero: the test is then undefined) and the seeds each side wins."""
    d = np.asarray(values, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    out = summary(d)
    out["p_wilcoxon"] = (None if not np.any(d) or len(d) < 2
                         else float(stats.wilcoxon(d, zero_method="wilcox").pvalue))
    better = d > 0 if higher_is_better else d < 0
    worse = d < 0 if higher_is_better else d > 0
    out.update(wins=int(better.sum()), ties=int((d == 0).sum()), losses=int(worse.sum()))
    return out
