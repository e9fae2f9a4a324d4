"""How the thread_memory chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.thread_memory`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..judge.analysis import ModuleAnalysis, frame_cached
from ..judge.prose import words as chapter_words
from . import doc003


def published() -> pd.DataFrame:
    return doc003.published("thread_memory")


def published_table() -> pd.DataFrame:
    return doc003.inline_table("thread|stack|page|recursion")


def point_name(mode: str, stack_kb) -> str:
    if mode == "recursion":
        return "recursion"
    return "default stack" if not stack_kb else "small stack"


def _vm_over_rlimit(r, stack_kb) -> float:
    """The virtual size a thread with the default stack adds, over the stack limit its run recorded
    (RLIMIT_STACK, the default stack of a new thread): 1 when each thread reserves its whole stack.
    NaN with a stack set by threading.stack_size(), or with no limit (unlimited: glibc's own
    default stack, not recorded)."""
    limit = pd.to_numeric(r.get("rlimit_stack_kib", np.nan), errors="coerce")
    if stack_kb or pd.isna(limit) or limit <= 0:
        return np.nan
    return float(r["vm_per_thread_kib"]) / float(limit)


def per_run(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (cond, mode, kb, rep), g in df.groupby(["condition", "mode", "stack_kb", "repeat"], sort=True):
        r = g.iloc[0]
        row = {"condition": cond, "mode": mode, "stack_kb": kb, "repeat": rep, "point": point_name(mode, kb)}
        if mode == "threads":
            vm = r["vm_per_thread_kib"] / 1024
            row.update(vm_per_thread_mib=vm, rss_per_thread_kib=r["rss_per_thread_kib"],
                       stack_kib=(r.get("stack_size_set_kib") if pd.notna(r.get("stack_size_set_kib", np.nan))
                                  else r.get("rlimit_stack_kib", np.nan)),
                       py_bytes_per_thread=r["py_bytes_per_thread"],
                       rss_over_vm=(r["rss_per_thread_kib"] / r["vm_per_thread_kib"] if r["vm_per_thread_kib"]
                                    else np.nan),
                       vm_over_rlimit=_vm_over_rlimit(r, kb))
        else:
            row.update(depth=r["depth"], crashed=bool(r["crashed"]), ended=r["ended"])
        rows.append(row)
    out = pd.DataFrame(rows)
    if len(out) and (out["mode"] == "threads").any():
        # a smaller stack against the default, run by run (paired by repeat)
        base = out[(out["mode"] == "threads") & (out["stack_kb"] == 0)].set_index(["condition", "repeat"])
        sel = (out["mode"] == "threads") & (out["stack_kb"] > 0)
        ref = [base["vm_per_thread_mib"].get(k, np.nan) for k in zip(out.loc[sel, "condition"], out.loc[sel, "repeat"])]
        out.loc[sel, "small_over_default"] = out.loc[sel, "vm_per_thread_mib"].to_numpy() / np.array(ref, dtype=float)
        # what a thread saves with the smaller stack, over the difference of the two stacks (the
        # rest of a thread's reservation, the allocator's arenas and heaps, cancels out): 1 when
        # threading.stack_size() shrinks the stack by what was asked
        keys = list(zip(out.loc[sel, "condition"], out.loc[sel, "repeat"]))
        vm_default = np.array([base["vm_per_thread_mib"].get(k, np.nan) for k in keys], dtype=float)
        stack_default = np.array([base["stack_kib"].get(k, np.nan) for k in keys], dtype=float)
        saved_kib = (vm_default - out.loc[sel, "vm_per_thread_mib"].to_numpy(dtype=float)) * 1024
        with np.errstate(divide="ignore", invalid="ignore"):
            out.loc[sel, "stack_saving"] = saved_kib / (stack_default - out.loc[sel, "stack_kib"].to_numpy(dtype=float))
        out = _stack_over_rlimit(out)
    return out


def _stack_over_rlimit(out: pd.DataFrame) -> pd.DataFrame:
    """A thread's stack alone, over the stack limit its run recorded: the virtual size a thread
    with the default stack adds, less what a thread adds besides its stack (the allocator's arenas
    and heaps, its bookkeeping), which the same round's run with a stack of S shows as its growth
    less S.  1 when each thread reserves its whole default stack; NaN where the round has no run
    with a smaller stack or the limit is unlimited."""
    threads = out["mode"] == "threads"
    small = (out[threads & (out["stack_kb"] > 0)].groupby(["condition", "repeat"])
             [["vm_per_thread_mib", "stack_kib"]].median())
    sel = threads & (out["stack_kb"] == 0)
    keys = list(zip(out.loc[sel, "condition"], out.loc[sel, "repeat"]))
    other_kib = np.array([small["vm_per_thread_mib"].get(k, np.nan) * 1024 - small["stack_kib"].get(k, np.nan)
                          for k in keys], dtype=float)
    limit = pd.to_numeric(out.loc[sel, "stack_kib"], errors="coerce").to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out.loc[sel, "stack_over_rlimit"] = (out.loc[sel, "vm_per_thread_mib"].to_numpy(dtype=float) * 1024
                                             - other_kib) / np.where(limit > 0, limit, np.nan)
    return out


STATISTICS = ("vm_per_thread_mib", "vm_over_rlimit", "stack_over_rlimit", "small_over_default", "stack_saving",
              "rss_per_thread_kib",
              "rss_over_vm", "py_bytes_per_thread", "depth")


# why a run gives a statistic no value, in the claim's note
NO_VALUE_WHY = {"vm_over_rlimit": "the run's stack limit was unlimited: its threads' default stack is not recorded",
                "stack_over_rlimit": "the run's stack limit was unlimited (its threads' default stack is not recorded), "
                                     "or its round has no run with a smaller stack to tell the stack from the rest"}


@frame_cached
def summary(df: pd.DataFrame) -> pd.DataFrame:
    return doc003.summarize_runs(per_run(df), ["condition", "point"], STATISTICS)


def claims(df: pd.DataFrame) -> list[dict]:
    return doc003.claims(summary(df), "thread_memory", no_value_why=NO_VALUE_WHY)


def side_by_side(df: pd.DataFrame) -> pd.DataFrame:
    return doc003.side_by_side(summary(df), "thread_memory")


def statistics_figure(df: pd.DataFrame):
    return doc003.statistics_figure(summary(df), "thread_memory", df["condition"].unique())


def figure(df: pd.DataFrame):
    """Per thread: virtual size (MiB) and resident set (KiB) with each stack size, and the
    recursion depth reached, every run."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..present import plots

    runs = per_run(df)
    pal = plots.palette(df["condition"].unique())
    th = runs[runs["mode"] == "threads"].assign(stack=lambda d: d["stack_kb"].map(
        lambda k: "default" if not k else f"{k} KiB"))
    rec = runs[runs["mode"] == "recursion"]
    # two panels a row, at the page's width (8 in at 100 dpi: every text at least 10 px as shown)
    fig, grid = plt.subplots(2, 2, figsize=(8, 7.0))
    axes = [grid[0, 0], grid[0, 1], grid[1, 0]]
    grid[1, 1].set_visible(False)
    for ax, col, label in ((axes[0], "vm_per_thread_mib", "virtual size per thread (MiB)"),
                           (axes[1], "rss_per_thread_kib", "resident set per thread (KiB)")):
        if len(th):
            sns.stripplot(data=th, x="stack", y=col, hue="condition", palette=pal, dodge=True, ax=ax, size=5,
                          legend=ax is axes[0])
        ax.set_ylabel(label)
        ax.set_xlabel("thread stack")
        ax.set_ylim(bottom=0)
    if len(rec):
        sns.stripplot(data=rec, x="condition", y="depth", hue="condition", palette=pal, ax=axes[2], size=6, legend=False)
        for i, c in enumerate(sorted(rec["condition"].unique())):
            g = rec[rec["condition"] == c]
            axes[2].annotate(", ".join(sorted(set(g["ended"]))), (i, g["depth"].max()), fontsize=8.5, ha="center",
                             xytext=(0, 6), textcoords="offset points")
        axes[2].tick_params(axis="x", rotation=45)
    pub = published().set_index("claim_id")
    for ax, cid in ((axes[0], "thread-stack-virtual"), (axes[2], "recursion-depth")):
        if cid in pub.index:
            ax.axhline(float(pub.loc[cid, "value"]), color="black", linestyle="--", linewidth=1,
                       label=f"document: {float(pub.loc[cid, 'value']):,.0f}")
            if ax is axes[2]:
                ax.legend(fontsize=8.5, loc="center right")
    axes[2].set_ylabel("recursion depth reached in a thread")
    axes[2].set_xlabel("")
    axes[2].set_ylim(bottom=0)
    if axes[0].get_legend():
        axes[0].legend(fontsize=8.5)
    fig.tight_layout()
    return fig


