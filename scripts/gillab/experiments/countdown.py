"""Countdown over threads: document 000's first table (pbts13_t1)."""
from __future__ import annotations

import math

import pandas as pd

from .. import results, stats
from ..profiles import Param, positive_int, positive_ints
from . import Experiment

PUBLISHED_TABLE = "pbts13_t1_countdown_threads"
SEED_TOTAL = 100_000_000


class Countdown(Experiment):
    name = "countdown"
    workload = "countdown"
    title = "Countdown over threads"
    document = "000_7286df4c8fefdbad.txt (Python behind the scenes #13), first table"
    metric = "seconds"
    params = {
        "threads": Param("threads", positive_ints, "thread counts to sweep, e.g. [1, 2, 4, 8]"),
        "total_decrements": Param("total_decrements", positive_int,
                                  "decrements in all, split evenly over the threads"),
    }
    point_keys = ("threads",)

    def points(self, p):
        return [{"threads": t} for t in p["threads"]]

    def check(self, p):
        from ..profiles import ParameterError

        too_many = [t for t in p["threads"] if t > p["total_decrements"]]
        if too_many:
            raise ParameterError(f"countdown: threads {too_many} exceed total_decrements "
                                 f"{p['total_decrements']}: some threads would have nothing to do")


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per condition and thread count: best of n, median with CI, speedup over 1 thread with CI."""
    rows = []
    for (cond, threads), g in df.groupby(["condition", "threads"], sort=True):
        s = stats.summarize(g["seconds"])
        total = g["total_decrements"].iloc[0]
        one = df[(df["condition"] == cond) & (df["threads"] == 1)]["seconds"]
        sp = stats.ratio_of_medians(one, g["seconds"]) if len(one) else {"ratio": math.nan, "ci_lo": math.nan, "ci_hi": math.nan}
        rows.append({
            "condition": cond, "threads": int(threads), "total_decrements": int(total), **s,
            "ns_per_decrement": s["median"] / total * 1e9,
            "speedup": sp["ratio"], "speedup_ci_lo": sp["ci_lo"], "speedup_ci_hi": sp["ci_hi"],
            "gil_enabled": bool(g["gil_enabled"].astype(str).str.lower().eq("true").all()),
        })
    return pd.DataFrame(rows)


def published() -> pd.DataFrame:
    return results.reference(PUBLISHED_TABLE)


def published_table() -> pd.DataFrame:
    """The document's table as it printed it."""
    p = published()
    return pd.DataFrame({"threads": p["threads"], "decrements per thread": p["decrements_per_thread_n"],
                         "time in seconds (best of 3)": p["time_s_best_of_3"],
                         "machine": p["machine"], "python": p["python"]})


def verdicts(df: pd.DataFrame) -> list[dict]:
    """One row per published cell: the time ratio T(k)/T(1) (scale-free), and T(1) itself.

    The published ratio is what the document's claim rests on ("the times don't change"); the
    absolute 1-thread time depends on the machine, and is compared scaled to 100M decrements
    when a smaller profile was run (the scaling is said in the row).
    """
    pub = published()
    pub_t1 = float(pub.loc[pub["threads"] == 1, "time_s_best_of_3"].iloc[0])
    out = []
    conds = sorted(df["condition"].unique())
    for _, row in pub.iterrows():
        k = int(row["threads"])
        p_time = float(row["time_s_best_of_3"])
        if k == 1:
            claim = "time for 100,000,000 decrements in 1 thread (best of 3)"
            published_value, unit = p_time, "s"
        else:
            claim = f"time with {k} threads / time with 1 thread (same total work)"
            published_value, unit = p_time / pub_t1, "ratio"
        measured = {}
        for cond in conds:
            g = df[df["condition"] == cond]
            tk, t1 = g[g["threads"] == k]["seconds"], g[g["threads"] == 1]["seconds"]
            if k == 1:
                if not len(tk):
                    continue
                scale = SEED_TOTAL / float(g[g["threads"] == 1]["total_decrements"].iloc[0])
                s = stats.summarize(tk * scale)
                value, lo, hi, best, n = s["median"], s["ci_lo"], s["ci_hi"], s["best"], s["n"]
                note = "" if scale == 1 else f"scaled x{scale:g} from {SEED_TOTAL / scale:,.0f} decrements"
            else:
                if not (len(tk) and len(t1)):
                    continue
                r = stats.ratio_of_medians(tk, t1)
                value, lo, hi, n = r["ratio"], r["ci_lo"], r["ci_hi"], r["n_num"]
                best = float(tk.min() / t1.min())
                note = ""
            measured[cond] = {
                "median": value, "ci_lo": lo, "ci_hi": hi, "best": best, "n": n,
                "ratio_to_published": value / published_value,
                "verdict": stats.verdict(published_value, lo, hi), "note": note,
            }
        out.append({
            "experiment": "countdown", "table": PUBLISHED_TABLE, "claim_id": f"countdown/threads={k}",
            "claim": claim, "published": published_value, "unit": unit,
            "published_as": f"{p_time} s ({row['python']}, {row['machine']})",
            "measured": measured,
        })
    return out


