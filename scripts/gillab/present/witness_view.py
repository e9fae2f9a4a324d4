"""The second witness, read: CPython 3.15's own sampler beside our trace of 3.13.5.

What :mod:`gillab.measure.witness` kept in a campaign (``witness/<experiment>/``) becomes, per
run, the share of the window each worker thread held the GIL and waited for it, as each observer
saw it:

- the **sampler** (3.15): of the samples in which a worker thread was read, the share that found
  it holding the GIL, and the share that found it asking for the GIL without holding it;
- the **trace** (3.13.5+trace): the time a worker held the GIL (from taking it to dropping it)
  and waited for it (from wanting it to taking it), over the window's span.

A run's value is the mean over its worker threads; a statistic over runs is the median with its
95% interval (:func:`gillab.present.trace_view.over_runs`: 7 runs at least).  The observers
*agree* where the two intervals of the waited share overlap (the words of the issue that asked for
this check: "agree within their intervals"), *differ* where they do not; with too few runs either
way, the comparison is open.  Each observer's cost is the median over rounds of its run's time over
the same build's run alone in that round.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..measure import campaigns, trace_file, witness
from .trace_view import over_runs, over_runs_text

SAMPLER, TRACE = "3.15's sampler", "our trace"


def campaign_for(experiment: str, shown: str | None = None):
    """The campaign whose witness of ``experiment`` a chapter shows: ``shown`` if it holds one,
    else the newest that does; None if none does."""
    held = [c for c in campaigns.all_campaigns() if (c.dir / "witness" / experiment).is_dir()]
    named = [c for c in held if c.id == shown]
    return (named or held[-1:] or [None])[0]


def sampled_shares(data: dict) -> dict:
    """One witnessed run: per worker thread (never flagged main), the share of the samples that
    read it holding the GIL and asking for it without holding it; their means over workers."""
    bits = data["bits"]
    seen: dict[int, list[int]] = {}
    for _, threads in data["samples"]:
        for tid, status in threads:
            seen.setdefault(int(tid), []).append(int(status))
    workers = {t: np.array(s) for t, s in seen.items() if not any(x & bits["main"] for x in s)}
    held = {t: float(((s & bits["has_gil"]) > 0).mean()) for t, s in workers.items()}
    waited = {t: float((((s & bits["gil_requested"]) > 0) & ((s & bits["has_gil"]) == 0)).mean())
              for t, s in workers.items()}
    window_s = data["window_ms"][1] / 1e3
    return {"workers": len(workers), "held": float(np.mean(list(held.values()))) if held else np.nan,
            "waited": float(np.mean(list(waited.values()))) if waited else np.nan,
            "samples": len(data["samples"]), "failed": int(sum(data.get("failed", {}).values())),
            "rate_hz": len(data["samples"]) / window_s if window_s else np.nan}


def traced_shares(tr: trace_file.Trace) -> dict:
    """One traced run: per worker thread (not the main one), the time it held the GIL and waited
    for it over the window's span; their means over workers."""
    s = trace_file.spans(tr)
    span = tr.span_ns or np.nan
    workers = [t for t in tr.threads if t != tr.pid]
    held = [s[(s["tid"] == t) & (s["kind"] == "hold")]["dur_ns"].sum() / span for t in workers]
    waited = [s[(s["tid"] == t) & (s["kind"] == "wait")]["dur_ns"].sum() / span for t in workers]
    return {"workers": len(workers), "held": float(np.mean(held)) if held else np.nan,
            "waited": float(np.mean(waited)) if waited else np.nan, "samples": int(len(tr.events)),
            "failed": int(tr.lost), "rate_hz": np.nan}


def setting(camp, experiment: str) -> str:
    """The point, sizes, window and rate the witness files record, in words."""
    sampled, _ = witness.stored(camp.dir / "witness" / experiment)
    if not sampled:
        return ""
    d = sampled[0]
    m = d["meta"]
    point = ", ".join(f"{k} {v}" for k, v in m.get("point", {}).items())
    sizes = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in m.get("sizes", {}).items())
    start, length = d["window_ms"]
    return (f"{point}, {sizes}; the window from {start:g} to {start + length:g} ms after the start; "
            f"{d['rate_hz']:,.0f} samples a second asked")


def runs(camp, experiment: str) -> tuple[pd.DataFrame, list[str]]:
    """Every observed run of ``experiment`` in ``camp``: observer, build, round and shares; and
    what could not be read."""
    folder = camp.dir / "witness" / experiment
    rows = []
    sampled, bad = witness.stored(folder)
    for d in sampled:
        rows.append({"observer": SAMPLER, "build": d["meta"]["condition"], "round": d["meta"]["round"],
                     **sampled_shares(d)})
    traces, damaged = trace_file.stored(folder, beside=(witness.SUFFIX, witness.ROUND_SUFFIX))
    for tr in traces:
        rows.append({"observer": TRACE, "build": tr.meta.get("condition"), "round": tr.meta.get("round"),
                     **traced_shares(tr)})
    cols = ["observer", "build", "round", "workers", "held", "waited", "samples", "failed", "rate_hz"]
    return pd.DataFrame(rows, columns=cols), bad + damaged


