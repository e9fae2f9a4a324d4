"""The reading shared by the "same total work over 1/2/4/8 threads" experiments (countdown,
SHA-256): summary, speedups, claims against a published best-of-3 table, figures, explorers.
Every function takes the experiment's :class:`Spec` as ``spec`` (bound by
:class:`~gillab.judge.analysis.ModuleAnalysis`)."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from ..measure import campaigns
from ..judge import results
from .. import stats
from ..judge import claims as published_claims
from ..judge.analysis import frame_cached
from ..judge.tables import stat_text


@dataclass(frozen=True)
class Spec:
    experiment: str
    table: str                       # data/reference/<table>.csv
    published_col: str               # its time column (best of 3)
    size: Callable[[pd.DataFrame], float]   # total work of a group of samples
    seed_size: float                 # the document's total work
    size_words: Callable[[float], str]      # "100,000,000 decrements"
    explorer_title: str
    per_unit: Callable[[pd.Series], str]    # the 1-thread speed in words, from a summary row
    printed: tuple = ()                      # (column of the table, its name as printed), in order
    speed: tuple = ()                        # (summary column, its value from a summary frame)


def published(spec: Spec) -> pd.DataFrame:
    return results.reference(spec.table)


def published_table(spec: Spec) -> pd.DataFrame:
    """The document's table as it printed it."""
    p = published(spec)
    return pd.DataFrame({name: p[col] for col, name in spec.printed})


def _ratio_size(spec: Spec, k: int) -> int:
    """The runs a trial of T(k)/T(1) holds, as the verdicts read it: the trial size of the claim
    ``<experiment>/threads=k`` (a best of 3: 3), or 1 (a ratio of medians) where no claim reads k."""
    try:
        return published_claims.trial_size(f"{spec.experiment}/threads={k}")
    except KeyError:
        return 1


@frame_cached
def summary(df: pd.DataFrame, spec: Spec) -> pd.DataFrame:
    """Per condition and thread count: best of n, median with CI, and T(k)/T(1) with its interval
    as the verdicts read it (:func:`time_ratio`: the document's best of 3, paired by trial), with
    the speedup over 1 thread its inverse: one number for the quantity, in every figure,
    table and sentence of the chapter."""
    rows = []
    for (cond, threads), g in df.groupby(["condition", "threads"], sort=True):
        s = stats.summarize(g["seconds"])
        both = df[(df["condition"] == cond) & df["threads"].isin([1, threads])]
        nan = {"ratio": math.nan, "ci_lo": math.nan, "ci_hi": math.nan, "n": 0, "method": stats.RATIO}
        if threads == 1:        # 1 by definition: no interval to draw
            r, weak = {"ratio": 1.0, "ci_lo": math.nan, "ci_hi": math.nan, "n": 0}, False
        else:
            r = time_ratio(both, int(threads), 1, _ratio_size(spec, int(threads))) if (both["threads"] == 1).any() \
                else nan
            weak = not stats.conclusive(r.get("method", stats.RATIO),
                                        (r.get("n_num", 0), r.get("n_den", 0)) if "n_num" in r else r.get("n"))
        rows.append({
            "condition": cond, "threads": int(threads), "work": spec.size(g), **s,
            "time_ratio": r["ratio"], "time_ratio_ci_lo": r["ci_lo"], "time_ratio_ci_hi": r["ci_hi"],
            "time_ratio_n": r.get("n", 0),
            "speedup": 1 / r["ratio"], "speedup_ci_lo": 1 / r["ci_hi"], "speedup_ci_hi": 1 / r["ci_lo"],
            "speedup_weak": weak,
            "gil_enabled": bool(g["gil_enabled"].fillna(False).astype(bool).all()),
        })
    out = pd.DataFrame(rows)
    if spec.speed:
        out[spec.speed[0]] = spec.speed[1](out)
    return out


def _by_repeat(g: pd.DataFrame, column: str = "seconds") -> pd.Series:
    """One point's run times by repeat number (the newest where a repeat was stored twice)."""
    return g.drop_duplicates("repeat", keep="last").set_index("repeat")[column]


def _both(g: pd.DataFrame, k: int, d: int) -> tuple[pd.Series, pd.Series, bool]:
    """T(k)'s and T(d)'s runs by repeat, and whether they are paired in each run: where d is one
    thread and every run at k timed its own one-thread countdown (``paired``: A-B-B-A in one
    process), those; else the d-thread point's."""
    tk = g[g["threads"] == k]
    if d == 1 and k > 1 and published_claims.own_one_thread(tk):
        return _by_repeat(tk), _by_repeat(tk, published_claims.OWN_ONE), True
    return _by_repeat(tk), _by_repeat(g[g["threads"] == d]), False


