"""The race behind the convoy, read from GIL traces: the GIL's part and the machine's part.

When the echo server's handler lets the GIL go around a blocking call (a ``recv``, a ``send``), a
CPU-bound thread waiting for the GIL is signalled.  Either the handler's call returns and it takes
the GIL back first (the race *won*: no wait), or the signalled thread wakes, takes the GIL and keeps
it until the handler's timed-out request makes it drop (the race *lost*: the handler waits about
one switch interval).  What a lost race costs is the GIL's (the new GIL's forced drop comes one
interval after the request); how often the race is lost is the machine's: how fast the OS wakes a
thread on the other CPU against how long the handler's call takes.

Per handler release (:func:`gillab.measure.trace_file.releases`): how long its call took (from its drop to wanting the GIL
again), whether another thread took the GIL first, that thread's wake-up (from the handler's drop
to its take: the signalled thread's latency, seen on the releases it won) and the handler's wait.
Per traced run (:func:`run`): the share of releases lost, the median wake-up, the length of a wait
after a lost release in switch intervals and the waits a request makes; their product predicts
the run's cost per request, set beside the untraced build's cost measured in the same round.
Over runs (:func:`points`): medians with 95% intervals (:func:`gillab.present.trace_view.over_runs`)
and the predicted cost against the untraced one, paired by round.  Over machines
(:func:`across`): the same for every committed campaign that holds convoy traces."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..measure import trace_file
from . import trace_view

# a run's statistics, in the words the table heads them with
RUN_STATS = {
    "lost_share": "releases lost to a CPU thread",
    "wake_us": "CPU thread's wake-up (µs)",
    "call_won_us": "handler's call, race won (µs)",
    "call_lost_us": "handler's call, race lost (µs)",
    "quick_call_us": "send: the call (µs)",
    "quick_lost_share": "send: races lost",
    "slow_call_us": "recv: the call (µs)",
    "slow_lost_share": "recv: races lost",
    "wait_intervals": "a wait after a lost release (intervals)",
    "wait_beyond_us": "a wait beyond the interval (µs)",
    "waits_per_request": "waits a request makes",
    "predicted_cost": "predicted cost a request (intervals)",
    "counted_handoffs": "hand-offs a request, the interpreter's count",
    "traced_over_counted": "hand-offs a request, trace / count",
}


def counted_handoffs(result: dict) -> float:
    """The GIL's hand-offs a request over a sample's connection as the interpreter itself counts
    them (the server reads the new GIL's ``switch_number`` without a patch,
    :mod:`gillab.measure.workloads._gil`): nan where the build keeps no count, or the sample
    predates it."""
    sw, served = result.get("gil_switches"), result.get("requests_served")
    try:
        return float(sw) / float(served) if sw is not None and float(served) > 0 else float("nan")
    except (TypeError, ValueError):
        return float("nan")


def calls(rel: pd.DataFrame) -> dict:
    """A request's two calls apart: the handler's releases alternate ``recv`` and ``send``; the
    ``recv`` waits for the client's next request and is the slower (the one of the two alternate
    sets whose median call is longer), the ``send`` of a short reply the quicker.  Per call: its
    median length and the share of its releases lost."""
    if len(rel) < 2:
        return {k: float("nan") for k in ("quick_call_us", "quick_lost_share", "slow_call_us", "slow_lost_share")}
    a, b = rel.iloc[0::2], rel.iloc[1::2]
    quick, slow = (a, b) if a["call_us"].median() <= b["call_us"].median() else (b, a)
    return {"quick_call_us": float(quick["call_us"].median()), "quick_lost_share": float(quick["lost"].mean()),
            "slow_call_us": float(slow["call_us"].median()), "slow_lost_share": float(slow["lost"].mean())}


def run(tr: trace_file.Trace) -> dict:
    """One traced run of the echo server beside CPU threads (new GIL only: the old GIL has no
    interval in time): its race statistics (:data:`RUN_STATS`), the untraced build's cost per request
    measured in the same round (``untraced_cost``), and the point it belongs to."""
    tid = trace_view.handler_of(tr)
    rel = trace_file.releases(tr, tid if tid else -1)
    per_us = float(tr.interval) if (tr.interval and not tr.old_gil) else float("nan")
    lost = rel[rel["lost"]]
    requests = len(rel) / 2                   # a recv and a send each (trace_view.convoy_run counts so)
    share = float(rel["lost"].mean()) if len(rel) else float("nan")
    wait = float(lost["wait_us"].mean()) / per_us if len(lost) else float("nan")
    beyond = float(lost["wait_us"].mean()) - per_us if len(lost) else float("nan")   # the drop and the wake-up
    waits = (len(rel) / requests) * share if requests else float("nan")
    point = tr.meta.get("point", {})
    # the trace's hand-offs a request in its window against the interpreter's own count over the
    # same run's whole connection: the one check of the trace that does not go through our patch
    counted = counted_handoffs(tr.meta.get("sample_result") or {})
    traced = trace_file.handoffs(tr) / requests if requests else float("nan")
    return {"condition": tr.meta.get("condition"), "placement": tr.meta.get("placement", "os"),
            "switch_interval": point.get("switch_interval"), "cpu_threads": point.get("cpu_threads"),
            "round": tr.meta.get("round", 0), "releases": int(len(rel)), "lost": int(len(lost)),
            "lost_share": share, "wake_us": float(lost["wake_us"].median()),
            "call_won_us": float(rel.loc[~rel["lost"], "call_us"].median()), "call_lost_us": float(lost["call_us"].median()),
            **calls(rel), "wait_intervals": wait, "wait_beyond_us": beyond, "waits_per_request": waits,
            # no lost release: no wait (0), whatever a wait's length would have been
            "predicted_cost": 0.0 if share == 0 else waits * wait,
            "counted_handoffs": counted, "traced_over_counted": traced / counted if counted > 0 else float("nan"),
            "untraced_cost": (tr.meta.get("untraced") or {}).get("cost_per_request_intervals", float("nan"))}


KEYS = ["condition", "placement", "switch_interval", "cpu_threads"]


def runs(trs: list[trace_file.Trace]) -> pd.DataFrame:
    """:func:`run` of every traced run beside at least one CPU thread on a new GIL."""
    out = [run(tr) for tr in trs if (tr.meta.get("point", {}).get("cpu_threads") or 0) > 0 and not tr.old_gil]
    return pd.DataFrame(out)


def points(trs: list[trace_file.Trace], df: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per build, placement, interval and CPU threads: each race statistic over runs (median with
    its 95% interval, :func:`gillab.present.trace_view.over_runs`), the releases and lost releases
    counted, and the predicted cost against the untraced cost, paired by round (``df``: the
    traces' :func:`runs`, where already read)."""
    df = runs(trs) if df is None else df
    if df.empty:
        return df
    rows = []
    for key, g in df.groupby(KEYS, sort=True):
        row = dict(zip(KEYS, key), runs=len(g), releases=int(g["releases"].sum()), lost=int(g["lost"].sum()))
        for col in [*RUN_STATS, "untraced_cost"]:
            row[col] = trace_view.over_runs(g[col])
        row["agreement"] = trace_view.agreement(g.assign(waits_per_request=g["predicted_cost"]))
        rows.append(row)
    return pd.DataFrame(rows)


