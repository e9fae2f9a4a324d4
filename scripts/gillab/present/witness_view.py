"""The second witness, read: CPython 3.15's own sampler beside our trace of 3.13.5.

What :mod:`gillab.measure.witness` kept in a campaign (``witness/<experiment>/``) becomes, per
run and per thread's role (the handler, the CPU thread; the countdown's unnamed threads as one,
their mean), the share of the window the thread held the GIL and waited for it, as each observer
saw it:

- the **sampler** (3.15): of the samples that read the thread, the share that found it holding
  the GIL, and the share that found it asking for the GIL without holding it;
- the **trace** (3.13.5+trace): the time the thread held the GIL (from taking it to dropping it)
  and waited for it (from wanting it to taking it), over the window's span.

The main thread is left out (it starts the others and joins them, or accepts).  A statistic over
runs is the median with its 95% interval (:func:`gillab.present.trace_view.over_runs`: 7 runs at
least).  For each role the observers *agree* where the two intervals of the waited share overlap
(the words of the issue that asked for this check: "agree within their intervals"), *differ* where
they do not; with too few runs either way the comparison is *open*.  Each observer's cost is the
median over rounds of its run's time (the countdown's; the echo's time per request) over the same
build's run alone in that round.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..measure import trace_file, witness
from . import trace_view
from .trace_view import over_runs, over_runs_text

SAMPLER, TRACE = "3.15's sampler", "our trace"
EACH = "each thread"       # threads the workload does not name (the countdown's): their mean
COLUMNS = ["observer", "build", "round", "role", "threads", "held", "waited", "samples", "failed", "rate_hz"]


def campaign_for(experiment: str, shown: str | None = None):
    """The campaign whose witness of ``experiment`` a chapter shows (:func:`trace_view.campaign_for`)."""
    return trace_view.campaign_for(experiment, shown, "witness")


def role_of(label: str) -> str | None:
    """The role a thread is read under: its name where the workload names it (``handler``, ``CPU
    thread``), :data:`EACH` for an unnamed one, None for the main thread."""
    if label.startswith("main"):
        return None
    return EACH if label.startswith("thread ") else label


def _by_role(held: dict, waited: dict, labels: dict) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for tid, label in labels.items():
        role = role_of(label)
        if role is not None:
            out.setdefault(role, {"held": [], "waited": []})
            out[role]["held"].append(held[tid])
            out[role]["waited"].append(waited[tid])
    return {r: {"threads": len(v["held"]), "held": float(np.mean(v["held"])), "waited": float(np.mean(v["waited"]))}
            for r, v in out.items()}


def sampled_shares(data: dict) -> dict:
    """One witnessed run: per role, the share of the samples that read its thread holding the
    GIL, and asking for it without holding it (the mean over the role's threads); the run's
    samples, failed reads and the rate achieved."""
    bits = data["bits"]
    seen: dict[int, list[int]] = {}
    for _, threads in data["samples"]:
        for tid, status in threads:
            seen.setdefault(int(tid), []).append(int(status))
    named = {int(t): str(r) for t, r in ((data.get("meta") or {}).get("roles") or {}).items()}
    labels, k = {}, 0
    for tid, states in seen.items():             # in the order the sampler first read them
        if tid in named:
            labels[tid] = named[tid]
        elif any(x & bits["main"] for x in states):
            labels[tid] = "main"
        else:
            k += 1
            labels[tid] = f"thread {k}"
    arr = {t: np.array(v) for t, v in seen.items()}
    held = {t: float(((a & bits["has_gil"]) > 0).mean()) for t, a in arr.items()}
    waited = {t: float((((a & bits["gil_requested"]) > 0) & ((a & bits["has_gil"]) == 0)).mean())
              for t, a in arr.items()}
    window_s = data["window_ms"][1] / 1e3
    return {"roles": _by_role(held, waited, labels), "samples": len(data["samples"]),
            "failed": int(sum(data.get("failed", {}).values())),
            "rate_hz": len(data["samples"]) / window_s if window_s else np.nan}


def traced_shares(tr: trace_file.Trace) -> dict:
    """One traced run: per role (the trace's labels), the time its thread held the GIL and waited
    for it over the window's span."""
    s = trace_file.spans(tr)
    span = tr.span_ns or np.nan
    held = {t: s[(s["tid"] == t) & (s["kind"] == "hold")]["dur_ns"].sum() / span for t in tr.threads}
    waited = {t: s[(s["tid"] == t) & (s["kind"] == "wait")]["dur_ns"].sum() / span for t in tr.threads}
    return {"roles": _by_role(held, waited, {t: tr.label(t) for t in tr.threads}), "samples": int(len(tr.events)),
            "failed": int(tr.lost), "rate_hz": np.nan}


def _rows(observer: str, build, k, shares: dict) -> list[dict]:
    return [{"observer": observer, "build": build, "round": k, "role": role, **v, "samples": shares["samples"],
             "failed": shares["failed"], "rate_hz": shares["rate_hz"]} for role, v in shares["roles"].items()]


def runs(camp, experiment: str) -> tuple[pd.DataFrame, list[str]]:
    """Every observed run of ``experiment`` in ``camp``, a row per role: observer, build, round and
    shares; and what could not be read."""
    folder = camp.dir / "witness" / experiment
    rows = []
    sampled, bad = witness.stored(folder)
    for d in sampled:
        rows += _rows(SAMPLER, d["meta"]["condition"], d["meta"]["round"], sampled_shares(d))
    traces, damaged = trace_file.stored(folder, beside=(witness.SUFFIX, witness.ROUND_SUFFIX))
    for tr in traces:
        rows += _rows(TRACE, tr.meta.get("condition"), tr.meta.get("round"), traced_shares(tr))
    return pd.DataFrame(rows, columns=COLUMNS), bad + damaged


def setting(camp, experiment: str) -> str:
    """The point, sizes, window and rate the witness files record, in words."""
    sampled, _ = witness.stored(camp.dir / "witness" / experiment)
    if not sampled:
        return ""
    d = sampled[0]
    m = d["meta"]
    point = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in m.get("point", {}).items())
    sizes = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in m.get("sizes", {}).items())
    start, length = d["window_ms"]
    return (f"{point}{', ' + sizes if sizes else ''}; the window from {start:g} to {start + length:g} ms after the "
            f"start; {d['rate_hz']:,.0f} samples a second asked")


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