def costs(camp, experiment: str) -> dict[str, dict]:
    """Each observer's cost: its run's time over its build's run alone in the same round, the
    median over rounds with its interval."""
    out = {}
    rounds = witness.rounds_of(camp.dir / "witness" / experiment)
    for observer, how in ((SAMPLER, "witnessed"), (TRACE, "traced")):
        ratios = []
        for r in rounds:
            sec = r.get("seconds", {})
            build = r.get("witness_build") if how == "witnessed" else r.get("traced_build")
            a, b = sec.get(f"{build} {how}"), sec.get(f"{build} alone")
            if a and b:
                ratios.append(a / b)
        out[observer] = over_runs(ratios)
    return out


def summary(df: pd.DataFrame, cost: dict[str, dict]) -> pd.DataFrame:
    """Per observer: its build, runs, the held and waited shares over runs, its cost."""
    rows = []
    for observer in (SAMPLER, TRACE):
        g = df[df["observer"] == observer]
        if not len(g):
            continue
        rows.append({"observer": observer, "build": ", ".join(sorted(g["build"].unique())), "runs": len(g),
                     "held share": over_runs_text(over_runs(g["held"])),
                     "waited share": over_runs_text(over_runs(g["waited"])),
                     "time / alone": over_runs_text(cost.get(observer, over_runs([]))),
                     "samples a run": f"{g['samples'].median():.0f}" if observer == SAMPLER else "every event",
                     "failed reads": int(g["failed"].sum()) if observer == SAMPLER else "-"})
    return pd.DataFrame(rows)


def agreement(df: pd.DataFrame, what: str = "waited") -> dict:
    """Whether the two observers' intervals of ``what`` overlap: ``agree``, ``differ``, or
    ``open`` (an observer without runs enough), with both and the difference of medians."""
    a = over_runs(df[df["observer"] == SAMPLER][what])
    b = over_runs(df[df["observer"] == TRACE][what])
    if not (a["conclusive"] and b["conclusive"]):
        outcome = "open"
    else:
        outcome = "agree" if a["lo"] <= b["hi"] and b["lo"] <= a["hi"] else "differ"
    return {"outcome": outcome, "sampler": a, "trace": b, "difference": a["median"] - b["median"]}


def figure(df: pd.DataFrame):
    """Each run's held and waited share under each observer, with the median and its interval."""
    import matplotlib.pyplot as plt

    from . import plots

    long = df.melt(id_vars=["observer", "build", "round"], value_vars=["held", "waited"], var_name="share",
                   value_name="value")
    long["observer"] = long["observer"] + " (" + long["build"] + ")"
    pal = plots.palette(long["observer"].unique())
    fig, ax = plt.subplots(figsize=(7, 3.6))
    plots.median_with_ci(ax, long, "share", "value", "observer", pal, join=False)
    ax.set_ylim(0, 1)
    ax.set_xlabel("")
    ax.set_ylabel("share of the window, per worker thread")
    ax.set_title("Two threads counting down: the GIL held and waited for, as each observer saw it", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig


def sentences(df: pd.DataFrame, cost: dict[str, dict]) -> list[str]:
    """What the comparison says, computed: the waited share under each observer, whether they
    agree, by how much they differ, and which the report reads."""
    ag = agreement(df)
    s, t = ag["sampler"], ag["trace"]
    out = [f"The two threads each waited for the GIL {over_runs_text(s, 3)} of the window by 3.15's sampler and "
           f"{over_runs_text(t, 3)} by our trace of 3.13.5 (medians over runs, 95% intervals)."]
    if ag["outcome"] == "agree":
        out.append(f"**The observers agree**: their intervals overlap (medians {abs(ag['difference']):.3f} apart). "
                   "An observer with no patch and one that records every event see the same shares on the same GIL "
                   "design: what the traces show is not made by the patch.")
    elif ag["outcome"] == "differ":
        out.append(f"**The observers differ**: their intervals do not overlap (medians {ag['difference']:+.3f} apart, "
                   "the sampler's minus the trace's). The report reads the trace for what happened when (it records "
                   "every event, where the sampler reads about one state a millisecond and misses the transitions "
                   "between them), and holds this difference as a finding about one of the two until its cause is "
                   "found.")
    else:
        out.append("With fewer than 7 runs under an observer, whether they agree is **open** here.")
    c = cost.get(SAMPLER)
    if c and c["n"]:
        out.append(f"Watching costs time: a witnessed run took {over_runs_text(c, 3)} times its run alone, a traced "
                   f"one {over_runs_text(cost[TRACE], 3)} (the sampler reads from a process of its own, beside the "
                   "workload's).")
    return out
