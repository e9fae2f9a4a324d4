import math

import numpy as np
import pytest

from gillab import stats


def test_summary_reports_best_and_median_with_ci():
    s = stats.summarize([3.0, 1.0, 2.0, 5.0, 4.0])
    assert s["n"] == 5 and s["best"] == 1.0 and s["median"] == 3.0
    assert s["ci_lo"] <= 3.0 <= s["ci_hi"] and s["ci_lo"] >= 1.0 and s["ci_hi"] <= 5.0
    assert stats.summarize([1.0, 2.0], lower_is_better=False)["best"] == 2.0


def test_bootstrap_is_deterministic_and_narrows_with_more_data():
    rng = np.random.default_rng(1)
    small = rng.normal(10, 1, 5)
    big = rng.normal(10, 1, 500)
    assert stats.bootstrap_median_ci(small) == stats.bootstrap_median_ci(small)
    w_small = np.diff(stats.bootstrap_median_ci(small))[0]
    w_big = np.diff(stats.bootstrap_median_ci(big))[0]
    assert w_big < w_small / 3


def test_ratio_of_medians_with_ci():
    r = stats.ratio_of_medians([2.0, 2.1, 1.9, 2.0], [1.0, 1.05, 0.95, 1.0])
    assert r["ratio"] == pytest.approx(2.0)
    assert r["ci_lo"] < 2.0 < r["ci_hi"] or r["ci_lo"] == pytest.approx(2.0)
    assert math.isnan(stats.ratio_of_medians([], [1.0])["ratio"])


def test_empty_and_single_samples():
    assert stats.summarize([])["n"] == 0 and math.isnan(stats.summarize([])["median"])
    assert stats.bootstrap_median_ci([4.0]) == (4.0, 4.0)


@pytest.mark.parametrize("lo,hi,expected", [
    (0.95, 1.05, "agrees"), (1.08, 1.3, "agrees"), (1.2, 1.4, "higher"), (0.5, 0.85, "lower"),
    (math.nan, math.nan, "not measured"),
])
def test_verdict_bands(lo, hi, expected):
    assert stats.verdict(1.0, lo, hi) == expected