def roles(df: pd.DataFrame) -> list[str]:
    """The roles both observers read: each thread (the countdown's), the handler, then the others."""
    both = set(df[df["observer"] == SAMPLER]["role"]) & set(df[df["observer"] == TRACE]["role"])
    return sorted(both, key=lambda r: (r != EACH, r != "handler", r))


def summary(df: pd.DataFrame, cost: dict[str, dict]) -> pd.DataFrame:
    """Per role and observer: its build, runs, the held and waited shares over runs, its cost."""
    rows = []
    for role in roles(df):
        for observer in (SAMPLER, TRACE):
            g = df[(df["observer"] == observer) & (df["role"] == role)]
            rows.append({"thread": role, "observer": observer, "build": ", ".join(sorted(g["build"].unique())),
                         "runs": len(g), "held share": over_runs_text(over_runs(g["held"])),
                         "waited share": over_runs_text(over_runs(g["waited"])),
                         "time / alone": over_runs_text(cost.get(observer, over_runs([]))),
                         "samples a run": f"{g['samples'].median():.0f}" if observer == SAMPLER else "every event",
                         "failed reads": int(g["failed"].sum()) if observer == SAMPLER else "-"})
    return pd.DataFrame(rows)


def agreement(df: pd.DataFrame, what: str = "waited", role: str | None = None) -> dict:
    """Whether the two observers' intervals of ``what`` for ``role`` (the first both read, if
    None) overlap: ``agree``, ``differ``, or ``open`` (an observer without runs enough), with both
    and the difference of their medians."""
    role = role if role is not None else (roles(df) or [EACH])[0]
    d = df[df["role"] == role]
    a = over_runs(d[d["observer"] == SAMPLER][what])
    b = over_runs(d[d["observer"] == TRACE][what])
    if not (a["conclusive"] and b["conclusive"]):
        outcome = "open"
    else:
        outcome = "agree" if a["lo"] <= b["hi"] and b["lo"] <= a["hi"] else "differ"
    return {"outcome": outcome, "sampler": a, "trace": b, "difference": a["median"] - b["median"], "role": role}


def figure(df: pd.DataFrame, title: str = ""):
    """Each run's held and waited share per role under each observer, with the median and its
    interval."""
    import matplotlib.pyplot as plt

    from . import plots

    long = df[df["role"].isin(roles(df))].melt(id_vars=["observer", "build", "round", "role"],
                                               value_vars=["held", "waited"], var_name="share", value_name="value")
    long["share"] = long["role"] + ": " + long["share"]
    long["observer"] = long["observer"] + " (" + long["build"] + ")"
    pal = plots.palette(long["observer"].unique())
    fig, ax = plt.subplots(figsize=(7, 3.8))
    plots.median_with_ci(ax, long, "share", "value", "observer", pal, join=False)
    ax.set_ylim(0, 1)
    ax.set_xlabel("")
    ax.set_ylabel("share of the window")
    ax.set_title(title or "The GIL held and waited for, as each observer saw it", fontsize=10)
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, frameon=False)
    fig.tight_layout()
    return fig


def sentences(df: pd.DataFrame, cost: dict[str, dict]) -> list[str]:
    """What the comparison says, computed: per role, the waited share under each observer and
    whether they agree; by how much they differ; which the report reads; what watching cost."""
    out = []
    for role in roles(df) or [EACH]:
        ag = agreement(df, role=role)
        s, t = ag["sampler"], ag["trace"]
        who = "The two threads each" if role == EACH else f"The {role}"
        out.append(f"{who} waited for the GIL {over_runs_text(s, 3)} of the window by 3.15's sampler and "
                   f"{over_runs_text(t, 3)} by our trace of 3.13.5 (medians over runs, 95% intervals).")
        if ag["outcome"] == "agree":
            out.append(f"**The observers agree** on it: their intervals overlap (medians {abs(ag['difference']):.3f} "
                       "apart). An observer with no patch and one that records every event see the same share on the "
                       "same GIL design: what the traces show of it is not made by the patch.")
        elif ag["outcome"] == "differ":
            out.append(f"**The observers differ** on it: their intervals do not overlap (medians "
                       f"{ag['difference']:+.3f} apart, the sampler's minus the trace's). The report reads the trace for "
                       "what happened when (it records every event, where the sampler reads about one state a "
                       "millisecond and misses shorter states), and holds this difference as a finding about one of the "
                       "two until its cause is found.")
        else:
            out.append("With fewer than 7 runs under an observer, whether they agree on it is **open** here.")
    c = cost.get(SAMPLER)
    if c and c["n"]:
        out.append(f"Watching costs time: a witnessed run took {over_runs_text(c, 3)} times its run alone, a traced "
                   f"one {over_runs_text(cost[TRACE], 3)} (the sampler reads from a process of its own, beside the "
                   "workload's).")
    return out