def machine_of(camp) -> str:
    m = camp.machine
    return f"{m.get('cpu_model', '?')}, {m.get('cpu_count', '?')} cores"


def across(experiment: str = "convoy") -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """:func:`points` of every campaign that holds traces of ``experiment``, one row a campaign and
    point (with its campaign and machine), and the traces each campaign could not read."""
    rows, damaged = [], {}
    for camp in trace_view.holding(experiment):
        good, bad = trace_file.stored(camp.dir / "traces" / experiment)
        if bad:
            damaged[camp.id] = bad
        each = runs(good)
        pts = points(good, each)
        if len(pts):
            # beside one CPU thread, the time a wait lasted beyond the interval over every run of the
            # campaign at that interval (its builds and placements together: the machine's drop and wake-up)
            one = each[each["cpu_threads"] == 1]
            pool = {si: trace_view.over_runs(g["wait_beyond_us"]) for si, g in one.groupby("switch_interval")}
            pooled = [pool.get(si) if ct == 1 else None for si, ct in zip(pts["switch_interval"], pts["cpu_threads"])]
            rows.append(pts.assign(campaign=camp.id, machine=machine_of(camp), beyond_pooled=pooled))
    return (pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()), damaged


def table(df: pd.DataFrame) -> pd.DataFrame:
    """The race statistics of :func:`points` or :func:`across`, as the book prints them."""
    text = trace_view.over_runs_text
    head = {"machine": df["machine"]} if "machine" in df else {}
    return pd.DataFrame({
        **head, "build": df["condition"], "placement": df["placement"],
        "interval (ms)": (df["switch_interval"] * 1e3).map(lambda x: f"{x:g}"), "CPU threads": df["cpu_threads"],
        "runs": df["runs"], "releases (lost)": [f"{a} ({b})" for a, b in zip(df["releases"], df["lost"])],
        **{RUN_STATS[c]: [text(r) for r in df[c]] for c in RUN_STATS},
        "untraced: a request costs (intervals)": [text(r) for r in df["untraced_cost"]],
        "predicted / untraced": [f"{a['ratio']:.2f} [{a['ci_lo']:.2f}, {a['ci_hi']:.2f}]: {_word(a)}"
                                 if a["n"] else "-" for a in df["agreement"]]})


