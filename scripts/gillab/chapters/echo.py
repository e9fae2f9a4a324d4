"""The echo family as its chapters read it: a rate per independent server run (:func:`per_run`,
convoy and affinity) and the document's in-text numbers (:func:`inline_row`, convoy and
data_race).  What they measure alike is :mod:`gillab.measure.experiments.echo`."""
from __future__ import annotations

import pandas as pd


def per_run(g: pd.DataFrame) -> pd.Series:
    """Each server run's rate: the median of its windows (one value per independent run)."""
    return g.groupby(["run_id", "repeat"])["rps"].median()


def inline_row(inline: pd.DataFrame, scenario: str) -> pd.Series:
    """The one in-text row of the document whose scenario starts with ``scenario``."""
    hit = inline[inline["scenario"].str.startswith(scenario)]
    if len(hit) != 1:
        raise KeyError(f"pbts13_t6_echo_inline_numbers.csv: {len(hit)} rows for {scenario!r}")
    return hit.iloc[0]


def median_text(median: float, lo: float, hi: float, n: int) -> str:
    """A median over ``n`` runs with its 95% interval, or "too few runs" below the runs a median's
    interval needs (:func:`gillab.stats.conclusive`)."""
    from .. import stats

    if stats.conclusive(stats.MEDIAN, n):
        return f"{median:.2f} [{lo:.2f}, {hi:.2f}]"
    return f"{median:.2f} (n={n}: too few runs)"