def time_ratio(g: pd.DataFrame, k: int, d: int, size: int) -> dict:
    """T(k)/T(d) of one build's samples ``g`` as the verdicts read it (:func:`claims`): with trials
    of ``size`` runs (a best of 3: 3), the median of the per-trial ratios of the trials' values,
    paired by trial; with one run a trial, the ratio of medians.  Where each run at k timed its own
    one-thread countdown (:func:`_both`), a trial's best of 3 at one thread is of those, and with one
    run a trial the ratio is the median of each run's own."""
    num, den, own = _both(g, k, d)
    if size == 1 and own:
        return stats.paired_ratio(num, den)
    if size > 1:
        return stats.paired_ratio(stats.trials(num, size), stats.trials(den, size), stats.PAIRED_TRIALS)
    return stats.ratio_of_medians(num, den)


_POINT = re.compile(r"^threads=(?P<k>\d+)(?: / threads=(?P<d>\d+))?$")


def readings(spec: Spec) -> list[tuple[str, int, int | None]]:
    """The claims rows this experiment judges on its own, as (claim id, threads, the denominator's
    threads): a row's point ``threads=k`` reads T(k) (an absolute) or T(k)/T(1) (a ratio), and
    ``threads=k / threads=d`` reads T(k)/T(d); the conclusions (``.../conclusion/...``) are read
    by :func:`gillab.judge.claims.conclusions`."""
    out = []
    skip = set(published_claims.conclusion_ids(spec.experiment))
    for _, c in published_claims.of(spec.experiment).iterrows():
        m = _POINT.match(str(c["point"]).strip())
        if c["claim_id"] in skip or not m or c["comparison"] == "not testable":
            continue
        k = int(m["k"])
        d = int(m["d"]) if m["d"] else (None if c["kind"] == "absolute" else 1)
        out.append((c["claim_id"], k, d))
    return out


def claims(df: pd.DataFrame, spec: Spec) -> list[dict]:
    """One row per claims row that reads this experiment's thread counts (:func:`readings`): the
    time ratio T(k)/T(d) (scale-free), or T(k) itself, each with the document's own statistic
    (claims.csv ``doc_statistic``: a best of 3).

    Three interleaved repeats (3j..3j+2) make one trial; a trial's value is its best run, and
    the interval is over trials: for T(k) the median of trials' bests, for T(k)/T(d) the median
    of the per-trial ratios of bests (both points ran in the same repeats).  Our medians of runs
    stay in the figures and in the row's note.  The ratio is what the document's argument rests
    on; the absolute 1-thread time depends on the machine, and is compared scaled to the
    document's size when a smaller profile ran (the scaling is said in the row's note).
    """
    pub = published(spec).set_index("threads")
    out = []
    conds = sorted(df["condition"].unique())
    for cid, k, d in readings(spec):
        c = published_claims.get(cid)
        published_value, unit = published_claims.value(cid), c["unit"]
        size = published_claims.trial_size(cid)
        stat = c["doc_statistic"]
        if d is None:
            claim = f"time for {spec.size_words(spec.seed_size)} in {k} thread{'s' if k != 1 else ''} ({stat})"
        else:
            claim = (f"time with {k} threads / time with {d} thread{'s' if d != 1 else ''} (same total work; "
                     f"{stat} each)")
        measured = {}
        for cond in conds:
            g = df[df["condition"] == cond]
            tk, td = g[g["threads"] == k], g[g["threads"] == (d or k)]
            if not (len(tk) and len(td)):
                continue
            if d is None:
                scale = spec.seed_size / spec.size(tk)
                by_trial = stats.trials(_by_repeat(tk) * scale, size)
                r = stats.trial_median(by_trial) if size > 1 else stats.summarize(_by_repeat(tk) * scale)
                value, best = r["median"], float(tk["seconds"].min() * scale)
                median_of_runs = float(tk["seconds"].median() * scale)
                note = "" if scale == 1 else f"scaled x{scale:g} from {spec.size_words(spec.seed_size / scale)}; "
            else:
                r = time_ratio(g, k, d, size)
                num, den, own = _both(g, k, d)
                value, best = r["ratio"], float(num.min() / den.min())
                median_of_runs = float(num.median() / den.median())
                note = "each run over its own one-thread countdown (A-B-B-A in one process); " if own else ""
            if size > 1 and not r["n"]:      # not one complete trial: the runs' median, shown and not judged
                got = min(len(tk), len(td))
                note += (f"{stat}: no complete trial of {size} runs ({got} run{'s' if got != 1 else ''}): "
                         "the median of runs is shown")
                measured[cond] = published_claims.entry(median_of_runs, r, verdict="inconclusive", best=best,
                                                        note=note, statistic=stat)
                continue
            if size > 1:
                note += (f"{stat}: {r['n']} trial{'s' if r['n'] != 1 else ''} of {size} runs "
                         f"({min(len(tk), len(td))} runs); median of runs {median_of_runs:.3g}")
            measured[cond] = published_claims.judged(cid, value, r, best=best, note=note, statistic=stat)
        row = pub.loc[k] if k in pub.index and cid == f"{spec.experiment}/threads={k}" else None
        out.append({
            "experiment": spec.experiment, "table": spec.table if row is not None else "claims", "claim_id": cid,
            "claim": claim, "published": published_value, "unit": unit, "band": published_claims.band(cid),
            "published_as": (f"{float(row[spec.published_col])} s ({row['python']}, {row['machine']})"
                             if row is not None else c["quote"]),
            "measured": measured,
        })
    return out


