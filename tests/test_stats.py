import math

import numpy as np
import pytest

from gillab import stats


def test_summary_reports_best_and_median_with_its_interval():
    s = stats.summarize([3.0, 1.0, 2.0, 5.0, 4.0, 6.0, 7.0])
    assert s["n"] == 7 and s["best"] == 1.0 and s["median"] == 4.0
    assert (s["ci_lo"], s["ci_hi"]) == (1.0, 7.0)          # n = 7: [x(1), x(7)]
    assert s["method"] == stats.MEDIAN and s["coverage"] >= stats.LEVEL
    assert stats.summarize([1.0, 2.0], lower_is_better=False)["best"] == 2.0


@pytest.mark.parametrize("n,k", [(30, 10), (40, 14), (100, 40)])
def test_beyond_the_adaptive_window_the_ranks_are_the_fixed_binomial_ones(n, k):
    assert n > stats.ADAPTIVE_MAX and stats.rank(n) == k
    assert stats.side_miss(n) == stats._tail(n, k - 1) <= stats.SIDE < stats._tail(n, k)   # the next would miss
    assert stats.coverage(stats.MEDIAN, n) == pytest.approx(1 - 2 * stats._tail(n, k - 1))


def test_within_the_adaptive_window_the_ranks_hold_whenever_the_sweep_stops():
    ks, crossing = stats._sequence(stats.SIDE)
    assert crossing <= stats.SIDE
    # the exact chance that some n <= 20 has fewer than k_n runs below the median, recomputed by
    # enumerating all 2^20 sign sequences (bits: a run below the median)
    seqs = np.arange(2 ** stats.ADAPTIVE_MAX, dtype=np.int64)
    below = np.zeros_like(seqs)
    crossed = np.zeros(seqs.shape, dtype=bool)
    for n in range(1, stats.ADAPTIVE_MAX + 1):
        below += (seqs >> (n - 1)) & 1
        if ks[n]:
            crossed |= below <= ks[n] - 1
    assert crossed.mean() == pytest.approx(crossing, abs=1e-12)
    # never wider than needed: at each n the rank is at most the fixed-n one, and ranks never fall
    assert all(k <= (stats._fixed_rank(n, stats.SIDE) or 0) for n, k in enumerate(ks))
    assert list(ks) == sorted(ks)


def test_a_median_needs_seven_runs():
    for n, cov in ((1, 0.0), (2, 0.5), (3, 0.75), (4, 0.875), (5, 0.9375)):
        assert stats.rank(n) is None
        assert stats.coverage(stats.MEDIAN, n) == pytest.approx(cov)
        assert not stats.conclusive(stats.MEDIAN, n)
        assert "n too small" in stats.why_inconclusive(stats.MEDIAN, n)
    assert stats.median_interval([3.0, 1.0, 2.0]) == (1.0, 3.0)     # the range, and said to be one
    # six runs would do at a fixed n (96.9%), but not when the sweep chose to stop at six
    assert stats.rank(6) is None and not stats.conclusive(stats.MEDIAN, 6)
    assert stats.runs_needed(stats.MEDIAN) == 7
    assert stats.conclusive(stats.MEDIAN, 7) and stats.why_inconclusive(stats.MEDIAN, 7) == ""


def test_ratio_of_medians_needs_eight_runs_a_side():
    a = [2.0, 2.1, 1.9, 2.0, 2.2, 1.8, 2.05, 1.95]
    b = [1.0, 1.05, 0.95, 1.0, 1.1, 0.9, 1.02, 0.98]
    r = stats.ratio_of_medians(a, b)
    assert r["ratio"] == pytest.approx(2.0) and r["method"] == stats.RATIO
    assert r["ci_lo"] == pytest.approx(1.8 / 1.1) and r["ci_hi"] == pytest.approx(2.2 / 0.9)
    assert r["coverage"] >= stats.LEVEL and stats.conclusive(stats.RATIO, (8, 8))
    assert stats.runs_needed(stats.RATIO) == 8
    assert not stats.conclusive(stats.RATIO, (7, 7)) and not stats.conclusive(stats.RATIO, (40, 5))
    assert math.isnan(stats.ratio_of_medians([], [1.0])["ratio"])