def _word(a: dict) -> str:
    return {"traced higher": "predicted higher", "traced lower": "predicted lower"}.get(a["word"], a["word"])


def figure(df: pd.DataFrame):
    """Per campaign, at each interval beside one CPU thread: the share of the handler's releases lost
    to the CPU thread (the machine's part) and the length of a wait after a lost one in switch
    intervals (the GIL's part), medians over runs with their 95% intervals; a point with too few
    runs for an interval is drawn hollow, without a bar; a campaign with no point that has the runs
    an interval needs is left to the table.  One colour a build, one marker a placement, one line
    style a campaign."""
    import matplotlib.pyplot as plt

    from . import plots

    df = df[df["cpu_threads"] == 1]
    read = {c for c, g in df.groupby("campaign") if any(r["conclusive"] for r in g["lost_share"])}
    df = df[df["campaign"].isin(read)] if read else df      # one run a point: in the table only
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.8), constrained_layout=True)
    camps = list(dict.fromkeys(df["campaign"]))
    pal = plots.palette(df["condition"].unique())
    marks, styles = {"pinned": "o", "os": "s"}, ["-", "--", ":", "-."]
    for col, ax, title in (("lost_share", axes[0], "releases lost to the CPU thread\n(the machine's part)"),
                           ("wait_intervals", axes[1], "a wait after a lost release, in intervals\n(the GIL's part)")):
        for (camp, build, placement), g in df.groupby(["campaign", "condition", "placement"], sort=False):
            g = g.sort_values("switch_interval")
            k = camps.index(camp)
            x = g["switch_interval"].to_numpy(dtype=float) * 1e3 * (1 + 0.05 * (k - (len(camps) - 1) / 2))
            y = np.array([r["median"] for r in g[col]])
            ok = np.array([r["conclusive"] for r in g[col]])
            lo = np.where(ok, [r["lo"] for r in g[col]], y)
            hi = np.where(ok, [r["hi"] for r in g[col]], y)
            colour = pal[build]
            ax.plot(x, y, ls=styles[k % len(styles)], color=colour, lw=1)
            ax.errorbar(x[ok], y[ok], yerr=[np.clip(y - lo, 0, None)[ok], np.clip(hi - y, 0, None)[ok]],
                        fmt=marks.get(placement, "^"), color=colour, capsize=2, lw=1)
            ax.plot(x[~ok], y[~ok], marks.get(placement, "^"), mfc="none", color=colour)
        ax.set_xscale("log")
        ticks = sorted(set(np.round(df["switch_interval"].astype(float) * 1e3, 6)))
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("switch interval (ms)")
        ax.set_title(title, fontsize=10)
    axes[0].set_ylim(0, 1.02)
    waits = [r["median"] for r in df["wait_intervals"] if r["n"]]
    if waits and max(waits) > 10 * min(waits):     # waits of many intervals at short intervals
        axes[1].set_yscale("log")
    axes[1].axhline(1.0, color="grey", lw=0.8, ls=":")
    from matplotlib.lines import Line2D

    handles = ([Line2D([], [], color=pal[b], lw=2, label=b) for b in sorted(df["condition"].unique())]
               + [Line2D([], [], color="black", marker=marks[p], ls="none", label=p) for p in marks
                  if p in set(df["placement"])]
               + [Line2D([], [], color="black", ls=styles[k % len(styles)],
                         label=f"{c} ({machine_of_id(df, c)})") for k, c in enumerate(camps)])
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=9, frameon=False)
    return fig


