"""A chapter's GIL traces: which campaign's to show, the timeline figure, the explorer and the
sentences computed from them (:mod:`gillab.measure.trace_file` reads and measures a trace; this draws it).

A chapter shows the traces of the campaign it shows when that campaign holds some, else those of
the newest campaign that does (saying whose they are: traces are recorded on one machine and
explain what it measured; they are never counted in a verdict).

Why it is long: the timeline figure, its explorer and the traced statistics a chapter prints all read one
reading of a campaign's traces (which campaign, which shots, their spans)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..measure import campaigns, interpreters, trace_file
from ..measure.experiments.echo import request_cost
from ..measure.trace_record import median_rate
from .. import stats
from ..measure.protocol import point_key

HOLD, WAIT, REQ = "#3b6ea8", "#e8a33d", "#c0392b"


def campaign_for(experiment: str, shown: str | None = None, folder: str = "traces"):
    """The campaign whose traces of ``experiment`` (or what its ``folder`` holds: ``witness``) a
    chapter shows: ``shown`` (the campaign of the chapter's samples) if it holds some, else the
    newest that does; None if none does."""
    held = holding(experiment, folder)
    named = [c for c in held if c.id == shown]
    return (named or held[-1:] or [None])[0]


def holding(experiment: str, folder: str = "traces") -> list:
    """Every campaign here (the reference, the contributed ones, the reader's own) whose ``folder``
    holds ``experiment``'s traces (or a witness's files), oldest first."""
    return [c for c in campaigns.all_campaigns() if (c.dir / folder / experiment).is_dir()]


def load(experiment: str, shown: str | None = None) -> tuple[object, list[trace_file.Trace], list[str]]:
    """(campaign, its traces of ``experiment``, what could not be read)."""
    camp = campaign_for(experiment, shown)
    if camp is None:
        return None, [], []
    good, damaged = trace_file.stored(camp.dir / "traces" / experiment)
    return camp, good, damaged


def _then(trs: list[trace_file.Trace]) -> str:
    """The documents' new GIL among these traces' builds (builds.toml ``[roles]`` ``new_gil_then``, or
    the retired build it replaced where an earlier campaign traced that)."""
    return interpreters.role("new_gil_then", {t.meta.get("condition") for t in trs})


def pick(trs: list[trace_file.Trace], condition: str, **point) -> trace_file.Trace | None:
    """The trace of ``condition`` at the point whose values include ``point``."""
    for tr in trs:
        p = tr.meta.get("point", {})
        if tr.meta.get("condition") == condition and all(
                np.isclose(p.get(k), v) if isinstance(v, float) else p.get(k) == v for k, v in point.items()):
            return tr
    return None


def title_of(tr: trace_file.Trace) -> str:
    p = dict(tr.meta.get("point", {}))
    if "switch_interval" in p and p["switch_interval"] is not None:
        p["switch_interval"] = f"{p['switch_interval'] * 1e3:g} ms"
    rounds = tr.meta.get("rounds", 1)
    run = f", run {tr.meta.get('round', 0) + 1} of {rounds}" if rounds and rounds > 1 else ""
    return f"{tr.meta.get('condition', '?')}: " + ", ".join(f"{k} {v}" for k, v in p.items()) + run


def _rows(tr: trace_file.Trace, start_ms: float, length_ms: float) -> tuple[list[int], pd.DataFrame]:
    s = trace_file.spans(tr)
    t0 = int(tr.events["t_ns"][0])
    a, b = t0 + start_ms * 1e6, t0 + (start_ms + length_ms) * 1e6
    s = s[(s["end_ns"] > a) & (s["start_ns"] < b)].copy()
    s["x0"] = (s["start_ns"].clip(lower=a) - t0) / 1e6
    s["x1"] = (s["end_ns"].clip(upper=b) - t0) / 1e6
    return tr.threads, s


def draw(ax, tr: trace_file.Trace, start_ms: float = 0.0, length_ms: float = 50.0, io: bool = False) -> None:
    """Threads as rows; each hold of the GIL a blue bar, each wait for it an orange bar (thinner),
    each request that the holder drop a red tick, over ``length_ms`` from ``start_ms``; ``io``:
    name the thread that blocks most (a server's handler)."""
    threads, s = _rows(tr, start_ms, length_ms)
    for i, tid in enumerate(threads):
        mine = s[s["tid"] == tid]
        # waits under holds: the old GIL's sub-µs waits between two of its own holds stay hidden
        for kind, colour, height, z in (("wait", WAIT, 0.25, 1), ("hold", HOLD, 0.6, 2)):
            k = mine[mine["kind"] == kind]
            ax.broken_barh(list(zip(k["x0"], k["x1"] - k["x0"])), (i - height / 2, height), color=colour, zorder=z,
                           label=("holds the GIL" if kind == "hold" else "waits for it") if i == 0 else None)
    t0 = int(tr.events["t_ns"][0])
    req = tr.events[tr.events["event"] == trace_file.REQUEST]
    x = (req["t_ns"].astype(np.int64) - t0) / 1e6
    rows = [threads.index(int(t)) for t in req["tid"]]
    keep = (x >= start_ms) & (x <= start_ms + length_ms)
    if keep.any():
        ax.scatter(x[keep], np.array(rows)[keep] + 0.42, marker="v", s=14, color=REQ, label="asks the holder to drop",
                   zorder=3)
    blocker = blocking_thread(tr) if io else None
    ax.set_yticks(range(len(threads)), [tr.label(t) + (" (blocks on I/O)" if t == blocker else "") for t in threads])
    ax.set_ylim(len(threads) - 0.4, -0.6)
    ax.set_xlim(start_ms, start_ms + length_ms)
    ax.set_xlabel("ms into the traced window")
    ax.set_title(title_of(tr), fontsize=9)


def busiest_start(tr: trace_file.Trace, length_ms: float) -> float:
    """Where a window of ``length_ms`` shows the GIL change hands most often in ``tr`` (ms from the
    trace's first event, rounded down to a tenth): the mechanism a chapter names happens between
    threads, and a window at the trace's start can show one thread alone (a data race's main
    thread starting its workers).  0 where no thread takes the GIL from another."""
    ev = tr.events
    takes = ev[ev["event"] == trace_file.TAKE]
    tids = np.asarray(takes["tid"])
    at = (np.asarray(takes["t_ns"], dtype=np.int64)[1:][tids[1:] != tids[:-1]] - int(ev["t_ns"][0])) / 1e6
    if not len(at):
        return 0.0
    ends = np.searchsorted(at, at + length_ms, side="left")     # hand-offs in [t, t + length)
    i = int(np.argmax(ends - np.arange(len(at))))
    room = max(0.0, tr.span_ns / 1e6 - length_ms)
    return float(np.floor(min(max(at[i] - 0.05 * length_ms, 0.0), room) * 10) / 10)


def _span(length_ms):
    """A window's length in ms as a function of the trace: ``length_ms`` itself where it is one."""
    return length_ms if callable(length_ms) else (lambda t: length_ms)


def timeline(trs: list[trace_file.Trace], start_ms: float | None = 0.0, length_ms=50.0, io: bool = False):
    """One panel per trace, stacked, over the same length of time (``length_ms``), or over each
    trace's own where it is a function of the trace: from ``start_ms`` in each, or, with
    ``start_ms`` None, from where each hands the GIL over most (:func:`busiest_start`)."""
    import matplotlib.pyplot as plt

    span = _span(length_ms)
    heights = [max(1.2, 0.45 * len(tr.threads) + 0.6) for tr in trs]
    total = sum(heights) + 0.9
    fig, axes = plt.subplots(len(trs), 1, figsize=(8, total), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, tr in zip(axes[:, 0], trs):
        draw(ax, tr, busiest_start(tr, span(tr)) if start_ms is None else start_ms, span(tr), io)
    legend = {}
    for ax in axes[:, 0]:
        for h, n in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(n, h)
    fig.legend(list(legend.values()), list(legend), loc="upper center", fontsize=8.5, ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.55 / total))   # room for the legend above the first title
    return fig


def explorer(trs: list[trace_file.Trace], length_ms=50.0, starts: int = 4, title: str = "", io: bool = False):
    """Kernel-free: a dropdown over the traces and a slider over where the window starts (in
    quarters of what a trace holds); ``length_ms`` a number, or a function of the trace."""
    import matplotlib.pyplot as plt

    from . import widgets

    span = _span(length_ms)

    def one(tr, step):
        room = max(0.0, tr.span_ns / 1e6 - span(tr))
        fig = timeline([tr], round(room * step / max(1, starts - 1), 1), span(tr), io)
        plt.close(fig)
        return fig

    steps = list(range(starts))
    return widgets.stack_explorer(one, ("trace", trs, [title_of(t) for t in trs]),
                                  ("window", steps, [f"{i + 1} of {starts}" for i in steps]), title=title)


# -- what the traces say --------------------------------------------------------------------------
def blocking_thread(tr: trace_file.Trace) -> int | None:
    """The thread that lets the GIL go of its own accord most (a server's handler, a latency
    responder): the most voluntary drops."""
    drops = tr.events[tr.events["event"] == trace_file.DROP]
    if not len(drops):
        return None
    tids, counts = np.unique(drops["tid"], return_counts=True)
    return int(tids[np.argmax(counts)])


def median_with_interval(x) -> dict:
    """Median of the waits in one window, and no interval: the waits of one window are one run's
    (the method counts runs, and one run has no 95% interval; a statistic over runs is
    :func:`over_runs`'s)."""
    x = np.asarray(x, dtype=float)
    if len(x) == 0:
        return {"n": 0, "median": float("nan"), "lo": float("nan"), "hi": float("nan")}
    return {"n": int(len(x)), "median": float(np.median(x)), "lo": float("nan"), "hi": float("nan")}


def none_yet(experiment: str) -> str:
    return (f"No campaign here holds GIL traces of `{experiment}`. To record them: build the traced "
            "interpreters (`make interpreters TRACE=1`: five more builds; the table gives each one's time), then "
            f"`gillab trace record {experiment}` (one sample a trace); this chapter then shows them.")


def io_calls(tr: trace_file.Trace, tid: int) -> pd.DataFrame:
    """Each time ``tid`` let the GIL go of its own accord (a blocking call): whether another
    thread took the GIL before ``tid`` had it back (``lost``), and ``tid``'s wait for it from
    the moment it wanted it again (``wait_ms``); :func:`gillab.measure.trace_file.releases` has more."""
    rel = trace_file.releases(tr, tid)
    return pd.DataFrame({"t_ns": rel["t_ns"], "lost": rel["lost"], "wait_ms": rel["wait_us"] / 1e3})


def io_story(tr: trace_file.Trace) -> dict:
    """For the thread that blocks most: its I/O calls in the window, the share that lost the GIL
    to another thread, their median wait (with its interval) in ms and in switch intervals, and
    the wait per I/O call over all of them."""
    tid = tr.meta.get("sample_result", {}).get("handler_tid") or blocking_thread(tr)   # the server says which
    calls = io_calls(tr, tid)                   # none where no thread blocks (tid None)
    w = median_with_interval(calls[calls["lost"]]["wait_ms"])
    per_ms = tr.interval / 1e3 if (tr.interval and not tr.old_gil) else float("nan")
    s = trace_file.summary(tr)
    return {"condition": tr.meta.get("condition"), **tr.meta.get("point", {}), "io_calls": int(len(calls)),
            "lost_share": float(calls["lost"].mean()) if len(calls) else float("nan"),
            "lost_wait_median_ms": w["median"], "lost_wait_lo_ms": w["lo"], "lost_wait_hi_ms": w["hi"],
            "lost_wait_n": w["n"], "interval_ms": per_ms,
            "lost_wait_median_intervals": w["median"] / per_ms, "lost_wait_lo_intervals": w["lo"] / per_ms,
            "lost_wait_hi_intervals": w["hi"] / per_ms,
            "wait_per_call_ms": float(calls["wait_ms"].mean()) if len(calls) else float("nan"),
            "wait_per_call_intervals": float(calls["wait_ms"].mean()) / per_ms if len(calls) else float("nan"),
            "tick_drops_per_s": s["tick_drops_per_s"], "forced_drops_per_s": s["forced_drops_per_s"]}


def tick_handoffs(tr: trace_file.Trace) -> dict:
    """For CPU-bound threads: per way of letting go (check interval, asked to, of its own
    accord), how many per second and the share after which another thread took the GIL next."""
    ev = tr.events
    take_idx = np.flatnonzero(ev["event"] == trace_file.TAKE)
    out = {}
    for code in (trace_file.DROP_TICKS, trace_file.DROP_FORCED, trace_file.DROP):
        idx = np.flatnonzero(ev["event"] == code)
        nxt = np.searchsorted(take_idx, idx)
        ok = nxt < len(take_idx)
        passed = ev["tid"][take_idx[nxt[ok]]] != ev["tid"][idx[ok]]
        out[trace_file.EVENT_NAMES[code]] = {"per_s": len(idx) / (tr.span_ns / 1e9 or float("nan")),
                                         "passed_share": float(passed.mean()) if ok.any() else float("nan"),
                                         "n": int(ok.sum())}
    return out


# -- each chapter's traces ------------------------------------------------------------------------
class Section:
    """What a chapter shows of its traces: a timeline figure, a table, computed sentences, and the
    traces its explorer moves through (with the span each shows)."""

    def __init__(self, figure, table: pd.DataFrame, sentences: list[str], explore: list, length_ms,
                 io: bool = False):
        self.figure, self.table, self.sentences, self.explore, self.length_ms = (figure, table, sentences,
                                                                                  explore, length_ms)
        self.io = io


def _fmt(x: float, unit: str = "", digits: int = 2) -> str:
    return "n/a" if x != x else f"{x:.{digits}g}{unit}"


def handler_of(tr: trace_file.Trace) -> int | None:
    """The echo server's handler: named by the sample (its result), else the thread that blocks most."""
    return tr.meta.get("sample_result", {}).get("handler_tid") or blocking_thread(tr)


def convoy_run(tr: trace_file.Trace) -> dict:
    """What one traced run of the echo server says (one window): its requests (the handler's I/O
    calls, a ``recv`` and a ``send`` each), the handler's wait for the GIL per request in switch
    intervals, the share of its I/O calls after which it waited at least half an interval (a long
    wait), the CPU threads' forced holds in intervals, hand-offs per second, the share of the
    handler's waiting time during which a CPU thread held the GIL, and where the threads ran."""
    tid = handler_of(tr)
    calls = io_calls(tr, tid) if tid else pd.DataFrame(columns=["t_ns", "lost", "wait_ms"])
    per_ms = tr.interval / 1e3 if (tr.interval and not tr.old_gil) else float("nan")
    s = trace_file.spans(tr)
    mine = s[(s["tid"] == tid) & (s["kind"] == "wait")]
    requests = len(calls) / 2
    cpu_tids = {int(t) for t in str(tr.meta.get("sample_result", {}).get("cpu_tids") or "").split(",") if t}
    cpu_holds = s[(s["kind"] == "hold") & s["tid"].isin(cpu_tids or set(tr.threads) - {tid, tr.pid})]
    forced = cpu_holds[cpu_holds["ended_by"] == trace_file.EVENT_NAMES[trace_file.DROP_FORCED]]["dur_ns"] / 1e6
    # of the handler's waiting time, how much a CPU thread held the GIL (interval overlap)
    held = 0
    if len(mine) and len(cpu_holds):
        hs, he = cpu_holds["start_ns"].to_numpy(), cpu_holds["end_ns"].to_numpy()
        for a, b in zip(mine["start_ns"].to_numpy(), mine["end_ns"].to_numpy()):
            held += int(np.clip(np.minimum(he, b) - np.maximum(hs, a), 0, None).sum())
    waited = int(mine["dur_ns"].sum())
    r = tr.meta.get("sample_result", {})
    twin = tr.meta.get("untraced") or {}
    own = median_rate(r)                                              # the traced run's own rate
    alone, si = twin.get("rps_alone", float("nan")), tr.meta.get("point", {}).get("switch_interval") or float("nan")
    return {"condition": tr.meta.get("condition"), "placement": tr.meta.get("placement", "os"),
            "switch_interval": tr.meta.get("point", {}).get("switch_interval"),
            "cpu_threads": tr.meta.get("point", {}).get("cpu_threads"), "round": tr.meta.get("round", 0),
            "requests": requests, "io_calls": int(len(calls)),
            "waits_per_request": (waited / 1e6 / per_ms / requests) if requests else float("nan"),
            "long_wait_share": float((calls["wait_ms"] >= per_ms / 2).mean()) if len(calls) else float("nan"),
            "long_waits": int((calls["wait_ms"] >= per_ms / 2).sum()) if len(calls) else 0,
            "cpu_hold_intervals": float(forced.median() / per_ms) if len(forced) else float("nan"),
            "handoffs_per_s": trace_file.handoffs(tr) / (tr.span_ns / 1e9 or float("nan")),
            "cpu_held_share_of_wait": held / waited if waited else float("nan"),
            "regime": r.get("placement_regime", "not read"),
            "handler_with_cpu_thread": r.get("handler_with_cpu_thread"),
            "handler_involuntary": r.get("handler_ctx_involuntary"),
            "untraced_cost": twin.get("cost_per_request_intervals", float("nan")),
            # the traced run's own cost per request, read as the untraced one is (against the
            # untraced rate alone): where traced and untraced differ, it says whether the trace
            # missed part of its run's cost or the traced binary ran differently
            "traced_cost": request_cost(own, alone, si),
            "untraced_regime": twin.get("placement_regime_busy")}


RUN_STATS = {"waits_per_request": "a request waits (intervals)", "long_wait_share": "I/O calls with a long wait",
             "cpu_hold_intervals": "CPU thread's forced hold (intervals)", "handoffs_per_s": "hand-offs / s",
             "cpu_held_share_of_wait": "handler's wait under a CPU thread's hold"}


def over_runs(values) -> dict:
    """A traced statistic over runs: the median and its 95% interval (:func:`gillab.stats.summarize`),
    or "too few runs" below the runs a median's interval needs."""
    v = [float(x) for x in values if x == x]
    r = stats.summarize(v)
    return {"n": r["n"], "median": r["median"], "lo": r["ci_lo"], "hi": r["ci_hi"],
            "conclusive": stats.conclusive(stats.MEDIAN, r["n"])}


def over_runs_text(r: dict, digits: int = 3) -> str:
    if r["n"] == 0:
        return "-"
    m = f"{r['median']:.{digits}g}"
    return f"{m} [{r['lo']:.{digits}g}, {r['hi']:.{digits}g}]" if r["conclusive"] else f"{m} (n={r['n']}: too few runs)"


CONSISTENT = "are consistent"       # two measurements whose ratio's interval holds 1


def agreement(runs: pd.DataFrame) -> dict:
    """Traced waits per request against the untraced build's cost per request, round by round
    (both from one sitting at one placement): the median ratio over rounds with its interval,
    and in words whether they are consistent (the interval holds 1: not *agrees*, the verdicts' word
    for an interval inside a band), differ, or rest on too few rounds."""
    pairs = {int(r["round"]): (r["waits_per_request"], r["untraced_cost"]) for _, r in runs.iterrows()}
    r = stats.paired_ratio({k: a for k, (a, _) in pairs.items()}, {k: b for k, (_, b) in pairs.items()})
    if not stats.conclusive(stats.PAIRED, r["n"]):
        word = f"too few rounds (n={r['n']})"
    elif r["ci_lo"] <= 1 <= r["ci_hi"]:
        word = CONSISTENT
    else:
        word = "traced higher" if r["ci_lo"] > 1 else "traced lower"
    return {**r, "word": word}


def convoy_points(trs: list[trace_file.Trace]) -> pd.DataFrame:
    """Per build, placement, interval and CPU threads: every traced statistic over its runs, the
    untraced cost per request over the same rounds, and whether traced and untraced agree."""
    runs = pd.DataFrame([convoy_run(tr) for tr in trs if tr.meta.get("point", {}).get("cpu_threads", 0) > 0])
    if runs.empty:
        return runs
    rows = []
    keys = ["condition", "placement", "switch_interval", "cpu_threads"]
    for key, g in runs.groupby(keys, sort=True):
        row = dict(zip(keys, key))
        row["runs"], row["requests"] = len(g), int(g["requests"].sum())
        row["long_waits"] = int(g["long_waits"].sum())
        for col in RUN_STATS:
            row[col] = over_runs(g[col])
        row["untraced_cost"] = over_runs(g["untraced_cost"])
        row["traced_cost"] = over_runs(g["traced_cost"])
        row["agreement"] = agreement(g)
        row["own"] = agreement(g.assign(untraced_cost=g["traced_cost"]))    # waits against the traced run's cost
        row["binary"] = agreement(g.assign(waits_per_request=g["traced_cost"]))   # traced run against untraced
        regimes = g["regime"].value_counts()
        row["regimes"] = "; ".join(f"{k} ({v})" for k, v in regimes.items())
        rows.append(row)
    return pd.DataFrame(rows)


def convoy(trs: list[trace_file.Trace]) -> Section | None:
    pts = convoy_points(trs)
    if pts.empty:
        return None
    first = [t for t in trs if t.meta.get("round", 0) == 0]
    builds = (_then(trs), "3.13.5")
    shown = [t for t in (pick([x for x in first if x.meta.get("placement", "os") == placement], b,
                              switch_interval=0.005, cpu_threads=1)
                         for placement in ("pinned", "os") for b in builds) if t]
    fig = timeline(shown, 0.0, 40.0, io=True)
    table = pd.DataFrame({
        "build": pts["condition"], "placement": pts["placement"],
        "interval (ms)": (pts["switch_interval"] * 1e3).map(lambda x: f"{x:g}"),
        "CPU threads": pts["cpu_threads"], "runs": pts["runs"], "requests": pts["requests"],
        "long waits": pts["long_waits"],
        **{RUN_STATS[c]: [over_runs_text(r) for r in pts[c]] for c in RUN_STATS},
        "untraced: a request costs (intervals)": [over_runs_text(r) for r in pts["untraced_cost"]],
        "traced / untraced": [f"{a['ratio']:.2f} [{a['ci_lo']:.2f}, {a['ci_hi']:.2f}]: {a['word']}"
                              if a["n"] else "-" for a in pts["agreement"]],
        "traced run: a request costs (intervals)": [over_runs_text(r) for r in pts["traced_cost"]],
        "placement seen (runs)": pts["regimes"]})
    sentences = []
    for b in builds:
        for placement in ("pinned", "os"):
            r = pts[(pts["condition"] == b) & (pts["placement"] == placement)
                    & np.isclose(pts["switch_interval"], 0.005) & (pts["cpu_threads"] == 1)]
            if r.empty:
                continue
            r = r.iloc[0]
            w, u, a, cpu = r["waits_per_request"], r["untraced_cost"], r["agreement"], r["cpu_held_share_of_wait"]
            where = "pinned (the CPU thread on a CPU of its own)" if placement == "pinned" else "where the OS put the threads"
            sentences.append(
                f"On `{b}` at 5 ms next to one CPU thread, {where}, over {r['runs']} runs ({r['requests']:.0f} requests "
                f"traced): a request waited {over_runs_text(w)} switch intervals for the GIL (median over runs, 95% "
                f"interval); the untraced build's requests cost {over_runs_text(u)} intervals in the untraced runs "
                f"interleaved with these traces (the tracing sitting's own rounds, not the samples of the tables "
                f"above), so the "
                f"two {a['word']}" + (f" (traced / untraced {a['ratio']:.2f} [{a['ci_lo']:.2f}, {a['ci_hi']:.2f}])"
                                      if a["n"] else "")
                + f". While the handler waited, a CPU thread held the GIL {over_runs_text(cpu, 2)} of the time; "
                f"placements seen: {r['regimes']}.")
    for r in pts.itertuples():
        a, own, binary = r.agreement, r.own, r.binary
        if a["n"] == 0 or a["word"] == CONSISTENT or a["word"].startswith("too few"):
            continue
        parts = []
        if binary["n"] and binary["word"] != CONSISTENT and not binary["word"].startswith("too few"):
            parts.append(f"the traced run itself cost {over_runs_text(r.traced_cost)} intervals a request against "
                         f"{over_runs_text(r.untraced_cost)} untraced (ratio {binary['ratio']:.2f} "
                         f"[{binary['ci_lo']:.2f}, {binary['ci_hi']:.2f}]): the traced binary ran this point "
                         "differently from the untraced one")
        if own["n"] and own["word"] == CONSISTENT:
            parts.append("its waits account for its own run's cost")
        elif own["n"] and not own["word"].startswith("too few"):
            parts.append(f"its waits cover {own['ratio']:.0%} [{own['ci_lo']:.0%}, {own['ci_hi']:.0%}] of its own run's "
                         "cost per request, the rest is not a wait for the GIL in the traced window")
        sentences.append(
            f"On `{r.condition}` at {r.switch_interval * 1e3:g} ms next to {r.cpu_threads} CPU threads "
            f"({'pinned' if r.placement == 'pinned' else 'placed by the OS'}), traced and untraced differ: a request "
            f"waited {over_runs_text(r.waits_per_request)} intervals in the traces against "
            f"{over_runs_text(r.untraced_cost)} untraced ({a['word']}, ratio {a['ratio']:.2f} "
            f"[{a['ci_lo']:.2f}, {a['ci_hi']:.2f}])" + ("; " + "; and ".join(parts) if parts else "") + ".")
    # one run a point (the first round's): the explorer shows what a window looks like at each point,
    # and every round's traces as images would weigh the page by megabytes (the table reads them all)
    explore = sorted([t for t in first if t.meta.get("point", {}).get("cpu_threads") == 1],
                     key=lambda t: (t.meta["condition"], t.meta.get("placement", "os"),
                                    -t.meta["point"]["switch_interval"], t.meta.get("round", 0)))
    return Section(fig, table, sentences, explore,
                   lambda t: float(np.clip(8 * t.meta["point"]["switch_interval"] * 1e3, 2, 250)), io=True)


def ccbench(trs: list[trace_file.Trace]) -> Section | None:
    rows = pd.DataFrame([io_story(tr) for tr in trs])
    old_gil, new_gil = interpreters.role("old_gil"), _then(trs)
    shown = [t for t in (pick(trs, b, task="pi") for b in (old_gil, new_gil)) if t]
    if rows.empty or len(shown) < 2:
        return None
    fig = timeline(shown, 0.0, 30.0, io=True)
    table = pd.DataFrame({
        "task": rows["task"], "build": rows["condition"], "I/O calls": rows["io_calls"],
        "lost the GIL": rows["lost_share"].round(2),
        "their median wait, ms (one run)": rows["lost_wait_median_ms"].round(3),
        "wait per call (ms)": rows["wait_per_call_ms"].round(3),
        "drops/s: check interval": rows["tick_drops_per_s"].round(0), "forced": rows["forced_drops_per_s"].round(0)}
    ).sort_values(["task", "build"])
    old, new = (rows[(rows["task"] == "pi") & (rows["condition"] == b)].iloc[0] for b in (old_gil, new_gil))
    faster = old["wait_per_call_ms"] < new["wait_per_call_ms"]
    sentences = [
        f"Next to one thread of task A (`pi`, pure Python), the old GIL (`{old_gil}`) made the responder wait "
        f"{_fmt(old['wait_per_call_ms'], ' ms', 2)} per I/O call on average and the new GIL (`{new_gil}`) "
        f"{_fmt(new['wait_per_call_ms'], ' ms', 2)}: the old GIL answered **{'faster' if faster else 'slower'}** here. "
        f"The trace says why: the old GIL's background thread let the GIL go at its check interval "
        f"{old['tick_drops_per_s']:,.0f} times a second, so a responder that wanted it back got it at the "
        f"next of those (when it lost it at all: {old['lost_share']:.0%} of its calls; median wait "
        f"{_fmt(old['lost_wait_median_ms'], ' ms', 2)}), while the new GIL's holder keeps it until a waiter has "
        f"waited one switch interval and asked ({new['forced_drops_per_s']:,.0f} forced drops a second; "
        f"{new['lost_share']:.0%} of the responder's calls lost the GIL, median wait "
        f"{_fmt(new['lost_wait_median_ms'], ' ms', 2)}, against an interval of {_fmt(new['interval_ms'], ' ms', 2)})."]
    return Section(fig, table, sentences, sorted(trs, key=lambda t: (t.meta["point"]["task"], t.meta["condition"])),
                   lambda t: 30.0, io=True)


def _generic(trs: list[trace_file.Trace], length_ms) -> tuple[object, pd.DataFrame]:
    rows = []
    for tr in trs:
        s = trace_file.summary(tr)
        passed = tick_handoffs(tr)
        way = trace_file.EVENT_NAMES[trace_file.DROP_TICKS if tr.old_gil else trace_file.DROP_FORCED]
        rows.append({"build": tr.meta.get("condition"), "point": point_key(tr.meta.get("point", {})),
                     "hand-offs/s": round(s["handoffs_per_s"]), "drop requests/s": round(s["requests_per_s"]),
                     "forced or check-interval drops/s": round(passed[way]["per_s"]),
                     "share of those that passed the GIL on": round(passed[way]["passed_share"], 3),
                     "median hold (ms)": float(f"{np.nanmedian([v['hold_median_ms'] for v in s['threads'].values()]):.3g}"),
                     "events": s["events"]})
    return timeline(trs, None, length_ms), pd.DataFrame(rows)


def countdown_window(tr: trace_file.Trace) -> float:
    """The countdown's window: 20 ms, four switch intervals of the new GIL; the old GIL hands over
    every 80 µs or so and drops at every check, a microsecond apart, so 0.4 ms of it shows a few
    hand-offs one by one, where 20 ms drew a solid band."""
    return 0.4 if tr.old_gil else 20.0


def countdown(trs: list[trace_file.Trace]) -> Section | None:
    trs = sorted(trs, key=lambda t: t.meta.get("condition"))
    if not trs:
        return None
    fig, table = _generic(trs, countdown_window)
    sentences = []
    for _, r in table.iterrows():
        share = r["share of those that passed the GIL on"]
        sentences.append(f"`{r['build']}`: {r['hand-offs/s']:,} hand-offs a second between the two threads; "
                         f"of its {r['forced or check-interval drops/s']:,} forced or check-interval drops a second, "
                         f"{share:.1%} passed the GIL to the other thread"
                         + ("; after the others the same thread took it straight back." if share < 1 else "."))
    old = [t for t in trs if t.old_gil]
    if old and len(old) < len(trs):
        short, long = countdown_window(old[0]), countdown_window(next(t for t in trs if not t.old_gil))
        sentences.append(f"The old GIL's window is {short:g} ms, the others' {long:g} ms: drawn over {long:g} ms, its "
                         "hand-offs, one every tens of microseconds, would merge into one band.")
    return Section(fig, table, sentences, trs, countdown_window)


def plain(length_ms: float):
    def section(trs: list[trace_file.Trace]) -> Section | None:
        trs = sorted(trs, key=lambda t: (t.meta.get("condition"), point_key(t.meta.get("point", {}))))
        if not trs:
            return None
        fig, table = _generic(trs, length_ms)
        return Section(fig, table, [], trs, lambda t: length_ms)
    return section


CHAPTERS = {"convoy": convoy, "ccbench": ccbench, "countdown": countdown, "data_race": plain(2.0),
            "fib_server": plain(40.0)}


# -- what tracing costs (the method chapter) ------------------------------------------------------
WORKLOADS = {"countdown threads=1": "countdown, 1 thread", "countdown threads=2": "countdown, 2 threads",
             "convoy cpu_processes=0,cpu_threads=1,switch_interval=0.005": "echo beside 1 CPU thread, 5 ms",
             **{f"convoy cpu_processes=0,cpu_threads=1,placement=pinned,switch_interval={si}":
                f"echo beside 1 CPU thread, {si * 1e3:g} ms, pinned" for si in (0.001, 0.005, 0.01)}}


def overhead_ratios(df: pd.DataFrame) -> pd.DataFrame:
    """Per build and point: the traced twin's time over the untraced build's, tracing off and on,
    each the median of the per-round ratios with its 95% interval over the rounds."""
    rows = []
    for (e, point, build), g in df.groupby(["experiment", "point", "build"], sort=False):
        by = {v: dict(zip(gv["round"], gv["seconds"].astype(float))) for v, gv in g.groupby("variant")}
        row = {"build": build, "workload": WORKLOADS.get(f"{e} {point}", f"{e} {point}")}
        for v in ("traced, off", "traced, on"):
            r = stats.paired_ratio(by.get(v, {}), by.get("untraced", {}))
            row[v] = (f"{r['ratio']:.2f} [{r['ci_lo']:.2f}, {r['ci_hi']:.2f}] n={r['n']}"
                      if stats.conclusive(stats.PAIRED, r["n"]) else
                      f"{r['ratio']:.2f} (n={r['n']}: too few rounds for a 95% interval)")
        rows.append(row)
    return pd.DataFrame(rows)


def overhead_markdown() -> str:
    """The method chapter's table of what the traced builds cost, from the newest campaign that
    measured it (``gillab trace overhead``), or how to measure it."""
    from ..measure.trace_record import OVERHEAD_FILE

    held = [c for c in campaigns.all_campaigns() if (c.dir / "traces" / OVERHEAD_FILE).is_file()]
    if not held:
        return ("No campaign here holds the traced builds' overhead yet: `make interpreters TRACE=1`, then "
                "`gillab trace overhead` (12 interleaved rounds of 36 samples).\n")
    camp = held[-1]
    df = pd.read_csv(camp.dir / "traces" / OVERHEAD_FILE)
    table = overhead_ratios(df)
    lines = ["| build | workload | traced, tracing off | traced, tracing on |", "|---|---|---|---|"]
    lines += [f"| `{r['build']}` | {r['workload']} | {r['traced, off']} | {r['traced, on']} |" for _, r in table.iterrows()]
    load = df["loadavg_1m"].astype(float)
    return (f"Time of the traced twin over the untraced build (a ratio above 1: slower), the median over "
            f"interleaved rounds with its 95% interval and the rounds it rests on, campaign `{camp.id}` ({len(df)} samples, "
            f"{df['at'].min()[:16]} to {df['at'].max()[:16]}, load average {load.min():.2f}-{load.max():.2f}; "
            f"`data/results/{camp.id}/traces/{OVERHEAD_FILE}`). The echo server's time is per request (the "
            "inverse of its median window's rate).\n\n" + "\n".join(lines) + "\n")


def hold_lengths(trs: list[trace_file.Trace]) -> pd.DataFrame:
    """For the convoy's traces next to one CPU thread: how long the CPU thread held the GIL before
    a forced drop, in switch intervals (each run's median hold), the median over runs with its
    95% interval (the new GIL lets a holder run until a waiter has waited one interval)."""
    pts = convoy_points(trs)
    if pts.empty:
        return pd.DataFrame()
    pts = pts[pts["cpu_threads"] == 1]
    return pd.DataFrame({"build": pts["condition"], "placement": pts["placement"],
                         "interval (ms)": pts["switch_interval"] * 1e3, "runs": pts["runs"],
                         "forced hold, intervals (95%)": [over_runs_text(r) for r in pts["cpu_hold_intervals"]]}
                        ).sort_values(["build", "placement", "interval (ms)"])


def holds_markdown() -> str:
    """The method chapter's table of hold lengths against the interval, from the newest campaign
    holding convoy traces."""
    camp, trs, _ = load("convoy")
    table = hold_lengths(trs)
    if table.empty:
        return ""
    lines = ["| build | placement | interval (ms) | runs | forced hold, intervals (95%) |", "|---|---|---|---|---|"]
    lines += [f"| `{r['build']}` | {r['placement']} | {r['interval (ms)']:g} | {r['runs']} | "
              f"{r['forced hold, intervals (95%)']} |" for _, r in table.iterrows()]
    return ("\nHow long the CPU thread beside the echo server holds the GIL before a forced drop, against the "
            f"switch interval (campaign `{camp.id}`, `traces/convoy/`; each run's median hold, the median over runs "
            "with its 95% interval, or \"too few runs\"):\n\n" + "\n".join(lines) + "\n")
