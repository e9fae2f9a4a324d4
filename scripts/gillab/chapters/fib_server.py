"""How the fib_server chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.fib_server`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..judge.analysis import ModuleAnalysis, frame_cached
from ..judge.prose import words as chapter_words
from ..judge.tables import estimate_over_runs
from . import doc003
from ..measure.experiments.fib_server import KINDS


# perf2's rate "during" the long request is the median over the bins wholly inside it: a run with
# fewer has no such rate (its long request was too short for its bins), and says so
MIN_DURING_BINS = 3


NO_VALUE_WHY = {st: f"the long request ended before {MIN_DURING_BINS} whole bins of bin_s fell inside it"
                for st in ("rate_during", "rate_during_mean", "perf2_steady", "perf2_drop")}


def published() -> pd.DataFrame:
    return doc003.published("fib_server")


def published_table() -> pd.DataFrame:
    from ..judge import results

    p1 = results.reference("beazley_perf1_fib30_latency")
    p2 = results.reference("beazley_perf2_requests_per_second")
    a = p1.groupby("phase")["seconds_per_fib30_request"].apply(lambda s: ", ".join(f"{v:.2f}" for v in s))
    b = p2.groupby(["server", "phase"], sort=False)["requests_per_second"].apply(
        lambda s: ", ".join(f"{v:,.0f}" for v in s))
    rows = [{"listing": f"perf1, {k}", "as printed": v} for k, v in a.items()]
    rows += [{"listing": f"perf2, {srv}, {ph}", "as printed": v} for (srv, ph), v in b.items()]
    return pd.DataFrame(rows)


def document_values() -> dict:
    """The document's statistics, computed from its listings the way ours are computed."""
    from ..judge import results

    p1 = results.reference("beazley_perf1_fib30_latency")
    p2 = results.reference("beazley_perf2_requests_per_second")
    one = p1[p1["phase"] == "one client"]["seconds_per_fib30_request"]
    second = p1[p1["phase"].str.startswith("second")]
    started = second.loc[second["note"].notna(), "sample_index"].min()     # "# 2nd test started"
    two = second[second["sample_index"] >= started]["seconds_per_fib30_request"]
    thread = p2[p2["server"] == "threaded fib server"]
    alone = thread[thread["phase"] == "perf2 alone"]["requests_per_second"]
    long_phase = thread[thread["phase"].str.contains("fib\\(40\\)")]
    began = int(long_phase["phase"].str.extract(r"during sample (\d+)")[0].iloc[0])   # the listing's own words
    during = long_phase[long_phase["sample_index"] > began]["requests_per_second"]
    pool = p2[p2["server"].str.startswith("ProcessPool")]["requests_per_second"]
    return {
        "perf1_ratio": float(two.median() / one.median()),
        "perf2_drop": float(1 - during.median() / alone.median()),
        "pool_reduction": float(1 - pool.median() / alone.median()),
    }


def _median(x: np.ndarray) -> float:
    """A Series' median (NaN skipped; NaN where nothing is left), on an array."""
    x = x[~np.isnan(x)]
    return float(np.median(x)) if len(x) else np.nan