def machine_of_id(df: pd.DataFrame, camp: str) -> str:
    return str(df.loc[df["campaign"] == camp, "machine"].iloc[0]).split(",")[0].replace("(R)", "")


def sentences(df: pd.DataFrame) -> list[str]:
    """What the race says, in words computed from :func:`across`: per campaign with the runs an
    interval needs, at the document's setting (5 ms, one CPU thread) over its builds and
    placements, the share of releases lost, the CPU thread's wake-up and a wait's length, and at
    every traced point whether the predicted cost agrees with the untraced one; then the two parts
    side by side across machines, and the campaigns that traced too few runs for an interval."""
    out = []
    ok = df[[r["conclusive"] for r in df["lost_share"]]]
    five_ms = ok[np.isclose(ok["switch_interval"].astype(float), 0.005)]
    at = five_ms[five_ms["cpu_threads"] == 1]
    for camp, g in ok.groupby("campaign", sort=False):
        five = at[at["campaign"] == camp]
        two = five_ms[(five_ms["campaign"] == camp) & (five_ms["cpu_threads"] == 2)]
        words = {}
        for a in g["agreement"]:
            if a["n"]:
                words[_word(a)] = words.get(_word(a), 0) + 1
        differ = [f"`{r.condition}` {r.placement} at {r.switch_interval * 1e3:g} ms"
                  + (f" beside {r.cpu_threads} CPU threads" if r.cpu_threads != 1 else "") + f" ({_word(r.agreement)}, "
                  f"{r.agreement['ratio']:.2f} [{r.agreement['ci_lo']:.2f}, {r.agreement['ci_hi']:.2f}])"
                  for r in g.itertuples() if r.agreement["n"] and _word(r.agreement) != trace_view.CONSISTENT
                  and not _word(r.agreement).startswith("too few")]
        out.append(
            f"On {g['machine'].iloc[0]} (`{camp}`)"
            + (f", at 5 ms over {len(five)} builds and placements: the handler lost {_spread(five, 'lost_share')} of its "
               f"releases to the CPU thread, which took the GIL {_spread(five, 'wake_us', '.3g')} µs after the handler let "
               f"it go; a wait after a lost release lasted {_spread(five, 'wait_intervals', '.3g')} intervals, so a request "
               f"is predicted to cost {_spread(five, 'predicted_cost', '.3g')} intervals" if len(five) else "")
            + (f". Beside two CPU threads (5 ms, {', '.join(sorted(set(two['placement'])))}), it lost "
               f"{_spread(two, 'lost_share')} of its releases and a wait lasted {_spread(two, 'wait_intervals', '.3g')} "
               f"intervals: {_spread(two, 'predicted_cost', '.3g')} predicted a request" if len(two) else "")
            + f". Predicted against the untraced cost of the same rounds, at its {len(g)} traced points: "
            + ", ".join(f"{n} {w}" for w, n in sorted(words.items()))
            + (f"; they differ at {'; '.join(differ)}" if differ else "") + ".")
    if at["machine"].nunique() > 1:
        wait = [r["median"] for r in at["wait_intervals"]]
        by = at.assign(share=[r["median"] for r in at["lost_share"]]).groupby("machine")["share"]
        out.append(
            f"**At 5 ms, on {at['machine'].nunique()} kinds of machine**: a wait after a lost release (the GIL's "
            f"part) lasted {_span(min(wait), max(wait))} intervals on every one, while the share of releases "
            "lost (the machine's part) was "
            + "; ".join(f"{_span(by.min()[m], by.max()[m], '.2f')} on {m}" for m in by.min().index)
            + " (medians over runs of each build and placement). "
            + ("The share follows the quicker of a request's two calls, the `send`: where it returns before the CPU "
               "thread wakes, the handler mostly takes the GIL back, where it returns after, mostly not: "
               if _send_decides(at) else "The quicker of a request's two calls, the `send`, beside the wake-up: ")
            + "; ".join(f"on {m} the `send` takes {_spread(g, 'quick_call_us', '.3g')} µs against a wake-up of "
                        f"{_spread(g, 'wake_us', '.3g')} µs and loses {_spread(g, 'quick_lost_share', '.2f')} of its "
                        f"races, the `recv` ({_spread(g, 'slow_call_us', '.3g')} µs) "
                        f"{_spread(g, 'slow_lost_share', '.2f')}" for m, g in at.groupby("machine"))
            + ".")
    out += _beyond_sentences(ok)
    out += _witness_sentences(df)
    few = [c for c in dict.fromkeys(df["campaign"]) if c not in set(ok["campaign"])]
    if few:
        out.append("Traced with too few runs a point for a 95% interval (in the table below, not read here): "
                   + ", ".join(f"`{c}`" for c in few) + ".")
    return out


