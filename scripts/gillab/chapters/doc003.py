"""Document 003's claims as its chapters read them: its rows of ``claims.csv``, each a statistic
at a point of one experiment, *about* a value (with a band), *at least* or *at most* a value, or
*not testable* here (with the reason).  A chapter's ``summary`` gives, per condition, point and
statistic, the median over runs and its interval over runs; this module judges it."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..judge.tables import estimate_over_runs


def published(experiment: str) -> pd.DataFrame:
    """The claims ``experiment`` answers: claim_id (without the experiment), section, quote,
    statistic, point, kind (about, at least, at most, not testable), value (typed, else NaN:
    computed from the listings), value_source, band, band_reason."""
    from ..judge import claims as published_claims

    c = published_claims.of(experiment)
    return pd.DataFrame({
        "claim_id": c["claim_id"].str.removeprefix(f"{experiment}/"), "experiment": c["experiment"],
        "section": c["section"], "quote": c["quote"], "statistic": c["statistic"], "point": c["point"],
        "kind": c["comparison"], "value": pd.to_numeric(c["value"].replace("", np.nan)),
        "value_source": c["value_source"], "band": c["band"], "band_reason": c["band_reason"]})


def inline_table(pattern: str) -> pd.DataFrame:
    """The document's in-text numbers whose item matches ``pattern``, as printed."""
    from ..judge import results

    t = results.reference("beazley_inline_numbers")
    keep = t["item"].str.contains(pattern, case=False)
    return t[keep][["item", "value", "note"]].rename(columns={"item": "in the text", "value": "as printed"})


def judge(kind: str, value: float, band: float, lo: float, hi: float, n: int) -> str:
    """The outcome of the interval of a median over ``n`` runs against a claim (see
    :func:`gillab.judge.claims.compare`)."""
    from ..judge import claims as published_claims
    from .. import stats

    return published_claims.compare(kind, value, band, lo, hi, n, method=stats.MEDIAN)


def value_of(c, computed: dict) -> float:
    """The claim's value: typed in the table, or computed from the document's listings (none for
    a statement that is not testable and gives no number)."""
    if pd.notna(c["value"]):
        return float(c["value"])
    return np.nan if c["kind"] == "not testable" else computed[c["statistic"]]


def describe(c, value: float) -> str:
    band = f" +-{float(c['band']):.0%}" if c["kind"] == "about" and pd.notna(c["band"]) else ""
    return f"{c['kind']}{'' if np.isnan(value) else f' {value:.3g}'}{band}"


def claims(s: pd.DataFrame, experiment: str, computed: dict | None = None,
           no_value_why: dict | None = None) -> list[dict]:
    """One row per claim of ``experiment``: per condition the median over runs, its CI, the
    number of runs and the outcome.  Runs that gave the statistic no value are counted in the
    note, with ``no_value_why[statistic]`` as the reason."""
    from ..judge import claims as published_claims
    from .. import stats

    out = []
    for _, c in published(experiment).iterrows():
        value = value_of(c, computed or {})
        band = float(c["band"]) if pd.notna(c["band"]) else 0.0
        sel = s[(s["point"] == c["point"]) & (s["statistic"] == c["statistic"])]
        measured = {}
        for _, r in sel.iterrows():
            iv = {"ci_lo": r["ci_lo"], "ci_hi": r["ci_hi"], "n": int(r["runs"]), "method": stats.MEDIAN}
            measured[r["condition"]] = published_claims.entry(
                r["median"], iv, best=r["median"], ratio_to_published=r["median"] / value if value else np.nan,
                verdict=judge(c["kind"], value, band, r["ci_lo"], r["ci_hi"], int(r["runs"])),
                note=describe(c, value) + ("" if c["kind"] != "not testable" else f": {c['band_reason']}")
                + _no_value(r, (no_value_why or {}).get(c["statistic"])))
        out.append({"experiment": experiment, "table": "claims", "claim_id": f"{experiment}/{c['claim_id']}",
                    "claim": f"{c['point']}: {c['statistic']} ({describe(c, value)})", "published": value,
                    "unit": "", "band": band if c["kind"] == "about" else None, "kind": c["kind"],
                    "measured": measured, "published_as": c["quote"]})
    return out


def side_by_side(s: pd.DataFrame, experiment: str, computed: dict | None = None) -> pd.DataFrame:
    out = []
    for _, c in published(experiment).iterrows():
        value = value_of(c, computed or {})
        line = {"claim": c["claim_id"], "statistic": f"{c['point']}: {c['statistic']}", "document": describe(c, value)}
        for _, r in s[(s["point"] == c["point"]) & (s["statistic"] == c["statistic"])].iterrows():
            line[r["condition"]] = estimate_over_runs(r["median"], r["ci_lo"], r["ci_hi"], r["runs"])
        out.append(line)
    return pd.DataFrame(out)


def statistics_figure(s: pd.DataFrame, experiment: str, conditions, computed: dict | None = None):
    """Each claim's statistic per condition: median over runs, its interval; dashed, the document's."""
    import matplotlib.pyplot as plt

    from ..present import plots

    pub = published(experiment)
    pal = plots.palette(conditions)
    n = max(len(pub), 1)
    cols = min(n, 3)                  # three a row: the page's width, 8 in at 100 dpi
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(8, 3.1 * rows + 0.5), squeeze=False)
    flat = list(axes.flat)
    for ax in flat[len(pub):]:
        ax.set_visible(False)
    for ax, (_, c) in zip(flat, pub.iterrows()):
        sel = s[(s["point"] == c["point"]) & (s["statistic"] == c["statistic"])]
        for i, (_, r) in enumerate(sel.iterrows()):
            ax.errorbar([i], [r["median"]], yerr=[[r["median"] - r["ci_lo"]], [r["ci_hi"] - r["median"]]], fmt="o",
                        color=pal[r["condition"]], capsize=3)
        ax.axhline(value_of(c, computed or {}), color="black", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(sel)), list(sel["condition"]), rotation=60, fontsize=8.5)
        ax.set_title(f"{c['point']}:\n{c['statistic']} ({c['kind']})", fontsize=8.5)
    from .. import stats

    fig.suptitle(f"Each claim's statistic: median over runs, interval over runs\n(95% from "
                 f"{stats.runs_needed(stats.MEDIAN)} runs; below, their range); dashed: the document", fontsize=10)
    fig.tight_layout()
    return fig


def _no_value(r, why: str | None) -> str:
    """The note's clause on runs that gave no value, if any."""
    k = int(r.get("no_value", 0) or 0)
    return f"; {k} of {k + int(r['runs'])} runs gave no value" + (f" ({why})" if why else "") if k else ""


def summarize_runs(runs: pd.DataFrame, keys: list[str], statistics) -> pd.DataFrame:
    """Median over runs and its order-statistic interval over runs, per ``keys`` and statistic."""
    from .. import stats

    rows = []
    for key, g in runs.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        for st in statistics:
            if st not in g or g[st].isna().all():
                continue
            v = g[st].dropna().astype(float)
            lo, hi = stats.median_interval(v)
            rows.append({**dict(zip(keys, key)), "statistic": st, "median": float(v.median()), "ci_lo": lo,
                         "ci_hi": hi, "runs": len(v), "no_value": len(g) - len(v)})
    return pd.DataFrame(rows)