def per_run(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (condition, kind, scenario, repeat): the run's statistics (each run's columns
    read as arrays once: a campaign holds hundreds of runs)."""
    rows = []
    has_bin, has_requests = "bin_s" in df, "requests" in df
    for (cond, kind, scen, rep), g in df.groupby(["condition", "kind", "scenario", "repeat"], sort=True):
        r = {"condition": cond, "kind": kind, "scenario": scen, "repeat": rep}
        if scen == "perf1":
            phase, lat = g["phase"].to_numpy(), g["latency_s"].to_numpy(dtype=float)
            alone, both = _median(lat[phase == "alone"]), _median(lat[phase == "both"])
            r.update(alone_s=alone, both_s=both, perf1_ratio=both / alone)
        elif scen == "perf2":
            phase, rate = g["phase"].to_numpy(), g["rate"].to_numpy(dtype=float)
            during = rate[phase == "during"]
            enough = len(during) >= MIN_DURING_BINS
            span = len(during) * float(g["bin_s"].iloc[0]) if has_bin else np.nan
            answered = g["requests"].to_numpy(dtype=float, na_value=np.nan)[phase == "during"] if has_requests else None
            r.update(rate_before=_median(rate[phase == "before"]),
                     rate_during=_median(during) if enough else np.nan,
                     # the requests answered while the long request ran over that time: a rate not
                     # rounded to one bin's count (a 20 ms bin counts in steps of 50 requests/s)
                     rate_during_mean=(float(np.nansum(answered)) / span
                                       if enough and has_requests and span > 0 else np.nan),
                     long_s=g["long_s"].iloc[0], during_bins=len(during))
            r["perf2_steady"] = r["rate_during"] / r["rate_before"]
            r["perf2_drop"] = 1 - r["perf2_steady"]
        else:
            request, lat = g["request"].to_numpy(), g["latency_s"].to_numpy(dtype=float)
            short, long = lat[request == "short"], lat[request == "long"]
            long = long[~np.isnan(long)]
            r.update(short_wait_s=short[0] if len(short) else np.nan, long_min_s=float(long.min()) if len(long) else np.nan,
                     long_median_s=_median(long))
            r["lockout_ratio"] = r["short_wait_s"] / r["long_min_s"]
        rows.append(r)
    out = pd.DataFrame(rows)
    # the pool's rate alone against the thread server's, run by run (paired by repeat)
    if len(out) and "rate_before" in out:
        thr = out[(out["kind"] == "thread") & (out["scenario"] == "perf2")].set_index(["condition", "repeat"])
        sel = (out["kind"] == "pool") & (out["scenario"] == "perf2")
        keys = list(zip(out.loc[sel, "condition"], out.loc[sel, "repeat"]))
        base = [thr["rate_before"].get(k, np.nan) for k in keys]
        out.loc[sel, "pool_reduction"] = 1 - out.loc[sel, "rate_before"].to_numpy() / np.array(base, dtype=float)
    return out


STATISTICS = ("perf1_ratio", "perf2_drop", "perf2_steady", "pool_reduction", "lockout_ratio", "alone_s", "both_s",
              "rate_before", "rate_during", "rate_during_mean", "short_wait_s", "long_min_s")


@frame_cached
def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per condition, server and scenario: the median of each statistic over runs, with a
    its interval over runs (independent server runs); ``point`` is the server kind, as the
    claims table names it."""
    s = doc003.summarize_runs(per_run(df), ["condition", "kind", "scenario"], STATISTICS)
    return s.assign(point=s["kind"]) if len(s) else s


def claims(df: pd.DataFrame) -> list[dict]:
    return doc003.claims(summary(df), "fib_server", document_values(), no_value_why=NO_VALUE_WHY)


def _timeline(ax, g: pd.DataFrame, colour, label_runs: bool = True):
    """perf2 rates of every run, against time from the long request's start."""
    for rep, r in g.groupby("repeat"):
        t0 = r["long_start_s"].iloc[0]
        x = r["bin_start_s"] - (t0 if pd.notna(t0) else 0)
        ax.plot(x, r["rate"].clip(lower=1), color=colour, alpha=0.8, linewidth=1.2,
                label=f"run {rep}" if label_runs else None)
        ls = r["long_s"].iloc[0]
        if pd.notna(ls):
            ax.axvspan(0, ls, color="0.85", alpha=0.5, zorder=0)
    ax.axvline(0, color="black", linewidth=0.8, linestyle=":")
    ax.set_yscale("log")


def figure(df: pd.DataFrame):
    """perf2 against the thread-per-connection server: answers per second in every bin, every
    run, with the long request's span shaded, one panel per condition."""
    import matplotlib.pyplot as plt

    from ..present import plots

    d = df[(df["scenario"] == "perf2") & (df["kind"] == "thread")]
    if d.empty:
        d = df[df["scenario"] == "perf2"]
    conds = sorted(d["condition"].unique())
    pal = plots.palette(df["condition"].unique())
    # three builds a row, at the page's width (8 in at 100 dpi: every text at least 10 px as shown)
    cols = min(3, max(len(conds), 1))
    rows = -(-max(len(conds), 1) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(8, 2.9 * rows + 0.6), sharey=True, squeeze=False)
    for ax in axes.flat[len(conds):]:
        ax.set_visible(False)
    for ax, c in zip(axes.flat, conds):
        _timeline(ax, d[d["condition"] == c], pal[c], label_runs=False)
        ax.set_title(c, fontsize=10)
        ax.set_xlabel("s from the long request")
    for ax in axes[:, 0]:
        ax.set_ylabel("perf2 answers / s")
    bin_ms = d["bin_s"].iloc[0] * 1000 if len(d) and "bin_s" in d else float("nan")
    fig.suptitle(f"perf2 against the thread server, in {bin_ms:.0f} ms bins;\nshaded: fib(long_n) running "
                 "(every run)", fontsize=10)
    fig.tight_layout()
    return fig


