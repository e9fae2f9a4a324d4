"""Document 002, "Goodbye GIL - Exploring Free Threaded Python 3.14": what its three
benchmark chapters (the single-threaded loop, file I/O with fsync, primes over a thread pool)
read the same way: each row of its observations table (pyconjp2025_observations.csv) against
every GIL/free-threaded *pair* measured.  Every function that depends on the chapter takes the
experiment's name as ``experiment`` (bound by :class:`~gillab.judge.analysis.ModuleAnalysis`).

The document compared one GIL build with one free-threaded build (3.14 RC2).  Here every pair
is compared: ``3.13.5`` / ``3.13.5t`` (same source, same flags), ``3.13.5t-gil`` / ``3.13.5t``
(same binary), and any pair found on the machine."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..measure import interpreters
from ..judge import results
from .. import stats
from ..judge.analysis import frame_cached
from ..measure.experiments import get
from ..judge.tables import estimate_text


def preferred_pairs() -> list[tuple[str, str]]:
    """builds.toml's pairs (the era's first), each followed by its free-threaded build's GIL-on
    twin against it: (3.13.5, 3.13.5t), (3.13.5t-gil, 3.13.5t), ..."""
    out = []
    for gil, free in interpreters.pairs():
        out.append((gil, free))
        twin = interpreters.twin_of(free)
        if twin:
            out.append((twin, free))
    return out


def pairs(conds) -> list[tuple[str, str]]:
    """GIL/free-threaded pairs among the measured conditions: builds.toml's, then any other
    ``X`` / ``Xt`` (or ``Xt-gil`` / ``Xt``) found."""
    conds = set(conds)
    preferred = preferred_pairs()
    out = [p for p in preferred if set(p) <= conds]
    for c in sorted(conds):
        if c.endswith("t") and c not in {free for _, free in preferred}:
            for gil in (c[:-1], c + "-gil"):
                if gil in conds and (gil, c) not in out:
                    out.append((gil, c))
    return out


def pair_label(p: tuple[str, str]) -> str:
    return f"{p[0]} vs {p[1]}"


# -- analysis: each document-002 table row as (workload, mode) ------------------------------------
ROWS = {  # observations table "File" column -> (experiment, mode)
    "1_single_threaded.py": ("st_loop", None),
    "2_io_bound_single_thread": ("file_io", "single"),
    "2_io_bound_multithread": ("file_io", "threads"),
    "3_cpu_bound_single_thread": ("primes", "single"),
    "3_cpu_bound_multithread": ("primes", "threads"),
}


def published() -> pd.DataFrame:
    return results.reference("pyconjp2025_observations")


def published_table(experiment: str) -> pd.DataFrame:
    """The document's rows for ``experiment``, as it printed them."""
    p = published()
    mine = p["File"].map(lambda f: ROWS.get(f, (None,))[0] == experiment)
    return p[mine][["File", "GIL Enabled (as published)", "Free Threaded (as published)"]]


@frame_cached
def summary(df: pd.DataFrame) -> pd.DataFrame:
    keys = ["condition"] + (["mode"] if "mode" in df.columns else [])
    rows = []
    for key, g in df.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        s = stats.summarize(g["seconds"])
        rows.append({**dict(zip(keys, key)), **s,
                     "gil_enabled": bool(g["gil_enabled"].fillna(False).astype(bool).all())})
    return pd.DataFrame(rows)


def _paired(sel: pd.DataFrame, gil: str, ft: str) -> dict:
    """Free-threaded time / GIL time, the median of per-repeat ratios with its interval: the two
    builds ran back to back in each interleaved repeat (what the verdicts judge)."""
    return stats.paired_ratio(sel[sel["condition"] == ft].groupby("repeat")["seconds"].median(),
                              sel[sel["condition"] == gil].groupby("repeat")["seconds"].median())


def pair_ratios(df: pd.DataFrame) -> pd.DataFrame:
    """Free-threaded time / GIL time for every pair and mode, with its interval and n: the
    verdicts' estimate (:func:`_paired`), so that the figure, the findings and the verdicts
    print one interval for one ratio."""
    rows = []
    modes = sorted(df["mode"].unique()) if "mode" in df.columns else [None]
    for gil, ft in pairs(df["condition"].unique()):
        for mode in modes:
            r = _paired(df if mode is None else df[df["mode"] == mode], gil, ft)
            rows.append({"pair": pair_label((gil, ft)), "mode": mode, "ft_over_gil": r["ratio"],
                         "ci_lo": r["ci_lo"], "ci_hi": r["ci_hi"], "n": r["n"]})
    return pd.DataFrame(rows, columns=["pair", "mode", "ft_over_gil", "ci_lo", "ci_hi", "n"])


