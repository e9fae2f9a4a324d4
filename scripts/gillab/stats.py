"""Statistics of raw samples: the document's own statistic, and the median with a bootstrap CI.

Bootstrap intervals are percentile intervals of the median over ``n_boot`` resamples with a
fixed seed, so the same data always give the same interval.  With fewer than 3 samples an
interval says little; it is still computed, and ``n`` travels with it so a reader can judge.
"""
from __future__ import annotations

import math

import numpy as np

N_BOOT = 4000
SEED = 20091025  # the day Pitrou posted "Reworking the GIL"


def _arr(values) -> np.ndarray:
    a = np.asarray([float(v) for v in values], dtype=float)
    return a[~np.isnan(a)]


def bootstrap_ci(values, statistic=np.median, level: float = 0.95, n_boot: int = N_BOOT,
                 seed: int = SEED) -> tuple[float, float]:
    """Percentile-bootstrap interval of ``statistic`` (a numpy reduction taking ``axis``)."""
    a = _arr(values)
    if a.size == 0:
        return (math.nan, math.nan)
    if a.size == 1:
        return (float(a[0]), float(a[0]))
    rng = np.random.default_rng(seed)
    stats = statistic(rng.choice(a, size=(n_boot, a.size), replace=True), axis=1)
    lo, hi = np.quantile(stats, [(1 - level) / 2, 1 - (1 - level) / 2])
    return (float(lo), float(hi))


def bootstrap_median_ci(values, level: float = 0.95, n_boot: int = N_BOOT, seed: int = SEED) -> tuple[float, float]:
    return bootstrap_ci(values, np.median, level, n_boot, seed)


def summarize(values, lower_is_better: bool = True) -> dict:
    """n, best (min when lower is better, else max), median with 95% CI, MAD."""
    a = _arr(values)
    if a.size == 0:
        return {"n": 0, "best": math.nan, "median": math.nan, "ci_lo": math.nan,
                "ci_hi": math.nan, "mad": math.nan}
    lo, hi = bootstrap_median_ci(a)
    med = float(np.median(a))
    return {
        "n": int(a.size),
        "best": float(a.min() if lower_is_better else a.max()),
        "median": med,
        "ci_lo": lo,
        "ci_hi": hi,
        "mad": float(np.median(np.abs(a - med))),
    }


def ratio_of_medians(num, den, level: float = 0.95, n_boot: int = N_BOOT, seed: int = SEED) -> dict:
    """median(num) / median(den) with a bootstrap CI, resampling both groups independently."""
    a, b = _arr(num), _arr(den)
    if a.size == 0 or b.size == 0:
        return {"ratio": math.nan, "ci_lo": math.nan, "ci_hi": math.nan, "n_num": int(a.size), "n_den": int(b.size)}
    ratio = float(np.median(a) / np.median(b))
    rng = np.random.default_rng(seed)
    ma = np.median(rng.choice(a, size=(n_boot, a.size), replace=True), axis=1)
    mb = np.median(rng.choice(b, size=(n_boot, b.size), replace=True), axis=1)
    lo, hi = np.quantile(ma / mb, [(1 - level) / 2, 1 - (1 - level) / 2])
    return {"ratio": ratio, "ci_lo": float(lo), "ci_hi": float(hi), "n_num": int(a.size), "n_den": int(b.size)}


def verdict(published: float, lo: float, hi: float, tolerance: float = 0.10) -> str:
    """Compare a published value with a measured interval [lo, hi].

    ``agrees`` when the interval meets the band published x (1 +- tolerance); otherwise
    ``higher`` or ``lower`` than published.  ``not measured`` when there is no interval.
    """
    if any(math.isnan(x) for x in (lo, hi)):
        return "not measured"
    band_lo, band_hi = published * (1 - tolerance), published * (1 + tolerance)
    if hi >= band_lo and lo <= band_hi:
        return "agrees"
    return "higher" if lo > band_hi else "lower"