def _beyond_sentences(ok: pd.DataFrame) -> list[str]:
    """Why a lost race costs more than one interval at the shorter intervals, from the campaigns that
    traced the server beside one CPU thread at two intervals or more (``ok``: the points with the
    runs an interval needs): a wait after a lost release lasts the interval and then some; the time
    beyond it, in µs, over every run of the campaign at each interval (its builds and placements
    together, ``beyond_pooled``: the machine's forced drop and wake-up).  That time is *its own*
    where, on every machine, its 95% intervals say it grew from the shortest interval to each longer
    one by less than the geometric middle between not growing and growing with the interval (the
    square root of the intervals' ratio: the nearer of the two readings); *a share of the interval*
    where they say it grew by more on every one; neither is said otherwise."""
    if "beyond_pooled" not in ok:
        return []
    one = ok[(ok["cpu_threads"] == 1) & ok["beyond_pooled"].map(lambda r: bool(r) and r["conclusive"])]
    per = {c: {float(si): g["beyond_pooled"].iloc[0] for si, g in d.groupby("switch_interval")}
           for c, d in one.groupby("campaign", sort=False)}
    per = {c: v for c, v in per.items() if len(v) >= 2}
    pairs = []               # (shortest interval, a longer one, the bounds of the time's growth between them)
    for at in per.values():
        s0 = min(at)
        for si in sorted(at)[1:]:
            a, b = at[s0], at[si]
            if a["lo"] > 0 and b["lo"] > 0:
                pairs.append((s0, si, b["lo"] / a["hi"], b["hi"] / a["lo"]))
    if not pairs:
        return []
    own = all(hi < np.sqrt(si / s0) for s0, si, _, hi in pairs)
    share = all(lo > np.sqrt(si / s0) for s0, si, lo, _ in pairs)
    by = {}
    for at in per.values():
        for si, r in at.items():
            by.setdefault(si, []).append(r)
    each = "; ".join(
        f"{_span(min(r['median'] for r in v), max(r['median'] for r in v), '.0f')} µs at {si * 1e3:g} ms "
        f"({_span(min(r['median'] for r in v) / (si * 1e6), max(r['median'] for r in v) / (si * 1e6), '.0%')} "
        "of the interval)" for si, v in sorted(by.items()))
    spans = {}
    for s0, si, lo, hi in pairs:
        a, b = spans.get(si / s0, (lo, hi))
        spans[si / s0] = (min(a, lo), max(b, hi))
    growth = "; ".join(f"{k:g} times the interval, {_span(lo, hi, '.2f')} times the time beyond it"
                       for k, (lo, hi) in sorted(spans.items()))
    word = (f"it grew far less than the interval did ({growth}, bounds from every campaign's 95% intervals; each under "
            "the square root of the intervals' ratio, the geometric middle between not growing and growing with "
            "the interval): nearer a time of its own than a share of the interval, the forced drop and the "
            "wake-up, a small part of a long interval and a large part of a short one"
            if own else
            f"it grew as a share of the interval would ({growth}, bounds from every campaign's 95% intervals; each over "
            "the square root of the intervals' ratio)" if share else
            f"neither plainly a time of its own nor a share of the interval ({growth}, bounds from every campaign's "
            "95% intervals; the square root of the intervals' ratio lies inside at least one of them)")
    machines = one.loc[one["campaign"].isin(per), "machine"].nunique()
    return [f"**Beyond the interval**: a wait after a lost release lasted the interval and then {each} (the "
            f"median over every run of a campaign's builds and placements at the interval, {len(per)} campaigns "
            f"on {machines} kinds of machine): {word}."]