# what the figure, the findings and the explorer say of samples holding no pair (a run narrowed to
# GIL builds: `-p conditions=3.13.5,debian`)
NO_PAIR = ("No free-threaded build was measured beside a GIL build of its release here: there is no "
           "free-threaded / GIL ratio to read.")


def claims(df: pd.DataFrame, experiment: str) -> list[dict]:
    """Per claim of this experiment in claims.csv (the observations table's rows, and for the
    single-thread loop PEP 779's "roughly 5-10%"), per pair: the published ratio free-threaded /
    GIL against ours (times differ by machine; the ratio is the claim)."""
    from ..judge import claims as published_claims

    pub = published().set_index("File")
    out = []
    for _, c in published_claims.of(experiment).iterrows():
        if c["claim_id"] in published_claims.conclusion_ids(experiment):
            continue        # the analysis adds the conclusions (one build's two points)
        cid, file = c["claim_id"], c["point"].removeprefix("File=")
        _, mode = ROWS[file]
        published_ratio = published_claims.value(cid)
        measured = {}
        sel = df if mode is None else df[df["mode"] == mode]
        for gil, ft in pairs(df["condition"].unique()):
            a, b = sel[sel["condition"] == ft]["seconds"], sel[sel["condition"] == gil]["seconds"]
            r = _paired(sel, gil, ft)
            if r["n"]:
                measured[pair_label((gil, ft))] = published_claims.judged(
                    cid, r["ratio"], r, best=float(a.min() / b.min()),
                    note=f"{ft} {a.median():.3g} s, {gil} {b.median():.3g} s (medians)")
        own = cid == f"{experiment}/{file}"          # the table's row, or a claim about the same run
        out.append({"experiment": experiment, "table": "pyconjp2025_observations" if own else "claims",
                    "claim_id": cid,
                    "claim": f"{file}: free-threaded time / GIL time" + ("" if own else f" ({c['value_source']})"),
                    "published": published_ratio, "unit": "ratio", "measured": measured,
                    "band": published_claims.band(cid),
                    "published_as": f"GIL {pub.at[file, 'GIL Enabled (as published)']}, free-threaded "
                                    f"{pub.at[file, 'Free Threaded (as published)']} (3.14 RC2)" if own else c["quote"]})
    return out


def figure(df: pd.DataFrame, experiment: str):
    import matplotlib.pyplot as plt

    from ..present import plots

    pal = plots.palette(df["condition"].unique())
    has_mode = "mode" in df.columns and df["mode"].nunique() > 1
    fig, ax = plt.subplots(figsize=(8, 4.2))
    if has_mode:
        plots.median_with_ci(ax, df, "mode", "seconds", "condition", pal, join=False)
        ax.set_xlabel("")
    else:
        d = df.assign(x="")
        plots.median_with_ci(ax, d, "x", "seconds", "condition", pal, join=False)
        ax.set_xlabel("")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("seconds (dots: samples; bars: median, interval)")
    ax.set_title(get(experiment).title, fontsize=10)
    ax.legend(fontsize=8.5)
    fig.tight_layout()
    return fig


def ratio_figure(df: pd.DataFrame, experiment: str):
    """Free-threaded / GIL per pair and mode, with CI, beside the document's ratio."""
    import matplotlib.pyplot as plt

    r = pair_ratios(df)
    if r.empty:
        return None
    pub = published()
    fig, ax = plt.subplots(figsize=(8, 3.4))
    labels = [f"{a}\n{'' if m is None else m}" for a, m in zip(r["pair"], r["mode"])]
    ax.errorbar(range(len(r)), r["ft_over_gil"], yerr=[r["ft_over_gil"] - r["ci_lo"], r["ci_hi"] - r["ft_over_gil"]],
                fmt="o", capsize=5, color="tab:blue", label="ours: median of per-repeat ratios, 95% interval")
    for i, m in enumerate(r["mode"]):
        for _, row in pub.iterrows():
            if ROWS.get(row["File"]) == (experiment, m):
                v = row["free_threaded_value"] / row["gil_enabled_value"]
                ax.plot([i - 0.3, i + 0.3], [v, v], color="black", linestyle="--",
                        label="document (3.14 RC2)" if i == 0 else None)
    ax.axhline(1, color="0.6", linewidth=0.8)
    ax.set_xticks(range(len(r)), labels, fontsize=8.5)
    ax.set_ylabel("free-threaded time / GIL time")
    ax.set_ylim(0, max(1.6, float(np.nanmax(r["ci_hi"])) * 1.15))
    ax.legend(fontsize=8.5)
    ax.set_title("Below 1: the free-threaded build is faster", fontsize=10)
    fig.tight_layout()
    return fig