def side_by_side(df: pd.DataFrame, spec: Spec) -> pd.DataFrame:
    """The published table with ours beside it: per condition, best of n / median [interval]."""
    s = summary(df, spec)
    pub = published(spec)
    out = pd.DataFrame({"threads": pub["threads"],
                        f"published: s for {spec.size_words(spec.seed_size)}, best of 3":
                        pub[spec.published_col].map("{:.2f}".format)})
    work = spec.size_words(s["work"].iloc[0])
    for cond in sorted(s["condition"].unique()):
        g = s[s["condition"] == cond].set_index("threads")
        out[f"{cond}: best / median [interval], s for {work}"] = out["threads"].map(
            lambda k, g=g: f"{g.at[k, 'best']:.3f} / {stat_text(g.loc[k], 'median')}" if k in g.index
            else "not measured")
    return out


def findings(df: pd.DataFrame, spec: Spec) -> str:
    """The verdict in words, every number computed from the samples."""
    s = summary(df, spec)
    lines = []
    for cond in sorted(s["condition"].unique()):
        g = s[s["condition"] == cond].set_index("threads")
        gil = "GIL on" if g["gil_enabled"].all() else "GIL off"
        parts = [f"{k} threads {g.at[k, 'time_ratio']:.2f} "
                 + ("(too few runs for a 95% interval)" if g.at[k, "speedup_weak"] else
                    f"[{g.at[k, 'time_ratio_ci_lo']:.2f}, {g.at[k, 'time_ratio_ci_hi']:.2f}]") for k in g.index if k != 1]
        one = spec.per_unit(g.loc[1]) if 1 in g.index else "no 1-thread run"
        lines.append(f"- **{cond}** ({gil} at run time): {one}; T(k)/T(1): " + "; ".join(parts) + ".")
    ratio_rows = [v for v in claims(df, spec)       # the published table's T(k)/T(1)
                  if v["unit"] == "ratio" and re.fullmatch(rf"{spec.experiment}/threads=\d+", v["claim_id"])]
    conds = sorted(s["condition"].unique())
    # each build's published ratios it was measured at (a build on the small grid misses some)
    seen = {c: [v["measured"][c] for v in ratio_rows if v["measured"].get(c, {}).get("verdict")] for c in conds}
    agree = {c: sum(m["verdict"] == "agrees" for m in seen[c]) for c in conds}
    small = {c: sum(stats.too_few_runs(m.get("why_inconclusive")) for m in seen[c]) for c in conds}

    def of(c):
        left = len(ratio_rows) - len(seen[c])
        return (f"{c}: {agree[c]} of {len(seen[c])}" + (f" ({small[c]} with too few runs to say)" if small[c] else "")
                + (f" (the other {left} not measured)" if left else ""))
    return (f"Measured on {campaigns.cores_of(df)} cores: the time with k threads over the time with one, T(k)/T(1), "
            "as the verdicts read it (the document's best of 3, the median of the per-trial ratios, with its 95% "
            "interval; a speedup is its inverse):\n\n" + "\n".join(lines)
            + f"\n\nOf the document's {len(ratio_rows)} ratios T(k)/T(1), those our measurement agrees with (its "
            "whole 95% interval inside the claim's band), of those measured on each build: "
            + "; ".join(of(c) for c in conds) + ".")


