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


def ratio_of_medians(num, den, level: float = 0.95, n_boot: int = N_BOOT, seed: int = SEED,
                     statistic=np.median) -> dict:
    """median(num) / median(den) with a bootstrap CI, resampling both groups independently
    (``statistic``: another numpy reduction taking ``axis``, e.g. ``np.mean`` where the
    document's tool reported a mean)."""
    a, b = _arr(num), _arr(den)
    if a.size == 0 or b.size == 0:
        return {"ratio": math.nan, "ci_lo": math.nan, "ci_hi": math.nan, "n_num": int(a.size), "n_den": int(b.size)}
    ratio = float(statistic(a) / statistic(b))
    rng = np.random.default_rng(seed)
    ma = statistic(rng.choice(a, size=(n_boot, a.size), replace=True), axis=1)
    mb = statistic(rng.choice(b, size=(n_boot, b.size), replace=True), axis=1)
    lo, hi = np.quantile(ma / mb, [(1 - level) / 2, 1 - (1 - level) / 2])
    return {"ratio": ratio, "ci_lo": float(lo), "ci_hi": float(hi), "n_num": int(a.size), "n_den": int(b.size)}


def paired_ratio(num, den, level: float = 0.95, n_boot: int = N_BOOT, seed: int = SEED) -> dict:
    """The median of per-pair ratios num[k] / den[k], over the keys both hold (e.g. the repeat:
    two builds measured back to back in one interleaved round), with a bootstrap CI over the
    pairs.  ``num`` and ``den`` map a key to a value (a dict or a pandas Series)."""
    a = dict(num.items()) if hasattr(num, "items") else dict(num)
    b = dict(den.items()) if hasattr(den, "items") else dict(den)
    r = []
    for k in sorted(set(a) & set(b), key=str):
        x, y = float(a[k]), float(b[k])
        if math.isfinite(x) and math.isfinite(y) and y > 0:
            r.append(x / y)
    if not r:
        return {"ratio": math.nan, "ci_lo": math.nan, "ci_hi": math.nan, "n": 0}
    lo, hi = bootstrap_median_ci(r, level, n_boot, seed)
    return {"ratio": float(np.median(r)), "ci_lo": lo, "ci_hi": hi, "n": len(r)}


MIN_N = 3   # fewer samples (or runs, or pairs) than this cannot support a verdict either way


def verdict(published: float, lo: float, hi: float, tolerance: float, n: int | None = None) -> str:
    """Compare a published value with a measured 95% interval [lo, hi], four ways.

    ``agrees`` only when the whole interval lies inside the band published x (1 +- tolerance);
    ``higher`` / ``lower`` when it lies wholly above / below the band; ``inconclusive`` when it
    straddles an edge of the band, or rests on fewer than :data:`MIN_N` samples (``n``), so that
    a noisier measurement can never agree more easily.  ``not measured`` without an interval.
    """
    if any(math.isnan(x) for x in (lo, hi)):
        return "not measured"
    if n is not None and n < MIN_N:
        return "inconclusive"
    band_lo, band_hi = sorted((published * (1 - tolerance), published * (1 + tolerance)))
    if lo > band_hi:
        return "higher"
    if hi < band_lo:
        return "lower"
    if band_lo <= lo and hi <= band_hi:
        return "agrees"
    return "inconclusive"