def findings(df: pd.DataFrame) -> str:
    runs = per_run(df)
    lines = []
    for cond, g in runs.groupby("condition", sort=True):
        d = g[(g["mode"] == "threads") & (g["stack_kb"] == 0)]
        r = g[g["mode"] == "recursion"]
        parts = []
        if len(d):
            parts.append(f"a blocked thread adds {d['vm_per_thread_mib'].median():.2f} MiB of virtual size and "
                         f"{d['rss_per_thread_kib'].median():.0f} KiB of resident memory, and Python allocates "
                         f"{d['py_bytes_per_thread'].median():,.0f} bytes for it")
        if len(r):
            ended = ", ".join(sorted(set(r["ended"])))
            parts.append(f"recursion in a thread reaches {r['depth'].median():,.0f} levels ({ended})")
        lines.append(f"- **{cond}**: " + "; ".join(parts) + ".")
    return "\n".join(lines)


def explorer(df: pd.DataFrame):
    """Kernel-free: one statistic at a time, slide over the stack sizes."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..present import plots, widgets

    runs = per_run(df)
    th = runs[runs["mode"] == "threads"]
    pal = plots.palette(df["condition"].unique())
    kbs = sorted(th["stack_kb"].unique()) or [0]
    views = ["vm_per_thread_mib", "rss_per_thread_kib", "py_bytes_per_thread"]
    labels = ["virtual size per thread (MiB)", "resident set per thread (KiB)", "Python bytes per thread"]

    def draw(view, kb):
        fig, ax = plt.subplots(figsize=(7, 3.2))
        g = th[th["stack_kb"] == kb]
        if len(g):
            sns.stripplot(data=g, x="condition", y=view, hue="condition", palette=pal, ax=ax, size=6, legend=False)
        ax.set_ylim(bottom=0)
        ax.set_ylabel(labels[views.index(view)])
        ax.set_xlabel("")
        ax.set_title(f"{'default stack' if not kb else f'{kb} KiB stacks'}: every run", fontsize=10)
        return fig

    return widgets.stack_explorer(draw, ("view", views, labels),
                                  ("stack", kbs, ["default" if not k else f"{k} KiB" for k in kbs]),
                                  title="Explore the thread memory")


def _recurses_in_c(version: str, nogil_fork) -> bool:
    """Whether a Python-to-Python call recurses in C: CPython before 3.11, except Sam Gross's fork."""
    major, minor = (int(x) for x in str(version).split(".")[:2])
    return (major, minor) < (3, 11) and not bool(nogil_fork)


