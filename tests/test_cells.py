"""How shares and places read in the tables: never none or all when neither, never an input
named for a difference that is not there."""
import numpy as np
import pytest

from gelucheck.checks.drift import compare_outputs
from gelucheck.formats import get_format
from gelucheck.report.cells import fmt_share
from gelucheck.report.tables import runtime_rows
from gelucheck.results import DriftResult


@pytest.mark.parametrize("count, total, digits, text", [
    (0, 10, 1, "0%"), (10, 10, 1, "100%"), (1, 4, 1, "25.0%"), (1, 3, 2, "33.33%"),
    (1, 10**6, 1, "0.1%"),            # one in a million is not none
    (10**6 - 1, 10**6, 1, "99.9%"),   # nor all but one all
    (1, 10**6, 2, "0.01%"), (0, 0, 1, "not measured"),
])
def test_a_share_never_reads_as_none_or_all_when_it_is_neither(count, total, digits, text):
    assert fmt_share(count, total, digits) == text


def _row(first, second):
    f16 = get_format("float16")
    x = np.linspace(-4, 4, len(first)).astype(np.float16)
    figures = compare_outputs(x, np.asarray(first, np.float16), np.asarray(second, np.float16),
                              f16, np.ones(len(first), np.float16))
    result = DriftResult("user", "a@gelu", "b@gelu", "float16", figures=figures,
                         minimum_shift=None, pair="runtimes")
    _header, (row,) = runtime_rows([result])
    return dict(zip(["first", "second", "dtype", "differ", "ulp", "at_ulp", "abs", "at", "shift"],
                    row))


def test_a_drift_row_where_nothing_differs_names_no_input():
    row = _row([1.0] * 5, [1.0] * 5)
    assert (row["differ"], row["ulp"], row["at_ulp"], row["at"]) == ("0%", "0", "nowhere",
                                                                       "nowhere")


def test_one_difference_in_many_is_counted_and_placed():
    second = [1.0] * 40001
    second[40000] = 2.0  # at x = 4, one ulp of 1 is 2^-10: the difference is 1024 ulps
    row = _row([1.0] * 40001, second)
    assert row["differ"] == "0.01%" and row["ulp"] == "1.02e+03" and row["at"] == "4"