def test_empty_and_single_samples():
    assert stats.summarize([])["n"] == 0 and math.isnan(stats.summarize([])["median"])
    assert stats.median_interval([4.0]) == (4.0, 4.0) and stats.coverage(stats.MEDIAN, 1) == 0.0
    assert stats.coverage(stats.MEDIAN, None) == 0.0 and stats.why_inconclusive(stats.MEDIAN, None) == "n unknown"
    with pytest.raises(ValueError):
        stats.coverage("bootstrap", 10)


@pytest.mark.parametrize("k,n", [(0, 30), (5, 10), (30, 30), (1, 1)])
def test_clopper_pearson_matches_its_definition(k, n):
    lo, hi = stats.proportion_interval(k, n)
    # the defining equations: P(X >= k | lo) = 2.5% and P(X <= k | hi) = 2.5%
    def cdf(j, p):
        return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(j + 1))
    if k > 0:
        assert 1 - cdf(k - 1, lo) == pytest.approx(stats.SIDE, abs=1e-9)
    else:
        assert lo == 0.0
    if k < n:
        assert cdf(k, hi) == pytest.approx(stats.SIDE, abs=1e-9)
    else:
        assert hi == 1.0


SIX = 7     # enough runs for a 95% interval of a median


@pytest.mark.parametrize("lo,hi,expected", [
    (0.95, 1.05, "agrees"), (0.9, 1.1, "agrees"),          # the whole interval inside the band
    (1.08, 1.3, "inconclusive"), (0.5, 0.95, "inconclusive"), (0.5, 2.0, "inconclusive"),  # straddles an edge
    (1.2, 1.4, "higher"), (0.5, 0.85, "lower"),            # wholly outside
    (math.nan, math.nan, "not measured"),
])
def test_verdict_bands(lo, hi, expected):
    assert stats.verdict(1.0, lo, hi, 0.10, method=stats.MEDIAN, n=SIX) == expected


def test_a_noisier_or_smaller_measurement_never_agrees_more_easily():
    # the same median, wider and wider intervals: agrees, then inconclusive, never back
    seen = [stats.verdict(1.0, 1.0 - w, 1.0 + w, 0.10, method=stats.MEDIAN, n=SIX) for w in (0.01, 0.05, 0.1, 0.2, 0.5)]
    assert seen == ["agrees", "agrees", "agrees", "inconclusive", "inconclusive"]
    for n in (3, 5, 6):    # too few runs for a 95% interval: no verdict, however narrow
        assert stats.verdict(1.0, 0.99, 1.01, 0.10, method=stats.MEDIAN, n=n) == "inconclusive"
        assert stats.verdict(1.0, 5.0, 6.0, 0.10, method=stats.MEDIAN, n=n) == "inconclusive"
    assert stats.verdict(1.0, 0.99, 1.01, 0.10, method=stats.MEDIAN, n=None) == "inconclusive"
    assert stats.verdict(1.0, 0.99, 1.01, 0.10, method=stats.NO_INTERVAL, n=40) == "inconclusive"
    assert stats.verdict(-2.0, -2.1, -1.9, 0.10, method=stats.MEDIAN, n=SIX) == "agrees"   # the band is ordered


def test_paired_ratio_pairs_by_key_and_ignores_unpaired_or_bad_values():
    r = stats.paired_ratio({0: 2.0, 1: 4.0, 2: 6.0, 3: 9.0}, {0: 1.0, 1: 2.0, 2: 2.0, 5: 1.0})
    assert r["n"] == 3 and r["ratio"] == 2.0 and r["ci_lo"] <= 2.0 <= r["ci_hi"]
    assert r["method"] == stats.PAIRED and not stats.conclusive(r["method"], r["n"])
    assert stats.paired_ratio({0: 1.0}, {0: 0.0})["n"] == 0   # a zero denominator pairs nothing
    assert math.isnan(stats.paired_ratio({}, {})["ratio"])
    # pairing removes a drift both builds share: per-pair ratios are exact, medians of each are not
    drift = {k: 1.0 + k for k in range(7)}
    r = stats.paired_ratio({k: 2 * v for k, v in drift.items()}, drift)
    assert r["ratio"] == r["ci_lo"] == r["ci_hi"] == 2.0 and stats.conclusive(r["method"], r["n"])