def prose(df: pd.DataFrame) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``: a size compared
    with a stack or a ratio with 1 holds only where its whole 95% interval over runs says it; the
    recursion's outcomes are counted in the runs measured, as observed.  Their words are the
    chapter's text's (``notebooks/13_thread_memory.md``); "more than its stack" and "lowers" are the
    documents' a change (lexicon.csv: at least 1.1 of the stack, at most 0.9 of the default), the
    line where "about 8 MB" (thread_memory/thread-stack-virtual, +-10%) ends."""
    from .. import stats
    from ..judge import lexicon
    from ..judge.prose import at_least, at_most, listed, ok_rows, together

    said = chapter_words("thread_memory")     # the words cell of its text

    ok = ok_rows(df)
    out = []
    how = said["median-over-runs"]
    runs = per_run(df)
    th = runs[runs["mode"] == "threads"]
    if len(th):
        # each run's virtual size per thread (the claims' vm_per_thread_mib, in KiB) against its stack
        vm = {(c, kb): (stats.summarize(g["vm_per_thread_mib"] * 1024), float(g["stack_kib"].median()))
              for (c, kb), g in th.groupby(["condition", "stack_kb"])}
        more, fewer = lexicon.rises("a change"), lexicon.falls("a change")
        out.append(said.check(
            "thread-adds-more-than-its-stack",
            together(*(at_least([m], more * st) for m, st in vm.values())),
            listed(said.fill("size-per-thread-over-stack-evidence", how=how, line=f"{more:g}"),
                   [(said.fill("build-default-stack", build=c) if not kb else
                     said.fill("build-stack-size", build=c, size=f"{kb:g}"), m, f" / {st:,.0f}")
                    for (c, kb), (m, st) in vm.items()], ",.0f"),
            why=said["why-the-allocator-reserves-more"]))
        ratio = {c: stats.summarize(g["small_over_default"])
                 for c, g in th.dropna(subset=["small_over_default"]).groupby("condition")} \
            if "small_over_default" in th else {}
        if ratio:
            out.append(said.check(
                "smaller-stack-lowers-virtual-size",
                at_most(ratio.values(), fewer),
                listed(said.fill("smaller-over-default-evidence", how=how, line=f"{fewer:g}"), ratio.items())))
    rec = ok[ok["mode"] == "recursion"]
    if len(rec):
        def depths(g):
            return "; ".join(said.fill("build-depth-ended", build=c, depth=f"{x['depth'].median():,.0f}",
                                       ended=x["ended"].iloc[0]) for c, x in g.groupby("condition"))

        kind = {c: _recurses_in_c(g["python"].iloc[0], g["nogil_fork"].iloc[0]) for c, g in rec.groupby("condition")}
        flat = [c for c, inc in kind.items() if not inc]
        if flat:
            g = rec[rec["condition"].isin(flat)]
            out.append(said.check(
                "no-c-recursion-reaches-the-cap",
                {"holds": bool(g["reached_cap"].astype(bool).all() and not g["crashed"].astype(bool).any())},
                depths(g)))
        deep = [c for c, inc in kind.items() if inc]
        if deep:
            g = rec[rec["condition"].isin(deep)]
            out.append(said.check("c-recursion-dies-before-the-cap", {"holds": bool(g["crashed"].astype(bool).all())},
                                  depths(g)))
    return out


ANALYSIS = ModuleAnalysis(__name__, extras=("statistics_figure",))