def side_by_side(df: pd.DataFrame, experiment: str) -> pd.DataFrame:
    """The document's rows for this experiment, with our medians per condition beside them."""
    s = summary(df)
    out = []
    for _, row in published().iterrows():
        exp, mode = ROWS.get(row["File"], (None, None))
        if exp != experiment:
            continue
        line = {"document row": row["File"], "document: GIL": row["GIL Enabled (as published)"],
                "document: free-threaded": row["Free Threaded (as published)"]}
        sel = s if mode is None else s[s["mode"] == mode]
        for _, r in sel.iterrows():
            line[f"{r['condition']}: median [interval] s"] = estimate_text(r["median"], r["ci_lo"], r["ci_hi"],
                                                                          r["coverage"], r["n"], stats.MEDIAN)
        out.append(line)
    return pd.DataFrame(out)


def findings(df: pd.DataFrame, experiment: str) -> str:
    r = pair_ratios(df)
    if r.empty:
        return NO_PAIR
    lines = []
    for _, x in r.iterrows():
        mode = "" if x["mode"] is None else f" ({x['mode']})"
        # a share of the time, said as one ("44% less time"), never as a speed ("44% faster" is 1.79x)
        change = "more" if x["ft_over_gil"] > 1 else "less"
        lines.append(f"- **{x['pair']}**{mode}: the free-threaded build takes {x['ft_over_gil']:.2f}x the GIL "
                     f"build's time {stats.bracket(x['ci_lo'], x['ci_hi'], int(x['n']), stats.PAIRED)} (median of "
                     f"per-repeat ratios), {abs(x['ft_over_gil'] - 1):.0%} {change} time.")
    return "\n".join(lines)


def explorer(df: pd.DataFrame, experiment: str):
    """Kernel-free: pick a view, slide over the GIL/free-threaded pairs."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..present import plots, widgets

    pal = plots.palette(df["condition"].unique())
    prs = pairs(df["condition"].unique())
    if not prs:
        from IPython.display import Markdown

        return Markdown(NO_PAIR)
    d = df.assign(mode=df["mode"] if "mode" in df.columns else "run")
    r = pair_ratios(df)
    ymax = float(d["seconds"].max()) * 1.1

    def draw(view, pair):
        fig, ax = plt.subplots(figsize=(7.5, 3.4))
        if view == "samples":
            g = d[d["condition"].isin(pair)]
            sns.stripplot(data=g, x="mode", y="seconds", hue="condition", hue_order=list(pair),
                          palette={c: pal[c] for c in pair}, dodge=True, size=5, jitter=0.1, ax=ax)
            ax.set_ylim(0, ymax)
            ax.set_title(f"{pair_label(pair)}: every sample", fontsize=10)
            ax.set_xlabel("")
        else:
            g = r[r["pair"] == pair_label(pair)]
            labels = [str(m) for m in g["mode"]]
            ax.bar(labels, g["ft_over_gil"], yerr=[g["ft_over_gil"] - g["ci_lo"], g["ci_hi"] - g["ft_over_gil"]],
                   capsize=5, color=pal[pair[1]])
            ax.axhline(1, color="0.5", linewidth=0.8)
            ax.set_ylim(0, max(1.6, float(r["ci_hi"].max()) * 1.1))
            ax.set_ylabel("free-threaded / GIL time")
            ax.set_title(f"{pair_label(pair)}: median of per-repeat ratios, interval", fontsize=10)
        return fig

    return widgets.stack_explorer(draw, ("view", ["samples", "ratio"], ["every sample", "free-threaded / GIL"]),
                                  ("pair", prs, [pair_label(p) for p in prs]), title="Explore the pairs")