def test_a_best_of_3_trial_is_three_consecutive_repeats_and_never_a_best_of_fewer():
    by_repeat = {0: 5.0, 1: 3.0, 2: 4.0, 3: 9.0, 4: 8.0, 5: 7.5, 6: 1.0, 7: 2.0, 9: 6.0, 10: 6.5, 11: float("nan")}
    # trial 0: repeats 0-2, best 3.0; trial 1: repeats 3-5, best 7.5; trial 2 lacks repeat 8,
    # trial 3 holds a failed run (NaN): both left out
    assert stats.trials(by_repeat, 3) == {0: 3.0, 1: 7.5}
    assert stats.trials(by_repeat, 3, pick=max) == {0: 5.0, 1: 9.0}
    assert stats.trials({0: 2.0, 1: 1.0}, 1) == {0: 2.0, 1: 1.0}     # one run a trial: the runs
    with pytest.raises(ValueError):
        stats.trials(by_repeat, 0)
    r = stats.trial_median(stats.trials(dict(enumerate(range(1, 22))), 3))   # bests 1, 4, ..., 19
    assert r["n"] == 7 and r["median"] == 10.0 and r["method"] == stats.TRIALS
    assert (r["ci_lo"], r["ci_hi"]) == (1.0, 19.0) and stats.conclusive(r["method"], r["n"])
    # a ratio of two points' trials pairs trial j with trial j
    p = stats.paired_ratio({0: 2.0, 1: 6.0}, {0: 1.0, 1: 2.0}, stats.PAIRED_TRIALS)
    assert p["ratio"] == 2.5 and p["method"] == stats.PAIRED_TRIALS and p["n"] == 2
    with pytest.raises(ValueError):
        stats.paired_ratio({0: 1.0}, {0: 1.0}, stats.MEDIAN)


def test_the_adaptive_rule_asks_for_runs_until_a_95_interval_exists():
    assert "needs 7" in stats.wide([1.0, 1.0, 1.0], 0.05)          # identical, but only three
    assert stats.wide([1.0] * 7, 0.05) == ""
    assert "interval" in stats.wide([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 3.0], 0.05)
    rng = np.random.default_rng(3)
    assert stats.wide(rng.normal(10, 0.01, 12), 0.05) == ""


def test_the_method_chapter_states_the_numbers_this_module_computes():
    """book/method.md explains the intervals in words; the numbers it states are checked here
    against the code that computes them, so that the chapter cannot drift from it."""
    from gillab.paths import repo_root

    text = " ".join((repo_root() / "book" / "method.md").read_text().split())
    assert f"up to {stats.ADAPTIVE_MAX} runs" in text
    assert f"needs **{stats.runs_needed(stats.MEDIAN)} runs** for a 95% interval" in text
    assert f"That needs {stats.runs_needed(stats.RATIO)} runs in each group" in text
    assert f"holds the median {stats.coverage(stats.MEDIAN, 3):.0%} of the time" in text
    assert f"each at {stats.SIDE / 2:.2%} a side" in text and f"at most {stats.SIDE:.1%}" in text
    assert f"fewer than {stats.runs_needed(stats.MEDIAN)} runs" in text


def test_a_projection_of_the_runs_a_row_needs_narrows_with_runs_and_never_passes_for_an_interval():
    """stats.spread_factor plans runs (how much narrower an interval gets at the same spread): 1 at
    the same n, wider while more runs keep the same rank (the range of 8 runs is wider than of 7),
    narrower once the rank moves in, and well below 1 at the 20 runs a point may get."""
    for method in (*stats.ORDER, stats.RATIO):
        start = stats.runs_needed(method)
        assert stats.spread_factor(method, start, start) == 1.0
        assert stats.spread_factor(method, start, start + 1) > 1.0, method
        assert stats.spread_factor(method, start, stats.ADAPTIVE_MAX) < 0.8, method
    moved = next(n for n in range(8, 21) if stats.rank(n) > stats.rank(7))
    assert stats.spread_factor(stats.MEDIAN, 7, moved) < 1.0