# -- figures ----------------------------------------------------------------------------------
def figure(df: pd.DataFrame, cores: int | None = None):
    """Left: seconds per run (raw samples, median with 95% CI) per thread count.
    Right: speedup over 1 thread with 95% CI, the published speedups, and the ceiling
    min(threads, cores) of this machine."""
    import os

    import matplotlib.pyplot as plt
    import numpy as np

    from .. import plots

    cores = cores or os.cpu_count()
    pal = plots.palette(df["condition"].unique())
    s = summary(df)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 8.5))
    plots.median_with_ci(ax1, df, "threads", "seconds", "condition", pal)
    total = int(df["total_decrements"].iloc[0])
    ax1.set_ylabel(f"seconds for {total:,} decrements")
    ax1.set_xlabel("threads (same total work)")
    ax1.set_ylim(bottom=0)
    ax1.set_title("Time per run: dots = samples, bars = median and 95% CI", fontsize=11)
    ax1.legend(title="condition", fontsize=8, title_fontsize=9)
    pub = published()
    ks = sorted(s["threads"].unique())
    xpos = {k: i for i, k in enumerate(ks)}
    offsets = np.linspace(-0.2, 0.2, max(len(pal), 1))
    for off, (cond, colour) in zip(offsets, pal.items()):
        g = s[s["condition"] == cond].sort_values("threads")
        x = [xpos[k] + off for k in g["threads"]]
        ax2.errorbar(x, g["speedup"], yerr=[g["speedup"] - g["speedup_ci_lo"], g["speedup_ci_hi"] - g["speedup"]],
                     fmt="o-", color=colour, capsize=3, label=cond)
    ceiling = [min(k, cores) for k in ks]
    ax2.plot(range(len(ks)), ceiling, color="0.5", linestyle=":", label=f"ceiling: min(threads, {cores} cores)")
    p = pub.set_index("threads")["time_s_best_of_3"]
    pk = [k for k in ks if k in p.index]
    ax2.plot([xpos[k] for k in pk], [p[1] / p[k] for k in pk], label="published (CPython 3.9, best of 3)",
             **plots.PUBLISHED_STYLE)
    ax2.set_xticks(range(len(ks)), [str(k) for k in ks])
    ax2.set_xlabel("threads")
    ax2.set_ylabel("speedup = median T(1) / median T(k)")
    ax2.set_ylim(0, max(cores, float(np.nanmax(s["speedup_ci_hi"]))) * 1.15)
    ax2.set_title("Speedup over 1 thread, 95% bootstrap CI", fontsize=11)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    return fig


def explorer(df: pd.DataFrame):
    """Kernel-free explorer: pick a view and slide over the thread counts."""
    import os

    import matplotlib.pyplot as plt

    from .. import plots, widgets

    pal = plots.palette(df["condition"].unique())
    s = summary(df)
    ks = sorted(s["threads"].unique())
    pub = published().set_index("threads")["time_s_best_of_3"]
    cores = os.cpu_count()
    ymax_t = float(df["seconds"].max()) * 1.1
    ymax_s = max(cores, float(s["speedup_ci_hi"].max())) * 1.15

    def draw(view, k):
        fig, ax = plt.subplots(figsize=(7.5, 3.6))
        conds = sorted(pal)
        if view == "samples":
            g = df[df["threads"] == k]
            import seaborn as sns

            sns.boxplot(data=g, x="condition", y="seconds", hue="condition", order=conds, hue_order=conds,
                        palette=pal, ax=ax, fliersize=0, width=0.5, legend=False)
            sns.stripplot(data=g, x="condition", y="seconds", order=conds, color="black", size=4, ax=ax,
                          jitter=0.1, alpha=0.7)
            ax.set_ylim(0, ymax_t)
            ax.set_ylabel(f"seconds ({int(g['total_decrements'].iloc[0]):,} decrements)")
            ax.set_title(f"{k} thread{'s' if k > 1 else ''}: every sample (box = quartiles)", fontsize=11)
        else:
            g = s[s["threads"] == k].set_index("condition").reindex(conds)
            ax.bar(conds, g["speedup"], color=[pal[c] for c in conds],
                   yerr=[g["speedup"] - g["speedup_ci_lo"], g["speedup_ci_hi"] - g["speedup"]], capsize=5)
            ax.axhline(min(k, cores), color="0.5", linestyle=":", label=f"ceiling min({k}, {cores} cores)")
            if k in pub.index:
                ax.axhline(pub[1] / pub[k], color="black", linestyle="--", label=f"published: {pub[1] / pub[k]:.2f}")
            ax.set_ylim(0, ymax_s)
            ax.set_ylabel("speedup over 1 thread")
            ax.set_title(f"{k} thread{'s' if k > 1 else ''}: speedup, median with 95% CI", fontsize=11)
            ax.legend(fontsize=8, loc="upper left")
        ax.set_xlabel("")
        fig.tight_layout()
        return fig

    views = ["samples", "speedup"]
    return widgets.stack_explorer(
        draw, ("view", views, ["time of every sample", "speedup over 1 thread"]),
        ("threads", ks, [str(k) for k in ks]), title="Explore the countdown samples")


