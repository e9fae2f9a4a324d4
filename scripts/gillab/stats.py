"""Statistics of raw samples: intervals whose coverage is known at the sample sizes we use.

Every interval here is distribution-free and its coverage is computed, not assumed:

- **median over runs** (``median_interval``): the order-statistic interval [x(k), x(n-k+1)] of
  ``n`` independent runs.  A side misses the true median only if fewer than k runs fall below it
  (above it): a fair coin's count, whatever the distribution (continuous).  Because the sweep
  may choose when to stop from the runs so far (adaptive repeats), the ranks up to
  :data:`ADAPTIVE_MAX` runs are a confidence sequence's: each side misses at most 2.5% *whenever*
  the sweep stopped, computed exactly (:func:`_sequence`).  A median needs 7 runs for it (a
  fixed 6 would do, but not when 6 was chosen by looking); with fewer the interval is the range
  of the runs and says so (three runs: [min, max] covers the median 75% of the time), and no
  verdict is drawn from it.
- **median of paired ratios** (``paired_ratio``): the same interval over per-pair ratios (two
  builds measured back to back in one interleaved repeat: a pair is one repeat).
- **ratio of medians** (``ratio_of_medians``): two unpaired groups, each with its own
  order-statistic interval at 1.25% per side, combined as [lo_a / hi_b, hi_a / lo_b]: a side of
  the ratio misses only if a side of one of the two misses, so each side of the ratio misses at
  most 2.5% (a union bound; it needs 8 runs in each group).
- **the document's statistic over trials** (``trials``, then ``trial_median`` / ``paired_ratio``):
  where a document's number is a best of 3, three of our interleaved repeats (3j..3j+2) make one
  trial, the trial's value is their best, and the order-statistic interval is over trials
  (``TRIALS``; a ratio of two points' trials, paired by trial: ``PAIRED_TRIALS``).  A trial is
  as independent of the next as a run is of the next, so the intervals are the same, with n
  counted in trials: a best of 3 needs 7 trials, 21 runs.
- **proportion** (``proportion_interval``): the exact (Clopper-Pearson) binomial interval of
  ``k`` events in ``n`` independent runs; at least 95% for every ``n``.
- **count of runs (observed)**: how many of the runs measured showed something (a race that lost
  updates): a claim that it happens at least once is settled by what was seen, nothing estimated.

A verdict names its estimand (``method``) and ``n``; :func:`coverage` computes the coverage from
those two alone, and :func:`conclusive` says whether a definite outcome may rest on it.
``tests/test_coverage.py`` checks each method by simulation, with the sweep's adaptive stopping.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

LEVEL = 0.95
SIDE = (1 - LEVEL) / 2      # at most 2.5% on each side, also for "at least" / "at most" claims

# the estimands a verdict's interval is for
MEDIAN = "median over runs"
PAIRED = "median of paired ratios"
RATIO = "ratio of medians"
TRIALS = "median over trials"                     # a trial: the document's statistic over its runs
PAIRED_TRIALS = "median of paired trial ratios"   # two points' trials, paired by trial
PROPORTION = "proportion of runs"
COUNT = "count of runs (observed)"      # what happened in the runs measured: exact, nothing estimated
NO_INTERVAL = "no interval"
METHODS = (MEDIAN, PAIRED, RATIO, TRIALS, PAIRED_TRIALS, PROPORTION, COUNT, NO_INTERVAL)
# the methods whose interval is the order-statistic interval over n independent units (runs,
# pairs, trials, paired trials)
ORDER = (MEDIAN, PAIRED, TRIALS, PAIRED_TRIALS)
_UNITS = {MEDIAN: "runs", PAIRED: "pairs", TRIALS: "trials", PAIRED_TRIALS: "paired trials"}

def _arr(values) -> np.ndarray:
    try:
        a = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        a = np.asarray([float(v) for v in values], dtype=float)
    return a[~np.isnan(a)]


@lru_cache(maxsize=None)
def _tail(n: int, k: int) -> float:
    """P(B <= k) for B ~ Binomial(n, 1/2), exactly."""
    if k < 0:
        return 0.0
    return sum(math.comb(n, i) for i in range(0, min(k, n) + 1)) / 2 ** n


# The sweep may stop a point at any number of runs up to this (profiles: max_repeats at most this),
# choosing when from the runs so far (``wide``).  An interval read at a time chosen from the data
# is not the fixed-n interval: stopping when the runs look alike misses more often (a two-mode
# distribution, all first runs in one mode).  So up to this many runs the ranks are those of a
# confidence sequence: P(some n <= ADAPTIVE_MAX has fewer than k_n runs below the median) is at
# most the side's share, computed exactly over the random walk of signs (:func:`_sequence`), which
# bounds the miss at *any* stopping time.  Beyond it, n was fixed in advance and the fixed-n rank
# is exact.
ADAPTIVE_MAX = 20


def _fixed_rank(n: int, side: float) -> int | None:
    best = None
    for k in range(1, n // 2 + 1):
        if _tail(n, k - 1) <= side:
            best = k
        else:
            break
    return best


def _crossing(ks: tuple[int, ...]) -> float:
    """P(S_n <= k_n - 1 for some n), S_n the runs below the median among the first n (a fair
    coin's count): the chance a lower bound at ranks ``ks[n]`` misses at some stopping time."""
    dist = np.zeros(len(ks) + 1)
    dist[0] = 1.0
    crossed = 0.0
    for n in range(1, len(ks)):
        step = np.zeros_like(dist)
        step[:-1] += dist[:-1] / 2
        step[1:] += dist[:-1] / 2
        dist = step
        if ks[n]:
            crossed += float(dist[:ks[n]].sum())
            dist[:ks[n]] = 0.0
    return crossed


@lru_cache(maxsize=None)
def _sequence(side: float) -> tuple[tuple[int, ...], float]:
    """Ranks k_0..k_ADAPTIVE_MAX (0: no interval yet) of the fixed-n intervals at the largest one
    level c whose crossing chance over every n up to ADAPTIVE_MAX is at most ``side``, and that
    chance."""
    def ranks(c):
        return tuple(_fixed_rank(n, c) or 0 for n in range(ADAPTIVE_MAX + 1))
    lo, hi = 1e-9, side
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if _crossing(ranks(mid)) <= side else (lo, mid)
    ks = ranks(lo)
    return ks, _crossing(ks)


@lru_cache(maxsize=None)
def rank(n: int, side: float = SIDE) -> int | None:
    """The rank k of the interval [x(k), x(n-k+1)] over ``n`` runs at ``side`` a side, or None
    when there is none (the range of the runs misses more often than that): the confidence
    sequence's up to :data:`ADAPTIVE_MAX` runs, the fixed-n rank beyond."""
    if n <= ADAPTIVE_MAX:
        return _sequence(side)[0][n] or None
    return _fixed_rank(n, side)


def side_miss(n: int, side: float = SIDE) -> float:
    """How often one side of :func:`median_interval` (at ``side``) can miss the true median:
    within the confidence sequence, its crossing chance (whenever the sweep stopped); beyond,
    P(B <= k-1); with no rank, the range's 0.5**n."""
    if n <= 0:
        return 0.5
    k = rank(n, side)
    if k is None:
        return 0.5 ** n
    return _sequence(side)[1] if n <= ADAPTIVE_MAX else _tail(n, k - 1)


def median_interval(values, side: float = SIDE) -> tuple[float, float]:
    """The order-statistic interval of the median (the range of the runs when ``n`` is too
    small for ``side``; :func:`coverage` tells which)."""
    a = np.sort(_arr(values))
    n = a.size
    if n == 0:
        return (math.nan, math.nan)
    k = rank(n, side) or 1
    return (float(a[k - 1]), float(a[n - k]))


def _groups(n) -> tuple[int, int]:
    """A ratio of medians' (numerator runs, denominator runs); one number stands for both."""
    na, nb = n if isinstance(n, (tuple, list)) else (n, n)
    return int(na), int(nb)


def coverage(method: str, n) -> float:
    """The coverage of ``method``'s two-sided interval over ``n`` runs (for a ratio of medians,
    ``n`` is the pair (runs of the numerator, runs of the denominator)), computed exactly from
    the binomial: the chance the interval holds the true value, whatever the distribution.
    0 where there is no interval or ``n`` is unknown."""
    if method not in METHODS:
        raise ValueError(f"unknown interval method {method!r}; one of {METHODS}")
    if method == NO_INTERVAL or n is None:
        return 0.0
    if method == RATIO:
        na, nb = _groups(n)
        if min(na, nb) <= 0:
            return 0.0
        return max(0.0, 1 - 2 * (side_miss(na, SIDE / 2) + side_miss(nb, SIDE / 2)))
    n = int(n)
    if n <= 0:
        return 0.0
    if method == PROPORTION:
        return LEVEL            # Clopper-Pearson: at least the level, for every n
    if method == COUNT:
        return 1.0              # a count of the runs measured is read, not estimated
    return 1 - 2 * side_miss(n)


def conclusive(method: str, n) -> bool:
    """Whether a definite outcome may rest on ``method``'s interval over ``n`` runs: it has its
    ranks (not the bare range of too few runs) and a coverage of at least 95%, at most 2.5% a
    side (the intervals here miss as often on either side, so one implies the other)."""
    if n is None:
        return False
    if method in ORDER and rank(int(n)) is None:
        return False
    if method == RATIO and any(rank(k, SIDE / 2) is None for k in _groups(n)):
        return False
    return coverage(method, n) >= LEVEL - 1e-12


def bracket(lo: float, hi: float, n, method: str = MEDIAN, spec: str = ".2f") -> str:
    """An interval as the prose prints it, ``[lo, hi]``, or where ``n`` runs are too few for a 95%
    interval of ``method`` (:func:`conclusive`), the number of runs and that there is none: a
    sentence never prints the range of one or two runs as if it were an interval."""
    if conclusive(method, n):
        return f"[{lo:{spec}}, {hi:{spec}}]"
    k = min(n) if isinstance(n, tuple) else n
    return f"(n = {k}: too few runs for a 95% interval)"


def runs_needed(method: str) -> int | None:
    """The fewest runs (per group, for a ratio of medians) that give ``method`` a 95% interval."""
    if method in (PROPORTION, COUNT):
        return 1
    if method not in (*ORDER, RATIO):
        return None
    side = SIDE / 2 if method == RATIO else SIDE
    return next(n for n in range(1, ADAPTIVE_MAX + 1) if rank(n, side))


def wide(values, target: float) -> str:
    """Why the sweep's adaptive rule gives a point another repeat ('' when it needs none): the
    runs so far have no 95% interval of their median yet, or its half-width on either side is
    more than ``target`` times the median."""
    a = _arr(values)
    if not conclusive(MEDIAN, int(a.size)):
        return f"{a.size} run(s), a 95% interval needs {runs_needed(MEDIAN)}"
    med = float(np.median(a))
    lo, hi = median_interval(a)
    half = max(med - lo, hi - med) / abs(med) if med else math.inf
    return f"interval ±{half:.1%} of the median" if half > target else ""


def summarize(values, lower_is_better: bool = True) -> dict:
    """n, best (min when lower is better, else max), median with its order-statistic interval
    and that interval's coverage, MAD."""
    a = _arr(values)
    if a.size == 0:
        return {"n": 0, "best": math.nan, "median": math.nan, "ci_lo": math.nan,
                "ci_hi": math.nan, "mad": math.nan, "coverage": 0.0, "method": MEDIAN}
    lo, hi = median_interval(a)
    med = float(np.median(a))
    return {
        "n": int(a.size),
        "best": float(a.min() if lower_is_better else a.max()),
        "median": med,
        "ci_lo": lo,
        "ci_hi": hi,
        "mad": float(np.median(np.abs(a - med))),
        "coverage": coverage(MEDIAN, int(a.size)),
        "method": MEDIAN,
    }


def ratio_of_medians(num, den) -> dict:
    """median(num) / median(den) of two unpaired groups of positive values, with the interval
    [lo_num / hi_den, hi_num / lo_den] of the two order-statistic intervals at 1.25% a side
    (joint coverage at least 95%, see :func:`coverage`)."""
    a, b = _arr(num), _arr(den)
    out = {"n_num": int(a.size), "n_den": int(b.size), "n": min(int(a.size), int(b.size)), "method": RATIO,
           "coverage": coverage(RATIO, (int(a.size), int(b.size)))}
    if a.size == 0 or b.size == 0:
        return out | {"ratio": math.nan, "ci_lo": math.nan, "ci_hi": math.nan}
    ma, mb = float(np.median(a)), float(np.median(b))
    la, ha = median_interval(a, SIDE / 2)
    lb, hb = median_interval(b, SIDE / 2)
    lo = la / hb if hb > 0 else math.nan
    hi = ha / lb if lb > 0 else math.inf
    return out | {"ratio": ma / mb if mb else math.nan, "ci_lo": float(lo), "ci_hi": float(hi)}


def trials(by_repeat, size: int, pick=min) -> dict[int, float]:
    """The document's statistic on trials shaped like its own: repeats ``size*j .. size*j+size-1``
    of the interleaved sweep make trial j, whose value is ``pick`` of their values (a best of 3
    of times: ``min``).  A trial that lacks one of its runs (a failed sample, a sweep stopped
    part-way) is left out, never a best of fewer.  ``by_repeat`` maps a repeat number (from 0)
    to one run's value (a dict or a pandas Series)."""
    if size < 1:
        raise ValueError(f"a trial has at least one run, not {size}")
    groups: dict[int, list[float]] = {}
    for rep, v in (by_repeat.items() if hasattr(by_repeat, "items") else dict(by_repeat).items()):
        v = float(v)
        if math.isfinite(v):
            groups.setdefault(int(rep) // size, []).append(v)
    return {j: float(pick(vs)) for j, vs in sorted(groups.items()) if len(vs) == size}


def trial_median(by_trial) -> dict:
    """The median over trials (:func:`trials`) with the order-statistic interval over them."""
    r = summarize(list(by_trial.values()))
    return {"ratio": r["median"], "median": r["median"], "ci_lo": r["ci_lo"], "ci_hi": r["ci_hi"], "n": r["n"],
            "method": TRIALS, "coverage": coverage(TRIALS, r["n"])}


def paired_ratio(num, den, method: str = PAIRED) -> dict:
    """The median of per-pair ratios num[k] / den[k], over the keys both hold (e.g. the repeat:
    two builds measured back to back in one interleaved round; or the trial, ``method``
    :data:`PAIRED_TRIALS`), with the order-statistic interval over the pairs.  ``num`` and
    ``den`` map a key to a value (a dict or a pandas Series)."""
    if method not in (PAIRED, PAIRED_TRIALS):
        raise ValueError(f"paired_ratio is for {PAIRED!r} or {PAIRED_TRIALS!r}, not {method!r}")
    a = dict(num.items()) if hasattr(num, "items") else dict(num)
    b = dict(den.items()) if hasattr(den, "items") else dict(den)
    r = []
    for k in sorted(set(a) & set(b), key=str):
        x, y = float(a[k]), float(b[k])
        if math.isfinite(x) and math.isfinite(y) and y > 0:
            r.append(x / y)
    return paired_median(r, method)


def paired_median(values, method: str = PAIRED) -> dict:
    """The median of values each computed within one pair or round (a ratio of two builds measured
    back to back, or any statistic of one interleaved round), with the order-statistic interval
    over them; the non-finite ones are left out."""
    r = [float(v) for v in values if math.isfinite(float(v))]
    if not r:
        return {"ratio": math.nan, "ci_lo": math.nan, "ci_hi": math.nan, "n": 0, "method": method, "coverage": 0.0}
    lo, hi = median_interval(r)
    return {"ratio": float(np.median(r)), "ci_lo": lo, "ci_hi": hi, "n": len(r), "method": method,
            "coverage": coverage(method, len(r))}


def _beta_quantile(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b) for integer a, b >= 1, by bisection on the binomial
    identity P(Beta(a, b) <= x) = P(Binomial(a + b - 1, x) >= a)."""
    m = int(a + b - 1)

    def cdf(x):
        return sum(math.comb(m, i) * x ** i * (1 - x) ** (m - i) for i in range(int(a), m + 1))
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if cdf(mid) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def proportion_interval(k: int, n: int) -> tuple[float, float]:
    """The exact (Clopper-Pearson) 95% interval of a proportion: ``k`` events in ``n`` runs."""
    if n <= 0:
        return (math.nan, math.nan)
    lo = 0.0 if k == 0 else _beta_quantile(SIDE, k, n - k + 1)
    hi = 1.0 if k == n else _beta_quantile(1 - SIDE, k + 1, n - k)
    return (lo, hi)


def verdict(published: float, lo: float, hi: float, tolerance: float, method: str, n) -> str:
    """Compare a published value with a measured interval [lo, hi] of ``method`` over ``n``
    runs, four ways.

    ``agrees`` only when the whole interval lies inside the band published x (1 +- tolerance);
    ``higher`` / ``lower`` when it lies wholly above / below the band; ``inconclusive`` when it
    straddles an edge of the band, or when its coverage (from ``method`` and ``n``) is below 95%,
    so that a noisier or smaller measurement can never agree more easily.  ``not measured``
    without an interval.
    """
    if any(math.isnan(x) for x in (lo, hi)):
        return "not measured"
    if not conclusive(method, n):
        return "inconclusive"
    band_lo, band_hi = sorted((published * (1 - tolerance), published * (1 + tolerance)))
    if lo > band_hi:
        return "higher"
    if hi < band_lo:
        return "lower"
    if band_lo <= lo and hi <= band_hi:
        return "agrees"
    return "inconclusive"


def spread_factor(method: str, n: int, later: int) -> float:
    """How much narrower (below 1) ``method``'s interval is expected to be at ``later`` runs than at
    ``n``, at the same spread: its ranks k of n runs stand near the quantiles k / (n + 1) and
    1 - k / (n + 1), read here as a normal distribution's (a projection to plan runs with, never an
    interval)."""
    from statistics import NormalDist

    side = SIDE / 2 if method == RATIO else SIDE

    def reach(m: int) -> float:
        k = rank(m, side) or 1
        return NormalDist().inv_cdf(1 - k / (m + 1))
    return reach(later) / reach(n)


TOO_FEW = "n too small"   # how :func:`why_inconclusive` begins where more runs would give an interval


def too_few_runs(why) -> bool:
    """Whether ``why`` (a :func:`why_inconclusive` text, or empty) says too few runs were taken."""
    return isinstance(why, str) and why.startswith(TOO_FEW)


def why_inconclusive(method: str, n) -> str:
    """Why an interval cannot carry a definite outcome, in words ('' when it can)."""
    if conclusive(method, n):
        return ""
    if method == NO_INTERVAL:
        return "no interval"
    if n is None:
        return "n unknown"
    need = runs_needed(method)
    return f"{TOO_FEW}: {_n_words(method, n)}; a 95% interval needs {need}{' in each' if method == RATIO else ''}"


def _n_words(method: str, n) -> str:
    if method == RATIO and isinstance(n, (tuple, list)):
        return f"{n[0]} and {n[1]} runs"
    unit = _UNITS.get(method, "runs")
    return f"{n} {unit[:-1] if n == 1 else unit}"