# -- figures ----------------------------------------------------------------------------------
def figure(df: pd.DataFrame, spec: Spec, cores: int | None = None):
    """Top: seconds per run (samples, median with interval) per thread count.  Bottom: speedup
    over 1 thread with interval, the published speedups, and this machine's ceiling."""
    import matplotlib.pyplot as plt
    import numpy as np

    from ..present import plots

    cores = cores or campaigns.cores_of(df)
    pal = plots.palette(df["condition"].unique())
    s = summary(df, spec)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 8.5))
    plots.median_with_ci(ax1, df, "threads", "seconds", "condition", pal)
    ax1.set_ylabel(f"seconds for {spec.size_words(s['work'].iloc[0])}")
    ax1.set_xlabel("threads (same total work)")
    ax1.set_ylim(bottom=0)
    ax1.set_title("Time per run: dots = samples, bars = median and interval", fontsize=11)
    if ax1.get_legend():
        ax1.get_legend().remove()     # one legend of the builds above both panels, clear of the dots
    ks = sorted(s["threads"].unique())
    xpos = {k: i for i, k in enumerate(ks)}
    offsets = np.linspace(-0.2, 0.2, max(len(pal), 1))
    for off, (cond, colour) in zip(offsets, pal.items()):
        g = s[s["condition"] == cond].sort_values("threads")
        _, _, bars = ax2.errorbar([xpos[k] + off for k in g["threads"]], g["speedup"],
                                  yerr=[g["speedup"] - g["speedup_ci_lo"], g["speedup_ci_hi"] - g["speedup"]],
                                  fmt="o-", color=colour, capsize=3, label=cond)
        plots.mark_weak(ax2, bars, list(g["speedup_weak"]))
    ax2.plot(range(len(ks)), [min(k, cores) for k in ks], color="0.5", linestyle=":",
             label=f"ceiling: min(threads, {cores} cores)")
    p = published(spec).set_index("threads")[spec.published_col]
    pk = [k for k in ks if k in p.index]
    ax2.plot([xpos[k] for k in pk], [p[1] / p[k] for k in pk], label="published (CPython 3.9, best of 3)",
             **plots.PUBLISHED_STYLE)
    ax2.set_xticks(range(len(ks)), [str(k) for k in ks])
    ax2.set_xlabel("threads")
    ax2.set_ylabel("speedup = 1 / (T(k)/T(1))")
    ax2.set_ylim(0, max(cores, float(np.nanmax(s["speedup_ci_hi"])), float(max(p[1] / p[k] for k in pk))) * 1.15)
    ax2.set_title("Speedup over 1 thread: the verdicts' T(k)/T(1), inverted, with its interval", fontsize=11)
    handles, labels = ax2.get_legend_handles_labels()
    builds = [(h, lab) for h, lab in zip(handles, labels) if lab in pal]
    lines = [(h, lab) for h, lab in zip(handles, labels) if lab not in pal]
    ax2.legend(*zip(*lines), fontsize=8.5, loc="upper right") if lines else None
    fig.legend(*zip(*builds), fontsize=8.5, ncol=min(4, len(builds)), loc="upper center", frameon=False)
    rows = -(-len(builds) // 4)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.03 * rows - 0.01))
    return fig


def explorer(df: pd.DataFrame, spec: Spec):
    """Kernel-free explorer: pick a view and slide over the thread counts."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..present import plots, widgets

    pal = plots.palette(df["condition"].unique())
    s = summary(df, spec)
    ks = sorted(s["threads"].unique())
    pub = published(spec).set_index("threads")[spec.published_col]
    cores = campaigns.cores_of(df)
    ymax_t = float(df["seconds"].max()) * 1.1
    ymax_s = max(cores, float(s["speedup_ci_hi"].max()), float((pub[1] / pub).max())) * 1.15
    work = spec.size_words(s["work"].iloc[0])

    def draw(view, k):
        fig, ax = plt.subplots(figsize=(7.5, 3.6))
        conds = sorted(pal)
        plural = "s" if k > 1 else ""
        if view == "samples":
            g = df[df["threads"] == k]
            sns.boxplot(data=g, x="condition", y="seconds", hue="condition", order=conds, hue_order=conds,
                        palette=pal, ax=ax, fliersize=0, width=0.5, legend=False)
            sns.stripplot(data=g, x="condition", y="seconds", order=conds, color="black", size=4, ax=ax,
                          jitter=0.1, alpha=0.7)
            ax.set_ylim(0, ymax_t)
            ax.set_ylabel(f"seconds ({work})")
            ax.set_title(f"{k} thread{plural}: every sample (box = quartiles)", fontsize=11)
        else:
            g = s[s["threads"] == k].set_index("condition").reindex(conds)
            ax.bar(conds, g["speedup"], color=[pal[c] for c in conds],
                   yerr=[g["speedup"] - g["speedup_ci_lo"], g["speedup_ci_hi"] - g["speedup"]], capsize=5)
            ax.axhline(min(k, cores), color="0.5", linestyle=":", label=f"ceiling min({k}, {cores} cores)")
            if k in pub.index:
                ax.axhline(pub[1] / pub[k], color="black", linestyle="--", label=f"published: {pub[1] / pub[k]:.2f}")
            ax.set_ylim(0, ymax_s)
            ax.set_ylabel("speedup over 1 thread")
            ax.set_title(f"{k} thread{plural}: speedup, median with interval", fontsize=11)
            ax.legend(fontsize=8.5, loc="upper left")
        ax.set_xlabel("")
        return fig

    return widgets.stack_explorer(
        draw, ("view", ["samples", "speedup"], ["time of every sample", "speedup over 1 thread"]),
        ("threads", ks, [str(k) for k in ks]), title=spec.explorer_title)
