"""How the echo chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.echo`)."""
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