def perf1_figure(df: pd.DataFrame):
    """perf1: every answer's time against when it was asked, client B's start at 0."""
    import matplotlib.pyplot as plt

    d = df[df["scenario"] == "perf1"]
    kinds = [k for k in KINDS if k in set(d["kind"])]
    conds = sorted(d["condition"].unique())
    # one build a row, one server a column: the page's width (8 in at 100 dpi) however many builds
    fig, axes = plt.subplots(max(len(conds), 1), len(kinds) or 1, figsize=(8, 2.0 * max(len(conds), 1) + 0.6),
                             squeeze=False)
    for i, k in enumerate(kinds):
        top = float(d[d["kind"] == k]["latency_s"].max()) * 1.1
        for j, c in enumerate(conds):
            ax = axes[j][i]
            g = d[(d["kind"] == k) & (d["condition"] == c)]
            for client, marker, colour in (("A", "o", "tab:blue"), ("B", "s", "tab:orange")):
                h = g[g["client"] == client]
                ax.scatter(h["sent_s"] - h["b_started_s"], h["latency_s"], s=12, marker=marker, color=colour,
                           alpha=0.7, label=f"client {client}" if (i, j) == (0, 0) else None)
            ax.axvline(0, color="black", linewidth=0.8, linestyle=":")
            ax.set_ylim(0, top)              # one scale per server, every point shown
            if j == 0:
                ax.set_title(f"{k} server", fontsize=10)
            if i == 0:
                ax.set_ylabel(f"{c}\ns per fib(n)", fontsize=9)
            if j == len(conds) - 1:
                ax.set_xlabel("s from client B's start")
    if kinds:
        axes[0][0].legend(fontsize=8.5)
    fig.tight_layout()
    return fig


def statistics_figure(df: pd.DataFrame):
    """The claims' statistics per condition, median over runs with CI, the document's value dashed."""
    return doc003.statistics_figure(summary(df), "fib_server", df["condition"].unique(), document_values())


def side_by_side(df: pd.DataFrame) -> pd.DataFrame:
    """The document's statistics (from its listings and words) with ours beside them."""
    return doc003.side_by_side(summary(df), "fib_server", document_values())


def findings(df: pd.DataFrame) -> str:
    s = summary(df)

    def get(cond, kind, st):
        r = s[(s["condition"] == cond) & (s["kind"] == kind) & (s["statistic"] == st)]
        return None if r.empty else r.iloc[0]

    lines = []
    for cond in sorted(s["condition"].unique()):
        parts = []
        p1 = get(cond, "thread", "perf1_ratio")
        if p1 is not None:
            parts.append(f"a second perf1 client makes each answer "
                         f"{estimate_over_runs(p1['median'], p1['ci_lo'], p1['ci_hi'], p1['runs'])} times as slow")
        rb, rd = get(cond, "thread", "rate_before"), get(cond, "thread", "rate_during")
        if rb is not None and rd is not None:
            parts.append(f"perf2 goes from {rb['median']:,.0f}/s to {rd['median']:,.0f}/s while fib(long_n) runs "
                         f"(medians of {int(rd['runs'])} run{'s' if rd['runs'] != 1 else ''})")
        pr = get(cond, "pool", "pool_reduction")
        if pr is not None:
            parts.append(f"the pool answers {pr['median']:.0%} fewer perf2 requests than the thread server")
        lo = get(cond, "prefork", "short_wait_s")
        if lo is not None:
            parts.append(f"with every pre-forked acceptor busy a fib(1) waits {lo['median'] * 1000:.1f} ms "
                         + ("(one run)" if lo["runs"] == 1 else f"(median of {int(lo['runs'])} runs)"))
        if parts:
            lines.append(f"- **{cond}**: " + "; ".join(parts) + ".")
    return "\n".join(lines)