def _witness_sentences(df: pd.DataFrame) -> list[str]:
    """Per campaign whose traced runs also carry the interpreter's own hand-off count: the trace's
    hand-offs a request against that count, run by run (trace / count, medians over runs with
    their 95% intervals), and whether every point's interval holds 1; or that no traced run
    carries the count."""
    if "traced_over_counted" not in df:
        return []
    out = []
    for camp, g in df.groupby("campaign", sort=False):
        has = g[[r["n"] > 0 for r in g["traced_over_counted"]]]
        if has.empty:
            continue
        sure = has[[r["conclusive"] for r in has["traced_over_counted"]]]
        holds = [r["lo"] <= 1 <= r["hi"] for r in sure["traced_over_counted"]]
        out.append(
            f"**Checked without our patch** (`{camp}`): the interpreter counts the GIL's hand-offs itself, and the "
            f"server read that count over each traced run's connection; the trace's hand-offs a request over its "
            f"window, against it, were {_spread(has, 'traced_over_counted', '.3g')} of the count at its "
            f"{len(has)} points (medians over runs; {_spread(has, 'counted_handoffs', '.3g')} hand-offs a request "
            "by the count)"
            + (f": the 95% interval holds 1 at {sum(holds)} of the {len(sure)} points with the runs an interval needs"
               + (", so the trace sees the hand-offs the interpreter made" if sure.shape[0] and all(holds) else "")
               if len(sure) else ": too few runs a point for a 95% interval")
            + ".")
    return out


def _span(lo: float, hi: float, fmt: str = ".3g") -> str:
    a, b = format(lo, fmt), format(hi, fmt)
    return a if a == b else f"{a} to {b}"


def _spread(g: pd.DataFrame, col: str, fmt: str = ".2f") -> str:
    """The medians over runs of ``col`` across ``g``'s rows, lowest to highest ("-" where none)."""
    v = [r["median"] for r in g[col] if r["n"]]
    return _span(min(v), max(v), fmt) if v else "-"


def _send_decides(at: pd.DataFrame) -> bool:
    """Whether, on every machine, the ``send``'s median length against the wake-up's tells which
    way its race mostly goes: shorter and lost less than half the time, or longer and lost more."""
    for _, g in at.groupby("machine"):
        send, wake, lost = (np.nanmedian([r["median"] for r in g[c] if r["n"]] or [np.nan])
                            for c in ("quick_call_us", "wake_us", "quick_lost_share"))
        if not ((send < wake and lost < 0.5) or (send > wake and lost > 0.5)):
            return False
    return True