def side_by_side(df: pd.DataFrame) -> pd.DataFrame:
    """The published table with ours beside it: per condition, best of n / median [95% CI]."""
    s = summary(df)
    pub = published()
    out = pd.DataFrame({"threads": pub["threads"],
                        "published: s per 100M, best of 3 (3.9)": pub["time_s_best_of_3"].map("{:.2f}".format)})
    total = int(s["total_decrements"].iloc[0])
    for cond in sorted(s["condition"].unique()):
        g = s[s["condition"] == cond].set_index("threads")
        out[f"{cond}: best / median [95% CI], s per {total / 1e6:g}M"] = out["threads"].map(
            lambda k, g=g: f"{g.at[k, 'best']:.3f} / {g.at[k, 'median']:.3f} [{g.at[k, 'ci_lo']:.3f}, {g.at[k, 'ci_hi']:.3f}]"
            if k in g.index else "not measured")
    return out


def verdict_table(df: pd.DataFrame) -> pd.DataFrame:
    """One line per published cell, one column per condition: median [95% CI] and verdict."""
    from ..report import verdict_matrix

    return verdict_matrix(verdicts(df)).drop(columns=["experiment"])


def live_explorer(run):
    """Kernel-driven: choose conditions and a size, re-plot, or measure a small new sweep."""
    import ipywidgets as W

    from .. import widgets
    from . import measure as measure_sweep

    conds = sorted(run.df["condition"].unique())
    controls = {
        "conditions": W.SelectMultiple(options=conds, value=tuple(conds), description="conditions"),
        "total_decrements": W.IntSlider(value=2_000_000, min=1_000_000, max=20_000_000, step=1_000_000,
                                        description="decrements", style={"description_width": "initial"}),
    }

    state = {"df": run.df}

    def replot(v):
        df = state["df"]
        return figure(df[df["condition"].isin(v["conditions"] or conds)])

    def measure_small(v):
        overrides = {"conditions": ",".join(v["conditions"] or conds), "total_decrements": v["total_decrements"]}
        res = measure_sweep("countdown", "smoke", overrides, machine=run.machine, progress=False)
        state["df"] = results.samples("countdown", res.machine, res.config_id)

    return widgets.live_explorer(replot, controls, measure_small)


def findings(df: pd.DataFrame) -> str:
    """The verdict in words, every number computed from the samples shown above."""
    import os

    s = summary(df)
    cores = os.cpu_count()
    kmax = int(s["threads"].max())
    lines = []
    for cond in sorted(s["condition"].unique()):
        g = s[s["condition"] == cond].set_index("threads")
        gil = "GIL on" if g["gil_enabled"].all() else "GIL off"
        parts = []
        for k in [k for k in g.index if k != 1]:
            parts.append(f"{k} threads {g.at[k, 'speedup']:.2f}x [{g.at[k, 'speedup_ci_lo']:.2f}, "
                         f"{g.at[k, 'speedup_ci_hi']:.2f}]")
        t1 = g.at[1, "ns_per_decrement"] if 1 in g.index else float("nan")
        lines.append(f"- **{cond}** ({gil} at run time): {t1:.1f} ns per decrement in one thread; "
                     f"speedup over 1 thread: " + "; ".join(parts) + ".")
    agree = [v for v in verdicts(df) if v["unit"] == "ratio"]
    keep = {c: sum(m["verdict"] == "agrees" for v in agree for cc, m in v["measured"].items() if cc == c)
            for c in sorted(s["condition"].unique())}
    summary_line = "; ".join(f"{c}: {n} of {len(agree)}" for c, n in keep.items())
    return (f"Measured on {cores} cores, {kmax} threads at most, speedups with 95% bootstrap CIs:\n\n"
            + "\n".join(lines)
            + f"\n\nPublished ratios T(k)/T(1) that our measurement matches within 10% (per condition): "
            + summary_line + ".")
