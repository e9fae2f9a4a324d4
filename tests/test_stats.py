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
    (0.95, 1.05, "agrees"), (0.9, 1.1, "agrees"),          # the whole interval inside the band
    (1.08, 1.3, "inconclusive"), (0.5, 0.95, "inconclusive"), (0.5, 2.0, "inconclusive"),  # straddles an edge
    (1.2, 1.4, "higher"), (0.5, 0.85, "lower"),            # wholly outside
    (math.nan, math.nan, "not measured"),
])
def test_verdict_bands(lo, hi, expected):
    assert stats.verdict(1.0, lo, hi, 0.10) == expected


def test_a_noisier_measurement_never_agrees_more_easily():
    # the same median, wider and wider intervals: agrees, then inconclusive, never back
    seen = [stats.verdict(1.0, 1.0 - w, 1.0 + w, 0.10) for w in (0.01, 0.05, 0.1, 0.2, 0.5, 0.9)]
    assert seen == ["agrees", "agrees", "agrees", "inconclusive", "inconclusive", "inconclusive"]
    assert stats.verdict(1.0, 0.99, 1.01, 0.10, n=2) == "inconclusive"   # too few samples for any verdict
    assert stats.verdict(1.0, 0.99, 1.01, 0.10, n=3) == "agrees"
    assert stats.verdict(-2.0, -2.1, -1.9, 0.10) == "agrees"             # a negative value: the band is ordered


def test_paired_ratio_pairs_by_key_and_ignores_unpaired_or_bad_values():
    r = stats.paired_ratio({0: 2.0, 1: 4.0, 2: 6.0, 3: 9.0}, {0: 1.0, 1: 2.0, 2: 2.0, 5: 1.0})
    assert r["n"] == 3 and r["ratio"] == 2.0 and r["ci_lo"] <= 2.0 <= r["ci_hi"]
    assert stats.paired_ratio({0: 1.0}, {0: 0.0})["n"] == 0   # a zero denominator pairs nothing
    assert math.isnan(stats.paired_ratio({}, {})["ratio"])
    # pairing removes a drift both builds share: per-pair ratios are exact, medians of each are not
    drift = {k: 1.0 + k for k in range(6)}
    r = stats.paired_ratio({k: 2 * v for k, v in drift.items()}, drift)
    assert r["ratio"] == r["ci_lo"] == r["ci_hi"] == 2.0