def prose(df: pd.DataFrame) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``: each statistic is
    the claims' (:func:`summary`: the median over runs with its interval over runs), and a sentence
    holds only where its whole 95% interval says it.  Their words are the chapter's text's
    (``notebooks/12_fib_server.md``); each is checked at the line of the documents' word it uses
    (lexicon.csv): "fewer" and "rises" a change, "about as fast" the same, never a line of its own."""
    from .. import stats
    from ..judge import lexicon, results
    from ..judge.prose import at_least, at_most, gil_by_condition, listed, within

    said = chapter_words("fib_server")     # the words cell of its text

    s = summary(df)
    at = s.set_index(["condition", "kind", "statistic"]) if len(s) else pd.DataFrame()
    gil_on = gil_by_condition(df)

    def got(conds, st):
        """Per build of ``conds`` measured: the thread server's ``st``, median over runs, interval, n."""
        return {c: {"median": float(r["median"]), "ci_lo": float(r["ci_lo"]), "ci_hi": float(r["ci_hi"]),
                    "n": int(r["runs"]), "method": stats.MEDIAN}
                for c in conds if (c, "thread", st) in at.index for r in [at.loc[(c, "thread", st)]]}
    how = said["median-over-runs"]
    out = []
    p2 = results.reference("beazley_perf2_requests_per_second")
    theirs = float(p2[(p2["server"] == "threaded fib server") & (p2["phase"] == "perf2 alone")]["requests_per_second"].median())
    ours = got(gil_on, "rate_before")
    if ours:
        fewer = theirs * lexicon.falls("a change")     # "fewer": at most 0.9 of the document's
        out.append(said.check(
            "perf2-alone-answers-fewer-here",
            at_most(ours.values(), fewer),
            said.fill("perf2-alone-evidence", theirs=f"{theirs:,.0f}", fewer=f"{fewer:,.0f}", ours=listed(
                said.fill("ours-evidence", how=how), [(c, m, f" ({m['median'] / theirs:.0%})") for c, m in ours.items()],
                ",.0f", "/s")),
            why=said["why-each-request-waits-for-a-wake-up"]))
    free = [c for c, on in gil_on.items() if not on]
    steady = got(free, "perf2_steady")
    if steady:
        rise = lexicon.rises("a change")     # "rises": at least 1.1 of the rate before
        out.append(said.check(
            "free-threaded-perf2-rises-during-long-request",
            at_least(steady.values(), rise),
            listed(said.fill("rate-during-over-before-evidence", how=how, line=f"{rise:g}"), steady.items(), ".2f", "x")))
    two = got(free, "perf1_ratio")
    if two:
        band = lexicon.about("the same")     # "about as fast as they were": 1 +-10%
        out.append(said.check(
            "free-threaded-second-client-costs-little",
            within(two.values(), 1 - band, 1 + band),
            listed(said.fill("two-clients-over-one-evidence", how=how, low=f"{1 - band:g}", high=f"{1 + band:g}"),
                   two.items(), ".2f", "x")))
    return out


def explorer(df: pd.DataFrame):
    """Kernel-free: perf2 timelines, one server kind at a time, slide over the conditions."""
    import matplotlib.pyplot as plt

    from ..present import plots, widgets

    d = df[df["scenario"] == "perf2"]
    kinds = [k for k in KINDS if k in set(d["kind"])] or ["thread"]
    conds = sorted(d["condition"].unique()) or sorted(df["condition"].unique())
    pal = plots.palette(df["condition"].unique())
    top = float(d["rate"].max()) * 1.5 if len(d) else 10.0

    def draw(kind, cond):
        fig, ax = plt.subplots(figsize=(7.5, 3.2))
        g = d[(d["kind"] == kind) & (d["condition"] == cond)]
        if len(g):
            _timeline(ax, g, pal[cond])
            ax.legend(fontsize=8.5, loc="lower left")
        ax.set_ylim(1, top)
        ax.set_xlabel("seconds from the long request (shaded while it runs)")
        ax.set_ylabel("perf2 answers per second")
        ax.set_title(f"{kind} server under {cond}: every perf2 run", fontsize=10)
        return fig

    return widgets.stack_explorer(draw, ("server", kinds, kinds), ("condition", conds, conds),
                                  title="Explore the perf2 timelines")


ANALYSIS = ModuleAnalysis(__name__, extras=("perf1_figure", "statistics_figure"))
