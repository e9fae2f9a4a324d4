"""Figures: seaborn on tidy samples, every point with its uncertainty and its raw samples."""
from __future__ import annotations

import io

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

PUBLISHED_STYLE = dict(color="black", marker="D", linestyle="--", linewidth=1.2, markersize=6,
                       zorder=5)


def setup() -> None:
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 100, "figure.autolayout": False})


def palette(conditions) -> dict:
    """One stable colour per condition id, the same in every figure of the book."""
    conds = sorted(conditions)
    colours = sns.color_palette("colorblind", max(len(conds), 3))
    return {c: colours[i % len(colours)] for i, c in enumerate(conds)}


def median_with_ci(ax, df: pd.DataFrame, x: str, y: str, hue: str, pal: dict, dodge: float = 0.25,
                   join: bool = True):
    """Raw samples as small dots, the median with a 95% bootstrap CI as a bar, per hue; ``join``
    draws lines between the x values (only where x is ordered, e.g. thread counts).  With one
    condition there is nothing to dodge (seaborn would divide by zero)."""
    if len(pal) < 2:
        dodge = 0
    sns.stripplot(data=df, x=x, y=y, hue=hue, palette=pal, dodge=dodge > 0, alpha=0.35, size=3.5,
                  jitter=0.12, ax=ax, legend=False, hue_order=sorted(pal), native_scale=False)
    sns.pointplot(data=df, x=x, y=y, hue=hue, palette=pal, estimator=np.median,
                  errorbar=("ci", 95), n_boot=2000, seed=0, dodge=dodge, markers="o",
                  capsize=0.08, err_kws={"linewidth": 1.5}, ax=ax, hue_order=sorted(pal),
                  linestyle="-" if join else "none")


def samples_by_condition(ax, g: pd.DataFrame, y: str, pal: dict, size: float = 5) -> None:
    """Every sample of ``y`` as a dot, one column per condition (all conditions, even empty)."""
    conds = sorted(pal)
    sns.stripplot(data=g, x="condition", y=y, hue="condition", order=conds, hue_order=conds, palette=pal,
                  size=size, jitter=0.15, ax=ax, legend=False)
    ax.set_xlabel("")


def to_png(fig, dpi: int = 90) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()
