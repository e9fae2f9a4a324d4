"""A chapter's GIL traces: which campaign's to show, the timeline figure, the explorer and the
sentences computed from them (:mod:`gillab.measure.traces` reads and measures a trace; this draws it).

A chapter shows the traces of the campaign it shows when that campaign holds some, else those of
the newest campaign that does (saying whose they are: traces are recorded on one machine and
explain what it measured; they are never counted in a verdict)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..measure import campaigns, traces
from .. import stats
from ..measure.experiment import point_key

HOLD, WAIT, REQ = "#3b6ea8", "#e8a33d", "#c0392b"


def campaign_for(experiment: str, shown: str | None = None):
    """The campaign whose traces of ``experiment`` a chapter shows: ``shown`` (the campaign of
    the chapter's samples) if it holds some, else the newest that does; None if none does."""
    held = [c for c in campaigns.all_campaigns() if (c.dir / "traces" / experiment).is_dir()]
    named = [c for c in held if c.id == shown]
    return (named or held[-1:] or [None])[0]


def load(experiment: str, shown: str | None = None) -> tuple[object, list[traces.Trace], list[str]]:
    """(campaign, its traces of ``experiment``, what could not be read)."""
    camp = campaign_for(experiment, shown)
    if camp is None:
        return None, [], []
    good, damaged = traces.stored(camp.dir / "traces" / experiment)
    return camp, good, damaged


def pick(trs: list[traces.Trace], condition: str, **point) -> traces.Trace | None:
    """The trace of ``condition`` at the point whose values include ``point``."""
    for tr in trs:
        p = tr.meta.get("point", {})
        if tr.meta.get("condition") == condition and all(
                np.isclose(p.get(k), v) if isinstance(v, float) else p.get(k) == v for k, v in point.items()):
            return tr
    return None


def title_of(tr: traces.Trace) -> str:
    p = dict(tr.meta.get("point", {}))
    if "switch_interval" in p and p["switch_interval"] is not None:
        p["switch_interval"] = f"{p['switch_interval'] * 1e3:g} ms"
    return f"{tr.meta.get('condition', '?')}: " + ", ".join(f"{k} {v}" for k, v in p.items())


def _rows(tr: traces.Trace, start_ms: float, length_ms: float) -> tuple[list[int], pd.DataFrame]:
    s = traces.spans(tr)
    t0 = int(tr.events["t_ns"][0])
    a, b = t0 + start_ms * 1e6, t0 + (start_ms + length_ms) * 1e6
    s = s[(s["end_ns"] > a) & (s["start_ns"] < b)].copy()
    s["x0"] = (s["start_ns"].clip(lower=a) - t0) / 1e6
    s["x1"] = (s["end_ns"].clip(upper=b) - t0) / 1e6
    return tr.threads, s


def draw(ax, tr: traces.Trace, start_ms: float = 0.0, length_ms: float = 50.0, io: bool = False) -> None:
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
    req = tr.events[tr.events["event"] == traces.REQUEST]
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


def timeline(trs: list[traces.Trace], start_ms: float = 0.0, length_ms: float = 50.0, io: bool = False):
    """One panel per trace, stacked, over the same span of time."""
    import matplotlib.pyplot as plt

    heights = [max(1.2, 0.45 * len(tr.threads) + 0.6) for tr in trs]
    total = sum(heights) + 0.9
    fig, axes = plt.subplots(len(trs), 1, figsize=(8, total), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, tr in zip(axes[:, 0], trs):
        draw(ax, tr, start_ms, length_ms, io)
    legend = {}
    for ax in axes[:, 0]:
        for h, n in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(n, h)
    fig.legend(list(legend.values()), list(legend), loc="upper center", fontsize=8, ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.55 / total))   # room for the legend above the first title
    return fig


def explorer(trs: list[traces.Trace], length_ms=50.0, starts: int = 4, title: str = "", io: bool = False):
    """Kernel-free: a dropdown over the traces and a slider over where the window starts (in
    quarters of what a trace holds); ``length_ms`` a number, or a function of the trace."""
    import matplotlib.pyplot as plt

    from . import widgets

    span = length_ms if callable(length_ms) else (lambda t: length_ms)

    def one(tr, step):
        room = max(0.0, tr.span_ns / 1e6 - span(tr))
        fig = timeline([tr], round(room * step / max(1, starts - 1), 1), span(tr), io)
        plt.close(fig)
        return fig

    steps = list(range(starts))
    return widgets.stack_explorer(one, ("trace", trs, [title_of(t) for t in trs]),
                                  ("window", steps, [f"{i + 1} of {starts}" for i in steps]), title=title)


# -- what the traces say --------------------------------------------------------------------------
def blocking_thread(tr: traces.Trace) -> int | None:
    """The thread that lets the GIL go of its own accord most (a server's handler, a latency
    responder): the most voluntary drops."""
    drops = tr.events[tr.events["event"] == traces.DROP]
    if not len(drops):
        return None
    tids, counts = np.unique(drops["tid"], return_counts=True)
    return int(tids[np.argmax(counts)])


def median_with_interval(x) -> dict:
    """Median of the waits in one window with the distribution-free 95% interval over them
    (:func:`gillab.stats.median_interval`)."""
    x = np.asarray(x, dtype=float)
    if len(x) == 0:
        return {"n": 0, "median": float("nan"), "lo": float("nan"), "hi": float("nan")}
    lo, hi = stats.median_interval(x) if stats.conclusive(stats.MEDIAN, len(x)) else (float("nan"), float("nan"))
    return {"n": int(len(x)), "median": float(np.median(x)), "lo": float(lo), "hi": float(hi)}


def none_yet(experiment: str) -> str:
    return (f"No campaign here holds GIL traces of `{experiment}`. To record them: build the traced "
            "interpreters (`make interpreters TRACE=1`: five more builds, each about as long as its twin), then "
            f"`gillab trace record {experiment}` (one sample a trace); this chapter then shows them.")


def io_calls(tr: traces.Trace, tid: int) -> pd.DataFrame:
    """Each time ``tid`` let the GIL go of its own accord (a blocking call): whether another
    thread took the GIL before ``tid`` had it back (``lost``), and ``tid``'s wait for it from
    the moment it wanted it again (``wait_ms``)."""
    ev = tr.events
    rows, open_at, lost, wanted = [], None, False, None
    for t, who, what in zip(ev["t_ns"].tolist(), ev["tid"].tolist(), ev["event"].tolist()):
        if who == tid:
            if what == traces.DROP:
                open_at, lost, wanted = t, False, None
            elif what == traces.WANT and open_at is not None:
                wanted = t
            elif what == traces.TAKE and open_at is not None:
                if wanted is not None:
                    rows.append((open_at, lost, (t - wanted) / 1e6))
                open_at = None
        elif what == traces.TAKE and open_at is not None:
            lost = True
    return pd.DataFrame(rows, columns=["t_ns", "lost", "wait_ms"]).astype({"lost": bool, "wait_ms": float})


def io_story(tr: traces.Trace) -> dict:
    """For the thread that blocks most: its I/O calls in the window, the share that lost the GIL
    to another thread, their median wait (with its interval) in ms and in switch intervals, and
    the wait per I/O call over all of them."""
    tid = tr.meta.get("sample_result", {}).get("handler_tid") or blocking_thread(tr)   # the server says which
    calls = io_calls(tr, tid)                   # none where no thread blocks (tid None)
    w = median_with_interval(calls[calls["lost"]]["wait_ms"])
    per_ms = tr.interval / 1e3 if (tr.interval and not tr.old_gil) else float("nan")
    s = traces.summary(tr)
    return {"condition": tr.meta.get("condition"), **tr.meta.get("point", {}), "io_calls": int(len(calls)),
            "lost_share": float(calls["lost"].mean()) if len(calls) else float("nan"),
            "lost_wait_median_ms": w["median"], "lost_wait_lo_ms": w["lo"], "lost_wait_hi_ms": w["hi"],
            "lost_wait_n": w["n"], "interval_ms": per_ms,
            "lost_wait_median_intervals": w["median"] / per_ms, "lost_wait_lo_intervals": w["lo"] / per_ms,
            "lost_wait_hi_intervals": w["hi"] / per_ms,
            "wait_per_call_ms": float(calls["wait_ms"].mean()) if len(calls) else float("nan"),
            "wait_per_call_intervals": float(calls["wait_ms"].mean()) / per_ms if len(calls) else float("nan"),
            "tick_drops_per_s": s["tick_drops_per_s"], "forced_drops_per_s": s["forced_drops_per_s"]}


def tick_handoffs(tr: traces.Trace) -> dict:
    """For CPU-bound threads: per way of letting go (check interval, asked to, of its own
    accord), how many per second and the share after which another thread took the GIL next."""
    ev = tr.events
    take_idx = np.flatnonzero(ev["event"] == traces.TAKE)
    out = {}
    for code in (traces.DROP_TICKS, traces.DROP_FORCED, traces.DROP):
        idx = np.flatnonzero(ev["event"] == code)
        nxt = np.searchsorted(take_idx, idx)
        ok = nxt < len(take_idx)
        passed = ev["tid"][take_idx[nxt[ok]]] != ev["tid"][idx[ok]]
        out[traces.EVENT_NAMES[code]] = {"per_s": len(idx) / (tr.span_ns / 1e9 or float("nan")),
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


def _with_interval(row, pattern: str) -> str:
    """``median (lo-hi)`` of a row's ``pattern.format('median'|'lo'|'hi')`` columns."""
    return _interval_text(*(row[pattern.format(k)] for k in ("median", "lo", "hi")))


def _interval_text(m: float, lo: float, hi: float) -> str:
    if m != m:
        return "-"
    return f"{m:.3g} (too few for a 95% interval)" if lo != lo else f"{m:.3g} ({lo:.3g}-{hi:.3g})"


def convoy(trs: list[traces.Trace]) -> Section | None:
    rows = pd.DataFrame([io_story(tr) for tr in trs if tr.meta["point"]["cpu_threads"] > 0])
    shown = [t for t in (pick(trs, b, switch_interval=0.005, cpu_threads=1) for b in ("3.9.10", "3.13.5")) if t]
    if rows.empty or not shown:
        return None
    fig = timeline(shown, 0.0, 40.0, io=True)
    table = pd.DataFrame({
        "build": rows["condition"], "interval (ms)": rows["switch_interval"] * 1e3, "CPU threads": rows["cpu_threads"],
        "I/O calls": rows["io_calls"], "share that lost the GIL": rows["lost_share"].round(2),
        "their median wait, intervals (95%)": [_with_interval(r, "lost_wait_{}_intervals") for _, r in rows.iterrows()],
        "a request waits (intervals)": (2 * rows["wait_per_call_intervals"]).round(2)}).sort_values(
            ["build", "interval (ms)", "CPU threads"])
    sentences = []
    for b in ("3.9.10", "3.13.5"):
        r = rows[(rows["condition"] == b) & np.isclose(rows["switch_interval"], 0.005) & (rows["cpu_threads"] == 1)]
        if r.empty:
            continue
        r = r.iloc[0]
        sentences.append(
            f"On `{b}` at 5 ms next to one CPU thread, the handler let the GIL go {r['io_calls']} times in the traced "
            f"window (each `recv` and each `send`); {r['lost_share']:.0%} of those times a CPU thread took it, and "
            f"the handler then waited a median {_fmt(r['lost_wait_median_ms'], ' ms', 3)} (95% interval "
            f"{_fmt(r['lost_wait_lo_ms'], '', 3)}-{_fmt(r['lost_wait_hi_ms'], ' ms', 3)} over {r['lost_wait_n']} waits), "
            f"{r['lost_wait_median_intervals']:.2f} switch intervals, to get it back; the other times it had the "
            f"GIL back before any other thread took it. A request therefore waited "
            f"{2 * r['wait_per_call_intervals']:.2f} intervals on average, where the document's model has 2 "
            "(every `recv` and every `send` losing the GIL for one interval).")
    explore = sorted([t for t in trs if t.meta["point"]["cpu_threads"] == 1],
                     key=lambda t: (t.meta["condition"], -t.meta["point"]["switch_interval"]))
    return Section(fig, table, sentences, explore,
                   lambda t: float(np.clip(8 * t.meta["point"]["switch_interval"] * 1e3, 2, 250)), io=True)


def ccbench(trs: list[traces.Trace]) -> Section | None:
    rows = pd.DataFrame([io_story(tr) for tr in trs])
    shown = [t for t in (pick(trs, b, task="pi") for b in ("2.7.18", "3.9.10")) if t]
    if rows.empty or len(shown) < 2:
        return None
    fig = timeline(shown, 0.0, 30.0, io=True)
    table = pd.DataFrame({
        "task": rows["task"], "build": rows["condition"], "I/O calls": rows["io_calls"],
        "lost the GIL": rows["lost_share"].round(2),
        "their median wait, ms (95%)": [_with_interval(r, "lost_wait_{}_ms") for _, r in rows.iterrows()],
        "wait per call (ms)": rows["wait_per_call_ms"].round(3),
        "drops/s: check interval": rows["tick_drops_per_s"].round(0), "forced": rows["forced_drops_per_s"].round(0)}
    ).sort_values(["task", "build"])
    old, new = (rows[(rows["task"] == "pi") & (rows["condition"] == b)].iloc[0] for b in ("2.7.18", "3.9.10"))
    faster = old["wait_per_call_ms"] < new["wait_per_call_ms"]
    sentences = [
        f"Next to one thread of task A (`pi`, pure Python), the old GIL (`2.7.18`) made the responder wait "
        f"{_fmt(old['wait_per_call_ms'], ' ms', 2)} per I/O call on average and the new GIL (`3.9.10`) "
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


def _generic(trs: list[traces.Trace], length_ms: float) -> tuple[object, pd.DataFrame]:
    rows = []
    for tr in trs:
        s = traces.summary(tr)
        passed = tick_handoffs(tr)
        way = traces.EVENT_NAMES[traces.DROP_TICKS if tr.old_gil else traces.DROP_FORCED]
        rows.append({"build": tr.meta.get("condition"), "point": point_key(tr.meta.get("point", {})),
                     "hand-offs/s": round(s["handoffs_per_s"]), "drop requests/s": round(s["requests_per_s"]),
                     "forced or check-interval drops/s": round(passed[way]["per_s"]),
                     "share of those that passed the GIL on": round(passed[way]["passed_share"], 3),
                     "median hold (ms)": float(f"{np.nanmedian([v['hold_median_ms'] for v in s['threads'].values()]):.3g}"),
                     "events": s["events"]})
    return timeline(trs, 0.0, length_ms), pd.DataFrame(rows)


def countdown(trs: list[traces.Trace]) -> Section | None:
    trs = sorted(trs, key=lambda t: t.meta.get("condition"))
    if not trs:
        return None
    fig, table = _generic(trs, 20.0)
    sentences = []
    for _, r in table.iterrows():
        share = r["share of those that passed the GIL on"]
        sentences.append(f"`{r['build']}`: {r['hand-offs/s']:,} hand-offs a second between the two threads; "
                         f"of its {r['forced or check-interval drops/s']:,} forced or check-interval drops a second, "
                         f"{share:.1%} passed the GIL to the other thread"
                         + ("; after the others the same thread took it straight back." if share < 1 else "."))
    return Section(fig, table, sentences, trs, lambda t: 20.0)


def plain(length_ms: float):
    def section(trs: list[traces.Trace]) -> Section | None:
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
             "convoy cpu_processes=0,cpu_threads=1,switch_interval=0.005": "echo beside 1 CPU thread, 5 ms"}
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
    from ..measure.tracing import OVERHEAD_FILE

    held = [c for c in campaigns.all_campaigns() if (c.dir / "traces" / OVERHEAD_FILE).is_file()]
    if not held:
        return ("No campaign here holds the traced builds' overhead yet: `make interpreters TRACE=1`, then "
                "`gillab trace overhead` (8 interleaved rounds of 24 samples).\n")
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


def hold_lengths(trs: list[traces.Trace]) -> pd.DataFrame:
    """For the convoy's traces next to one CPU thread: the CPU thread's holds that ended in a
    forced drop, their median with its 95% interval over the holds of the window, in ms and in
    switch intervals (the new GIL lets a holder run until a waiter has waited one interval)."""
    rows = []
    for tr in trs:
        p = tr.meta.get("point", {})
        if p.get("cpu_threads") != 1 or tr.old_gil:
            continue
        handler = tr.meta.get("sample_result", {}).get("handler_tid")
        s = traces.spans(tr)
        forced = s[(s["kind"] == "hold") & (s["tid"] != handler)
                   & (s["ended_by"] == traces.EVENT_NAMES[traces.DROP_FORCED])]["dur_ns"] / 1e6
        w = median_with_interval(forced)
        per_ms = tr.interval / 1e3
        rows.append({"build": tr.meta.get("condition"), "interval (ms)": per_ms, "holds": w["n"],
                     "median hold, ms (95%)": _interval_text(w["median"], w["lo"], w["hi"]),
                     "in intervals": round(w["median"] / per_ms, 2) if w["n"] else float("nan")})
    return pd.DataFrame(rows).sort_values(["build", "interval (ms)"]) if rows else pd.DataFrame()


def holds_markdown() -> str:
    """The method chapter's table of hold lengths against the interval, from the newest campaign
    holding convoy traces."""
    camp, trs, _ = load("convoy")
    table = hold_lengths(trs)
    if table.empty:
        return ""
    lines = ["| build | interval (ms) | forced holds | median hold, ms (95%) | in intervals |", "|---|---|---|---|---|"]
    lines += [f"| `{r['build']}` | {r['interval (ms)']:g} | {r['holds']} | {r['median hold, ms (95%)']} | "
              f"{r['in intervals']} |" for _, r in table.iterrows()]
    return ("\nHow long the CPU thread beside the echo server holds the GIL before a forced drop, against the "
            f"switch interval (campaign `{camp.id}`, `traces/convoy/`; the interval is over the holds of one "
            "window):\n\n" + "\n".join(lines) + "\n")
