"""How the convoy chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.convoy`).

Why it is long: the convoy chapter reads three views of one echo sample (the rate, the
handler's waits and where the threads ran), pinned and unpinned, with the GIL's traces beside them;
its figures, claims and sentences share those readers."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import stats
from .echo import inline_row, median_text, per_run
from ..measure.experiments.echo import request_cost
from ..judge.analysis import ModuleAnalysis, frame_cached
from ..judge.prose import words as chapter_words
from ..judge.tables import estimate_over_runs


def published() -> pd.DataFrame:
    from ..judge import results

    return results.reference("pbts13_t3_echo_rps_vs_switch_interval")


def inline_published() -> pd.DataFrame:
    from ..judge import results

    return results.reference("pbts13_t6_echo_inline_numbers")


def published_table() -> pd.DataFrame:
    from ..judge import results

    w = results.reference("pbts13_t3_echo_rps_vs_switch_interval_wide")
    return w.drop(columns=["source"]).rename(columns={
        "switch_interval_s": "switch interval (s)", "rps_no_cpu_threads": "RPS, no CPU threads",
        "rps_one_cpu_thread": "one CPU thread", "rps_two_cpu_threads": "two", "rps_four_cpu_threads": "four"})


run_values = per_run      # what the documents' conclusions (claims.csv) take the ratio of


# -- where the threads ran ------------------------------------------------------------------------
# Every sample since placements were recorded says where its threads ran
# (gillab.measure.placement); the pinned points are the document's setting, measured on purpose.
# The two are never pooled: the rates, figures and conclusions read the unpinned samples (what a
# reader's OS does, as in the document's own runs), the mechanism rows the pinned ones.
PINNED = "pinned"


def _placed(df: pd.DataFrame) -> pd.Series:
    """Each sample's placement: ``os`` for samples stored before placements were recorded."""
    return df["placement"].fillna("os") if "placement" in df else pd.Series("os", index=df.index)


def unpinned(df: pd.DataFrame) -> pd.DataFrame:
    return df[_placed(df) != PINNED]


def pinned(df: pd.DataFrame) -> pd.DataFrame:
    return df[_placed(df) == PINNED]


# the documents' conclusions (claims.csv convoy/conclusion/...) read the runs where the OS put the
# threads, as the rates do: a pinned point shares its round with the unpinned one of the same
# switch interval and thread count, and a round's median over both would be two experiments
conclusion_samples = unpinned

# A rate is the document's reading only where a window counted enough requests for its rate to be
# a rate, not a handful of events in steps of 1/window (a 0.5-s window at 0.1 s with a CPU thread
# counts 2-4): fixed before any sample was read, as the switch-interval chapter's 50 intervals.
MIN_REQUESTS = 50


def _points_of(claim_id: str) -> list[tuple[float, int, int]]:
    """The (switch interval, CPU threads, CPU processes) points a row's statistic reads
    (claims.csv ``point``; ``cpu_processes=2,3,4`` is three points)."""
    from ..judge import claims as published_claims

    out = []
    for sel in published_claims.point_selectors(claim_id):
        if "switch_interval" not in sel:
            continue
        for procs in sel.get("cpu_processes", "0").split(","):
            out.append((float(sel["switch_interval"]), int(sel.get("cpu_threads", 0)), int(procs)))
    return out


def window_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Per build, placement and point: the requests a window counted (median over runs of each
    run's median window), and the runs."""
    if "requests" not in df.columns:
        return pd.DataFrame(columns=["condition", "placement", "switch_interval", "cpu_threads", "cpu_processes",
                                     "requests", "runs"])
    d = df.assign(placement=_placed(df))
    keys = ["condition", "placement", "switch_interval", "cpu_threads", "cpu_processes"]
    per = d.groupby([*keys, "run_id", "repeat"])["requests"].median().reset_index()
    return per.groupby(keys).agg(requests=("requests", "median"), runs=("requests", "size")).reset_index()


def _contended(g: pd.DataFrame) -> pd.DataFrame:
    """The samples of ``g`` where the handler contends for the GIL: with CPU threads beside it."""
    return g[g["cpu_threads"] > 0]


def handoffs(g: pd.DataFrame) -> pd.Series:
    """Each run's GIL hand-offs a second over its connection (the server's own count,
    ``gil_switches`` / ``connection_s``); empty where the build keeps no count or the run predates it."""
    if not {"gil_switches", "connection_s"} <= set(g.columns):
        return pd.Series(dtype=float)
    per = g.drop_duplicates(["run_id", "repeat"])
    per = per[per["gil_switches"].notna() & (per["connection_s"] > 0)]
    return per["gil_switches"].astype(float) / per["connection_s"].astype(float)


@frame_cached
def settings_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per build, placement and point with CPU threads: what the switch interval achieved (the
    GIL's hand-offs a second, median over runs, and the timer slack its threads had), the requests
    a window counted, and whether the setting was in force (:func:`settings_in_force`), as the page
    shows it (:func:`gillab.judge.tables.settings_view`)."""
    from ..judge import slack
    from ..judge.tables import settings_view
    from ..judge.prose import gil_by_condition

    if df.empty:
        return pd.DataFrame()
    gil_on = gil_by_condition(df) if "gil_enabled" in df.columns else {}
    counts = window_counts(df).set_index(["condition", "placement", "switch_interval", "cpu_threads", "cpu_processes"])
    d = _contended(df.assign(placement=_placed(df)))
    rows = []
    for (cond, place, si, n), g in d.groupby(["condition", "placement", "switch_interval", "cpu_threads"], sort=True):
        rate = handoffs(g)
        had = slack.in_force_ns(g)
        requests = counts["requests"].get((cond, place, si, n, 0), math.nan)
        why = slack.stretched(g, float(si)) if gil_on.get(cond, True) else None
        rows.append({"condition": cond, "placement": place, "switch_interval": float(si), "cpu_threads": int(n),
                     "runs": int(g.drop_duplicates(["run_id", "repeat"]).shape[0]),
                     "hand-offs a second": float(rate.median()) if len(rate) else math.nan,
                     "slack in force (ns)": had, "requests a window": requests,
                     "in force": why is None and not requests < MIN_REQUESTS, "why": why or ""})
    return settings_view(pd.DataFrame(rows))


def settings_in_force(df: pd.DataFrame, rows: list[dict]) -> list[tuple[str, str]]:
    """The rows that read a point whose setting was not in force, as "not in force here" with what
    it achieved: a window that counted fewer than MIN_REQUESTS requests, or (on a build with a GIL,
    with CPU threads beside the handler) a timer slack longer than the interval asked
    (:mod:`gillab.judge.slack`).  The mechanism rows read the pinned points, every other row the
    unpinned ones.  Returns the (claim, condition) pairs.

    How often the GIL changed hands is shown (:func:`settings_table`), not required: the document's
    own 10 us and 1 us rates (11,000 and 10,000 a second with one CPU thread, where its model of two
    intervals a request gives 50,000 and 500,000) say its machine did not hand over at those
    intervals either, and its saturation conclusion is about exactly that; what a machine's
    switching costs there is the finding, while a slack that stretches every wait is a setting the
    workload did not apply."""
    from ..judge import claims as published_claims
    from ..judge import slack
    from ..judge.prose import gil_by_condition

    counts = window_counts(df)
    if counts.empty:
        return []
    gil_on = gil_by_condition(df) if "gil_enabled" in df.columns else {}
    at = {(r.condition, r.placement, round(r.switch_interval, 9), r.cpu_threads, r.cpu_processes): r.requests
          for r in counts.itertuples()}
    d = df.assign(placement=_placed(df), _si=df["switch_interval"].round(9))
    groups = {k: g for k, g in _contended(d).groupby(["condition", "placement", "_si", "cpu_threads"])}

    def reasons(claim_id, _sels, cond):
        points = _points_of(claim_id)
        placement = PINNED if claim_id.startswith((MECHANISM, GIL_WAIT)) else "os"
        if placement == PINNED:     # a mechanism row reads the rate alone at the same interval too
            points += [(si, 0, 0) for si, _, _ in points]
        few = [(si, n, k, at[(cond, placement, round(si, 9), n, k)]) for si, n, k in points
               if at.get((cond, placement, round(si, 9), n, k), math.inf) < MIN_REQUESTS]
        whys = [f"at {si:g} s with {n} CPU thread{'s' if n != 1 else ''}"
                f"{f' and {k} CPU processes' if k else ''}, a window counted {c:,.0f} requests (a rate needs at "
                f"least {MIN_REQUESTS})" for si, n, k, c in few]
        if gil_on.get(cond, True):
            whys += [f"at {si:g} s with {n} CPU thread{'s' if n != 1 else ''}, {why}" for si, n, _ in points
                     if n > 0 and (g := groups.get((cond, placement, round(si, 9), n))) is not None
                     and (why := slack.stretched(g, si))]
        return whys

    return published_claims.mark_not_in_force(rows, reasons)


@frame_cached
def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per condition and unpinned point: the median RPS over runs (each run's median window) with
    its 95% CI over runs, every window's range, and what explains the rate (handler context
    switches per request, client CPU share)."""
    rows = []
    keys = ["condition", "switch_interval", "cpu_threads", "cpu_processes"]
    for key, g in unpinned(df).groupby(keys, sort=True):
        s = stats.summarize(per_run(g), lower_is_better=False)
        per_sample = g.drop_duplicates(["run_id", "repeat"])
        served = per_sample["requests_served"].clip(lower=1)
        rows.append({
            **dict(zip(keys, key)), "runs": s["n"], "windows": len(g), "rps_median": s["median"],
            "rps_ci_lo": s["ci_lo"], "rps_ci_hi": s["ci_hi"], "rps_weak": not stats.conclusive(stats.MEDIAN, s["n"]),
            "rps_min": float(g["rps"].min()),
            "rps_max": float(g["rps"].max()),
            "handler_vcsw_per_request": float((per_sample["handler_ctx_voluntary"] / served).median()),
            "handler_ivcsw_per_request": float((per_sample["handler_ctx_involuntary"] / served).median()),
            "client_cpu_share": float(per_sample["client_cpu_share"].median()),
            "gil_enabled": bool(g["gil_enabled"].fillna(False).astype(bool).all()),
        })
    return pd.DataFrame(rows)


def _threads_rows(s: pd.DataFrame) -> pd.DataFrame:
    return s[s["cpu_processes"] == 0]


def model_rps(rps0: float, si: np.ndarray, cpu_threads: int = 1) -> np.ndarray:
    """The document's model: a request costs its CPU-free time plus one switch interval for
    recv and one for send, per CPU-bound thread ahead of it (RPS halves as threads double)."""
    return 1.0 / (1.0 / rps0 + 2.0 * cpu_threads * np.asarray(si))


# -- the document's mechanism: GIL waits per request -------------------------------------------------
MECHANISM = "convoy/mechanism/"


def _threads_at(df: pd.DataFrame, cond: str, si: float) -> pd.DataFrame:
    """One build's samples at ``si`` with CPU threads (no CPU process) beside the handler, or none."""
    return df[(df["condition"] == cond) & np.isclose(df["switch_interval"], si) & (df["cpu_processes"] == 0)]


def waits_by_round(df: pd.DataFrame, cond: str, si: float, n: int) -> dict:
    """One build's GIL waits per request at ``si`` with ``n`` CPU threads, one value per
    interleaved round: (1/RPS with n CPU threads - 1/RPS alone) / si, both rates of that round's
    runs (each run's median window), so that the round's drift cancels."""
    g = _threads_at(df, cond, si)
    busy, alone = per_run(g[g["cpu_threads"] == n]), per_run(g[g["cpu_threads"] == 0])
    return {k: request_cost(float(busy[k]), float(alone[k]), si) for k in busy.index.intersection(alone.index)}


def waits_interval(df: pd.DataFrame, cond: str, si: float, n: int) -> dict:
    """The median over rounds of :func:`waits_by_round` with its interval (the verdict's and the
    figure's)."""
    return stats.paired_median(waits_by_round(df, cond, si, n).values())


# -- the race and the GIL's part: a request's waits split in two ------------------------------------
# The waits a request makes (above) are two numbers multiplied: how many of its GIL releases the CPU
# thread won (a race the OS decides: the handler re-takes the GIL after a short send() unless the
# thread woken on the other CPU is quicker) and what each lost race costs (the GIL's: the handler
# waits one interval, then asks the holder to drop it).  The server counts the GIL's hand-offs over
# its connection without a patch (``gil_switches``); with one CPU thread a lost race is two of them,
# the CPU thread taking the GIL and handing it back, so the races a request lost are the hand-offs a
# request / 2 and a lost race costs the request's waits over them.  With more CPU threads a lost
# race hands the GIL round more threads than two, and the count no longer splits it.
GIL_WAIT = "convoy/gil_wait/"


def races_lost(g: pd.DataFrame) -> pd.Series:
    """Each run's races lost a request, next to one CPU thread: the GIL's hand-offs over its
    connection / the requests it served / 2, by (run_id, repeat) as :func:`per_run`; empty where
    the build keeps no count (2.7's old GIL) or the run predates it."""
    if not {"gil_switches", "requests_served"} <= set(g.columns):
        return pd.Series(dtype=float)
    per = g.groupby(["run_id", "repeat"]).agg(sw=("gil_switches", "first"), served=("requests_served", "first"))
    per = per[per["sw"].notna() & (per["served"] > 0)]
    return per["sw"].astype(float) / per["served"].astype(float) / 2.0


def races_by_round(df: pd.DataFrame, cond: str, si: float) -> dict:
    """One build's races lost a request at ``si`` next to one CPU thread, one value per round."""
    g = _threads_at(df, cond, si)
    return races_lost(g[g["cpu_threads"] == 1]).to_dict()


def wait_by_round(df: pd.DataFrame, cond: str, si: float) -> dict:
    """One build's switch intervals a lost race cost at ``si`` next to one CPU thread, one value per
    interleaved round: that round's waits a request (:func:`waits_by_round`) over its races lost a
    request (:func:`races_by_round`); a round that lost no race has none."""
    waits, lost = waits_by_round(df, cond, si, 1), races_by_round(df, cond, si)
    return {k: w / lost[k] for k, w in waits.items() if lost.get(k, 0) > 0}


def _cells(prefix: str) -> dict[str, dict[str, str]]:
    """The claim id of every convoy row of claims.csv whose id starts with ``prefix`` -> the one
    point it reads (:func:`gillab.judge.claims.point_selectors`)."""
    from ..judge import claims as published_claims

    return {cid: published_claims.point_selectors(cid)[0]
            for cid in published_claims.of("convoy")["claim_id"] if cid.startswith(prefix)}


def gil_wait_cells() -> dict[float, str]:
    """Switch interval -> the claim id of every cell where claims.csv judges the GIL's part (one
    CPU thread, pinned)."""
    return {float(sel["switch_interval"]): cid for cid, sel in _cells(GIL_WAIT).items()}


def publishedrequest_cost() -> pd.DataFrame:
    """The document's table read the same way: its waits per request at each cell, beside the
    model's 2n."""
    pub = published()
    alone = pub[pub["cpu_bound_threads"] == 0].set_index("switch_interval_s")["rps"]
    rows = []
    for _, r in pub[pub["cpu_bound_threads"] > 0].iterrows():
        si, n = float(r["switch_interval_s"]), int(r["cpu_bound_threads"])
        rows.append({"switch_interval": si, "cpu_threads": n, "model": 2.0 * n,
                     "published": request_cost(float(r["rps"]), float(alone[r["switch_interval_s"]]), si)})
    return pd.DataFrame(rows)


def mechanism_cells() -> dict[tuple[float, int], str]:
    """(switch interval, CPU threads) -> the claim id of every cell where claims.csv judges the
    model (the others are context, drawn beside it)."""
    return {(float(sel["switch_interval"]), int(sel["cpu_threads"])): cid for cid, sel in _cells(MECHANISM).items()}


@frame_cached
def waits_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per placement (pinned, unpinned), build, switch interval and CPU threads (1 or more): the
    median over rounds of the GIL waits per request with its interval, the model's 2n, the
    document's table read the same way, and whether claims.csv judges that cell (pinned only:
    the document's setting)."""
    judged = mechanism_cells()
    pub = publishedrequest_cost().set_index(["switch_interval", "cpu_threads"])["published"]
    rows = []
    for placement, part in (("pinned", pinned(df)), ("os", unpinned(df))):
        ok = part[(part["cpu_processes"] == 0)]
        for (cond, si, n), _ in ok[ok["cpu_threads"] > 0].groupby(["condition", "switch_interval", "cpu_threads"]):
            waits = waits_by_round(part, cond, float(si), int(n))
            r = stats.paired_median(waits.values())          # waits_interval's, from the rounds at hand
            key = (float(si), int(n))
            races = races_by_round(part, cond, float(si)) if n == 1 else {}
            lost = stats.paired_median(races.values())
            each = stats.paired_ratio(waits, races)         # wait_by_round's split, median over rounds
            rows.append({"placement": placement, "condition": cond, "switch_interval": float(si),
                         "cpu_threads": int(n), "waits": r["ratio"], "ci_lo": r["ci_lo"], "ci_hi": r["ci_hi"],
                         "rounds": r["n"], "weak": not stats.conclusive(stats.PAIRED, r["n"]), "model": 2.0 * n,
                         "published": float(pub.get(key, math.nan)), "judged": placement == "pinned" and key in judged,
                         "races_lost": lost["ratio"], "races_lo": lost["ci_lo"], "races_hi": lost["ci_hi"],
                         "race_rounds": lost["n"], "a_race_costs": each["ratio"], "race_cost_lo": each["ci_lo"],
                         "race_cost_hi": each["ci_hi"]})
    return pd.DataFrame(rows, columns=["placement", "condition", "switch_interval", "cpu_threads", "waits", "ci_lo",
                                       "ci_hi", "rounds", "weak", "model", "published", "judged", "races_lost",
                                       "races_lo", "races_hi", "race_rounds", "a_race_costs", "race_cost_lo",
                                       "race_cost_hi"])


def race_split_table(df: pd.DataFrame) -> pd.DataFrame:
    """The request's waits split in two, pinned, next to one CPU thread (:func:`waits_summary`):
    per build and interval, the waits a request made, the races it lost (the machine's) and what
    a lost race cost (the GIL's), each the median over rounds with its 95% interval ("too few
    runs" below the rounds one needs), and the claim that judges the cost."""
    from ..judge import claims as published_claims
    from ..judge.prose import gil_by_condition

    w = waits_summary(df)
    on = {c for c, v in gil_by_condition(df).items() if v}      # a build without a GIL hands nothing over
    w = w[(w["placement"] == PINNED) & (w["cpu_threads"] == 1) & w["condition"].isin(on)]
    cells = gil_wait_cells()
    fams = published_claims.families(df)

    def cell(x, lo, hi, n):
        return "no count in these samples" if x != x else median_text(x, lo, hi, int(n))

    def judged_by(r):
        cid = cells.get(round(float(r.switch_interval), 9))
        if cid is None:
            return "-"
        role = published_claims.role(cid, r.condition, fams, 2)
        return cid if role == "judged" else f"{cid} ({role})"

    return pd.DataFrame({
        "build": w["condition"], "interval (s)": w["switch_interval"].map(lambda x: f"{x:g}"),
        "waits a request (intervals)": [cell(r.waits, r.ci_lo, r.ci_hi, r.rounds) for r in w.itertuples()],
        "races lost a request (machine)": [cell(r.races_lost, r.races_lo, r.races_hi, r.race_rounds)
                                           for r in w.itertuples()],
        "a lost race costs (intervals; the GIL's)": [cell(r.a_race_costs, r.race_cost_lo, r.race_cost_hi,
                                                          r.race_rounds) for r in w.itertuples()],
        "judged by": [judged_by(r) for r in w.itertuples()],
    }).reset_index(drop=True)


REGIME_ORDER = ("pinned", "handler apart from the CPU threads", "handler beside a CPU thread",
                "handler moving between the two", "not read")


def cost_by_placement(df: pd.DataFrame) -> pd.DataFrame:
    """What a request costs next to CPU threads, by where the threads ran: per build, interval and
    CPU threads, the pinned runs and the unpinned runs of each placement regime apart (never one
    median), each run's cost in switch intervals ``(1/RPS - 1/RPS alone) / interval`` against the
    median of the same placement's runs alone, the median over runs with its 95% interval."""
    rows = []
    for placement, part in (("pinned", pinned(df)), ("os", unpinned(df))):
        part = part[part["cpu_processes"] == 0]
        for (cond, si), g in part.groupby(["condition", "switch_interval"]):
            alone = per_run(g[g["cpu_threads"] == 0])
            if not len(alone):
                continue
            rps0 = float(alone.median())
            busy = g[g["cpu_threads"] > 0]
            if not len(busy):
                continue
            runs = busy.groupby(["cpu_threads", "run_id", "repeat"]).agg(
                rps=("rps", "median"),
                regime=("placement_regime", "first") if "placement_regime" in busy else ("rps", lambda x: None),
                ivcsw=("handler_ctx_involuntary", "first"))
            runs["regime"] = runs["regime"].fillna("not read") if placement == "os" else "pinned"
            for (n, regime), r in runs.groupby([runs.index.get_level_values(0), "regime"]):
                cost = [request_cost(x, rps0, float(si)) for x in r["rps"]]
                sm = stats.summarize(cost, lower_is_better=True)
                rows.append({"condition": cond, "switch_interval": float(si), "cpu_threads": int(n),
                             "placement": regime, "runs": sm["n"], "cost": sm["median"], "ci_lo": sm["ci_lo"],
                             "ci_hi": sm["ci_hi"], "weak": not stats.conclusive(stats.MEDIAN, sm["n"]),
                             "rps": float(r["rps"].median()),
                             "handler_involuntary": float(r["ivcsw"].median()) if r["ivcsw"].notna().any() else math.nan})
    out = pd.DataFrame(rows, columns=["condition", "switch_interval", "cpu_threads", "placement", "runs", "cost",
                                      "ci_lo", "ci_hi", "weak", "rps", "handler_involuntary"])
    order = {k: i for i, k in enumerate(REGIME_ORDER)}
    return out.sort_values(["condition", "cpu_threads", "switch_interval", "placement"],
                           key=lambda c: c.map(order) if c.name == "placement" else c,
                           ascending=[True, True, False, True]).reset_index(drop=True)


def placement_table(df: pd.DataFrame) -> pd.DataFrame:
    """:func:`cost_by_placement` for a reader: the judged intervals (0.1 s to 1 ms), one and two
    CPU threads."""
    c = cost_by_placement(df)
    c = c[c["switch_interval"] >= 0.001]
    return pd.DataFrame({
        "build": c["condition"], "interval (s)": c["switch_interval"].map(lambda x: f"{x:g}"),
        "CPU threads": c["cpu_threads"], "placement": c["placement"], "runs": c["runs"],
        "median RPS": c["rps"].map(lambda x: f"{x:,.0f}"),
        "a request costs (intervals, 95%)": [median_text(r.cost, r.ci_lo, r.ci_hi, r.runs) for r in c.itertuples()],
        "handler's involuntary switches (median)": c["handler_involuntary"].map(
            lambda x: "-" if x != x else f"{x:,.0f}")})


def _rate_row(claim_id, claim, measured, table, published_as, note=""):
    from ..judge import claims as published_claims

    return {"experiment": "convoy", "table": table, "claim_id": claim_id, "claim": claim,
            "band": published_claims.band(claim_id), "published": published_claims.value(claim_id),
            "unit": published_claims.get(claim_id)["unit"], "published_as": published_as,
            "measured": measured, "note": note}


def _measured_rate(g: pd.DataFrame, claim_id: str) -> dict:
    from ..judge import claims as published_claims

    s = stats.summarize(per_run(g), lower_is_better=False)      # n: runs
    return published_claims.judged(claim_id, s["median"], s, best=s["best"], note="")


def claims(df: pd.DataFrame) -> list[dict]:
    from ..judge import claims as published_claims

    # the document's rates and conclusions: where the OS put the threads, as in its own runs; its
    # mechanism: pinned, the setting it describes (the CPU thread on a core of its own)
    every, df = df, unpinned(df)
    out = []
    conds = sorted(df["condition"].unique())
    names = {0: "no", 1: "one", 2: "two", 4: "four"}
    for _, row in published().iterrows():
        si, n = float(row["switch_interval_s"]), int(row["cpu_bound_threads"])
        cid = f"convoy/si={si:g}/cpu_threads={n}"
        measured = {}
        for cond in conds:
            g = df[(df["condition"] == cond) & np.isclose(df["switch_interval"], si)
                   & (df["cpu_threads"] == n) & (df["cpu_processes"] == 0)]
            if len(g):
                measured[cond] = _measured_rate(g, cid)
        out.append(_rate_row(cid,
                             f"echo RPS, switch interval {si:g} s, {names.get(n, n)} CPU thread{'s' if n != 1 else ''}",
                             measured, "pbts13_t3_echo_rps_vs_switch_interval",
                             f"{row['rps_as_published']} RPS (CPython 3.9, client on the same machine)"))
    # the in-text numbers the document states about the echo server (rows whose role is "claim";
    # the derived microseconds restate the rates and are context); all at the default 5 ms
    inline = inline_published()
    picks = (("convoy/inline/no_cpu_thread", "echo server, no CPU-bound thread", 0, 0, "with no CPU-bound thread"),
             ("convoy/inline/one_cpu_thread", "echo server + 1 CPU-bound thread", 1, 0, "with one CPU-bound thread"),
             ("convoy/inline/one_cpu_process", "echo server + 1 CPU-bound process", 0, 1,
              "with one CPU-bound process instead"))
    for claim_id, scenario, n, m, words in picks:
        row = inline_row(inline, scenario)
        measured = {}
        for cond in conds:
            g = df[(df["condition"] == cond) & np.isclose(df["switch_interval"], 0.005)
                   & (df["cpu_threads"] == n) & (df["cpu_processes"] == m)]
            if len(g):
                measured[cond] = _measured_rate(g, claim_id)
        out.append(_rate_row(claim_id, f"echo RPS {words}, default 5 ms interval (in the text)",
                             measured, "pbts13_t6_echo_inline_numbers",
                             f"{row['value']} {row['unit']} ({row['exactness']})"))
    # "if we start two, three, or four CPU-bound processes, the RPS stays about the same": each
    # count of processes against one, never pooled
    measured = {}
    for cond in conds:
        g = df[(df["condition"] == cond) & (df["cpu_threads"] == 0) & np.isclose(df["switch_interval"], 0.005)]
        one = per_run(g[g["cpu_processes"] == 1])
        for k in sorted(x for x in g["cpu_processes"].unique() if x >= 2):
            more = per_run(g[g["cpu_processes"] == k])
            if len(one) and len(more):
                r = published_claims.round_ratio(more, one)      # paired by round where the runs allow
                measured[f"{cond} ({k} processes)"] = published_claims.judged(
                    "convoy/inline/more_cpu_processes", r["ratio"], r, note=r["note"])
    out.append(_rate_row("convoy/inline/more_cpu_processes", "RPS with k = 2-4 CPU processes / RPS with 1 (in text: "
                         "stays about the same)", measured, "pbts13_t6_echo_inline_numbers",
                         "\"the RPS stays about the same\""))
    return out + _mechanism_rows(pinned(every))


def _mechanism_rows(held: pd.DataFrame) -> list[dict]:
    """The mechanism's rows, read on the pinned runs ``held``: the waits a request made (each
    recv() and send() one switch interval per CPU thread ahead, in the model; a machine row) and
    what one lost race cost (the GIL's part, judged)."""
    from ..judge import claims as published_claims

    names = {1: "one", 2: "two"}
    out = []
    for (si, n), cid in mechanism_cells().items():
        measured = {}
        for cond in sorted(held["condition"].unique()):
            r = waits_interval(held, cond, si, n)
            if r["n"]:
                measured[cond] = published_claims.judged(cid, r["ratio"], r, note="")
        out.append(_rate_row(cid, f"GIL waits per request in switch intervals, {si:g} s, {names.get(n, n)} CPU "
                             f"thread{'s' if n != 1 else ''}, pinned: (1/RPS - 1/RPS alone) / interval, per round",
                             measured, "claims",
                             f"the model: {2 * n} (one interval for recv and one for send, per CPU thread)"))
    # the GIL's part of it: what one lost race costs, whatever the machine made of the race
    for si, cid in gil_wait_cells().items():
        measured = {}
        for cond in sorted(held["condition"].unique()):
            r = stats.paired_median(wait_by_round(held, cond, si).values())
            if r["n"]:
                measured[cond] = published_claims.judged(cid, r["ratio"], r, note="")
        out.append(_rate_row(cid, f"switch intervals one lost race costs, {si:g} s, one CPU thread, pinned: the "
                             "waits a request made over the races it lost (the GIL's hand-offs a request / 2), "
                             "per round", measured, "claims", "the document's: 5 ms, one interval, for each wait"))
    return out


def side_by_side(df: pd.DataFrame) -> pd.DataFrame:
    """The document's table in long form: one line per cell, its RPS and ours per condition."""
    s = _threads_rows(summary(df))
    pub = published()
    rows = []
    for si in sorted(pub["switch_interval_s"].unique(), reverse=True):
        for n in sorted(pub["cpu_bound_threads"].unique()):
            p = pub[(pub["switch_interval_s"] == si) & (pub["cpu_bound_threads"] == n)]["rps"]
            line = {"switch interval (s)": f"{si:g}", "CPU threads": n,
                    "document RPS": f"{p.iloc[0]:,.0f}" if len(p) else "-"}
            for cond in sorted(s["condition"].unique()):
                m = s[(s["condition"] == cond) & np.isclose(s["switch_interval"], si) & (s["cpu_threads"] == n)]
                r = m.iloc[0] if len(m) else None     # fewer runs than a 95% interval needs: said so
                line[f"{cond}: median [interval]"] = (
                    estimate_over_runs(round(r["rps_median"]), round(r["rps_ci_lo"]), round(r["rps_ci_hi"]), r["runs"])
                    if r is not None else "not measured")
            rows.append(line)
    return pd.DataFrame(rows)


def findings(df: pd.DataFrame) -> str:
    s = summary(df)
    lines = []
    for cond in sorted(s["condition"].unique()):
        g = _threads_rows(s[s["condition"] == cond])
        at5 = g[np.isclose(g["switch_interval"], 0.005)].set_index("cpu_threads")
        if 0 in at5.index and 1 in at5.index:
            r0, r1 = at5.at[0, "rps_median"], at5.at[1, "rps_median"]
            drop = r0 / r1 if r1 else math.inf
            b0, b1 = (stats.bracket(at5.at[k, "rps_ci_lo"], at5.at[k, "rps_ci_hi"], int(at5.at[k, "runs"]), spec=",.0f")
                      for k in (0, 1))
            apart = not at5.at[0, "rps_weak"] and not at5.at[1, "rps_weak"] and (
                at5.at[1, "rps_ci_hi"] < at5.at[0, "rps_ci_lo"] or at5.at[1, "rps_ci_lo"] > at5.at[0, "rps_ci_hi"])
            lines.append(
                f"- **{cond}** at 5 ms: {r0:,.0f} RPS alone {b0}, "
                f"{r1:,.0f} RPS with one CPU thread {b1}: "
                + ((f"{drop:,.0f}x fewer" if drop >= 1 else f"{1 / drop:,.1f}x more") if apart else
                   "the intervals do not show by how much they differ (they overlap, or there are too few runs)")
                + f"; the handler thread made {at5.at[1, 'handler_vcsw_per_request']:.2f} voluntary "
                f"context switches per request (alone: {at5.at[0, 'handler_vcsw_per_request']:.2f}); the client used "
                f"{at5.at[0, 'client_cpu_share']:.0%} of a core when alone.")
        procs = s[(s["condition"] == cond) & (s["cpu_processes"] > 0)]
        if len(procs):
            lines.append("  With the CPU work in processes instead: " + ", ".join(
                f"{int(r.cpu_processes)} process{'es' if r.cpu_processes > 1 else ''} {r.rps_median:,.0f} RPS"
                for r in procs.itertuples()) + ".")
    return "\n".join(lines)


# "at every point it used under 90% of one core": the number the words state (a share of a core,
# no word of the documents)
CLIENT_SHARE_LINE = 0.9


def prose(df: pd.DataFrame) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``; their words are
    the chapter's text's (``notebooks/03_convoy.md``), the code computes and chooses.  A sentence
    that says what a claim says reads the claim's line (claims.csv): the convoy's fall is
    convoy/conclusion/collapse_direction's bound, the document's rate alone
    convoy/inline/no_cpu_thread's printed number, the waits per request the mechanism rows' "about
    two"; one in the documents' words reads the word's line (lexicon.csv): "worse", "fewer" and
    "more" a change, "about one" one in words, "by half" two in words; a number in the words is
    the number checked."""
    from ..judge import claims as published_claims
    from ..judge import lexicon
    from ..judge.prose import measured

    said = chapter_words("convoy")     # the words cell of its text
    fall, rise = lexicon.falls("a change"), lexicon.rises("a change")   # "fewer", "worse"; "more"

    s = summary(df)
    at5 = s[np.isclose(s["switch_interval"], 0.005)]
    thr = _threads_rows(at5)

    def rate(cond, threads=0, procs=0, si=0.005):
        g = s[(s["condition"] == cond) & np.isclose(s["switch_interval"], si) & (s["cpu_threads"] == threads)
              & (s["cpu_processes"] == procs)]
        return float(g["rps_median"].iloc[0]) if len(g) else math.nan

    def alone_to_one(pairs):
        return "; ".join(said.fill("build-alone-to-one", build=c, alone=f"{a:,.0f}", one=f"{b:,.0f}")
                         for c, (a, b) in pairs.items())

    on = sorted(c for c, g in thr.groupby("condition") if g["gil_enabled"].all())
    # the stock GIL builds; a free-threaded binary with its GIL turned on carries that build's costs,
    # and is shown beside them
    twin_ids = published_claims.twins()
    gil = [c for c in on if c not in twin_ids]
    twins = [c for c in on if c in twin_ids]
    free = sorted(c for c, g in thr.groupby("condition") if not g["gil_enabled"].any())
    out = []
    if gil:
        pairs = {c: (rate(c), rate(c, 1)) for c in gil}
        beside = alone_to_one({c: (rate(c), rate(c, 1)) for c in twins})
        # thousands to hundreds, as the words say, and by the document's bound: at most a tenth
        # (convoy/conclusion/collapse_direction's line), not any drop across 1,000
        _, tenth = published_claims.line("convoy/conclusion/collapse_direction")
        out.append(said.check(
            "gil-builds-show-the-convoy",
            {"holds": all(a >= 1000 and b < 1000 and b <= tenth * a for a, b in pairs.values())},
            said.fill("alone-to-one-thread-beside-twins", rates=alone_to_one(pairs), twins=beside) if beside
            else said.fill("alone-to-one-thread", rates=alone_to_one(pairs)), tenth=f"{tenth:g}"))
        lo, hi = min(s["switch_interval"]), max(s["switch_interval"])
        ends = measured({c: (rate(c, 1, si=hi), rate(c, 1, si=lo)) for c in gil})   # builds measured at both
        out.append(said.check(
            "longer-interval-makes-it-worse", {"holds": bool(ends) and all(a <= fall * b for a, b in ends.values())},
            said.fill("rps-at-both-ends-evidence", fall=f"{fall:g}", rates="; ".join(
                said.fill("build-rps-at-both-ends", build=c, longest=f"{a:,.0f}", shortest=f"{b:,.0f}")
                for c, (a, b) in ends.items())),
            longest=f"{hi:g}", shortest=f"{lo:g}"))
        out += _placement_checks(df, gil, said)
    out += _mechanism_checks(df, on, said)
    if free:
        out += _free_threaded_checks(df, s, free, rate, said)
    out.append(_rate_alone_check(at5, rate, said))
    proc = {c: (rate(c), rate(c, 0, 1)) for c in sorted(at5["condition"].unique()) if not math.isnan(rate(c, 0, 1))}
    if proc:
        out.append(said.check(
            "one-process-beside-answers-more", {"holds": all(b >= rise * a for a, b in proc.values())},
            said.fill("alone-to-one-process", rates=alone_to_one(proc), rise=f"{rise:g}"),
            why=said["why-a-process-beside-helps"]))
    share = float(s["client_cpu_share"].max())
    out.append(said.check("client-is-not-the-bottleneck", {"holds": share < CLIENT_SHARE_LINE},
                          said.fill("client-share-evidence", share=f"{share:.0%}"), line=f"{CLIENT_SHARE_LINE:.0%}"))
    return out


def _free_threaded_checks(df: pd.DataFrame, s: pd.DataFrame, free: list[str], rate, said) -> list:
    """The builds without a GIL: no convoy at 5 ms next to one CPU thread ("no fewer requests than
    alone": not the fall a change is, at least lexicon.falls("a change") of the rate alone), and how
    their rate swings with more CPU threads than cores ("by half or more": two in words, from its
    lower edge, 2 x (1 - its band)) (``rate``, ``said``: :func:`prose`'s)."""
    from ..judge import lexicon

    fall = lexicon.falls("a change")
    halves = 2 * (1 - lexicon.about("two, in words"))

    def runs(cond, threads=0):
        g = s[(s["condition"] == cond) & np.isclose(s["switch_interval"], 0.005) & (s["cpu_threads"] == threads)
              & (s["cpu_processes"] == 0)]
        return int(g["runs"].iloc[0]) if len(g) else 0

    pairs = {c: (rate(c), rate(c, 1)) for c in free}
    fewest = {c: min(runs(c), runs(c, 1)) for c in free}
    enough = all(stats.conclusive(stats.MEDIAN, n) for n in fewest.values())
    more = all(b >= fall * a for a, b in pairs.values())
    rates = "; ".join(
        said.fill("build-alone-to-one", build=c, alone=f"{a:,.0f}", one=f"{b:,.0f}")
        if stats.conclusive(stats.MEDIAN, fewest[c]) else
        said.fill("build-alone-to-one-too-few", build=c, alone=f"{a:,.0f}", one=f"{b:,.0f}", n=fewest[c])
        for c, (a, b) in pairs.items())
    out = [said.check("free-threaded-has-no-convoy", {"holds": enough and more, "open": not enough and more},
                      said.fill("alone-to-one-thread-no-fewer", rates=rates, fall=f"{fall:g}"),
                      why=said["why-no-gil-no-convoy"])]
    d = unpinned(df)
    busy = d[d["condition"].isin(free) & (d["cpu_threads"] >= 2) & (d["cpu_processes"] == 0)]
    spread = busy.groupby(["condition", "switch_interval", "cpu_threads"])["rps"].agg(["min", "max"])
    spread = spread[spread["min"] > 0]
    if len(spread):
        worst = (spread["max"] / spread["min"]).idxmax()
        lo_w, hi_w = spread.loc[worst, "min"], spread.loc[worst, "max"]
        out.append(said.check(
            "free-threaded-rate-swings", {"holds": hi_w >= halves * lo_w},
            said.fill("widest-swing-evidence", build=worst[0], interval=f"{worst[1]:g}", threads=int(worst[2]),
                      lowest=f"{lo_w:,.0f}", highest=f"{hi_w:,.0f}", halves=f"{halves:g}"),
            why=said["why-the-os-placement-decides"]))
    return out


def _rate_alone_check(at5: pd.DataFrame, rate, said):
    """The document's rate alone beside ours: a number of each machine, never judged; the sentence
    says on which side of it every build is, where its whole interval lies outside the line of the
    claim that reads that number (convoy/inline/no_cpu_thread: the printed number's band)."""
    from ..judge import claims as published_claims

    pub_alone = float(inline_row(inline_published(), "echo server, no CPU-bound thread")["value"])
    low, high = published_claims.line("convoy/inline/no_cpu_thread", published=pub_alone)
    alone = {c: rate(c) for c in sorted(at5["condition"].unique())}
    row0 = {c: at5[(at5["condition"] == c) & (at5["cpu_threads"] == 0) & (at5["cpu_processes"] == 0)]
            for c in alone}
    iv = {c: (float(g["rps_ci_lo"].iloc[0]), float(g["rps_ci_hi"].iloc[0]), int(g["runs"].iloc[0]))
          for c, g in row0.items() if len(g)}
    # which side of the document's number each build is on: only where its whole interval lies
    # outside the claim's line, as the claim's verdict reads it (lower / higher)
    fewer = bool(iv) and all(hi < low and stats.conclusive(stats.MEDIAN, n) for _, hi, n in iv.values())
    more = bool(iv) and all(lo > high and stats.conclusive(stats.MEDIAN, n) for lo, _, n in iv.values())
    side = said["alone-fewer"] if fewer else said["alone-more"] if more else said["alone-either-side"]
    rates = "; ".join(said.fill("build-rps-interval", build=c, rps=f"{v:,.0f}",
                                interval=stats.bracket(*iv[c][:2], iv[c][2], spec=",.0f") if c in iv else "")
                      for c, v in alone.items())
    return said.check("documents-rate-alone-is-its-machines", {"holds": True},
                      said.fill("rates-alone-evidence", rates=rates, low=f"{low:,.0f}", high=f"{high:,.0f}"),
                      rps=f"{pub_alone:,.0f}", side=side)


def _placement_checks(df: pd.DataFrame, gil: list[str], said) -> list:
    """Where the threads ran, at 5 ms next to one CPU thread, for the stock GIL builds: each
    placement's cost per request apart; the sentence says whether two of them differ (their 95%
    intervals apart) or are not shown to (every pair's intervals overlap: not "about the same",
    which no ratio of placements here is read to say), as the runs show."""
    c = cost_by_placement(df)
    c = c[c["condition"].isin(gil) & np.isclose(c["switch_interval"], 0.005) & (c["cpu_threads"] == 1) & ~c["weak"]]
    if c["placement"].nunique() < 2:
        return []
    apart = []
    for cond, g in c.groupby("condition"):
        rows = list(g.itertuples())
        apart += [(cond, x.placement, y.placement) for i, x in enumerate(rows) for y in rows[i + 1:]
                  if x.ci_hi < y.ci_lo or y.ci_hi < x.ci_lo]
    evidence = said.fill("cost-per-request-evidence", costs="; ".join(
        said.fill("build-placement-cost", build=r.condition, placement=r.placement, cost=f"{r.cost:.2f}",
                  lo=f"{r.ci_lo:.2f}", hi=f"{r.ci_hi:.2f}", runs=r.runs) for r in c.itertuples()))
    if apart:
        return [said.check("where-threads-ran-decides-the-cost", {"holds": True}, evidence,
                           why=said["why-the-os-placement-decides"])]
    return [said.check("placements-cost-about-the-same", {"holds": True}, evidence)]


def _mechanism_checks(df: pd.DataFrame, gil: list[str], said) -> list:
    """What the judged mechanism cells show (pinned, the document's setting), for CPython's new GIL
    and, apart, the nogil fork's GIL mode (another implementation); ``said``: the chapter's words
    (:func:`prose`'s).  The sentence is the one of three the medians support: about one interval
    per request (one in words, lexicon.csv: 1 +- its band), about two (the model's: each judged
    cell's claim line, claims.csv), or between; the nogil fork's "more than the model's two" is
    above the upper end of its cells' lines."""
    from ..judge import claims as published_claims
    from ..judge import lexicon

    w = waits_summary(df)
    w = w[w["judged"] & w["condition"].isin(gil)]
    one = w[w["cpu_threads"] == 1]
    ok = df[df["status"] == "ok"] if "status" in df else df
    forks = set(ok.loc[ok["nogil_fork"].fillna(False).astype(bool), "condition"]) if "nogil_fork" in ok else set()
    # stock CPython: a free-threaded binary with its GIL turned on carries that build's costs
    cpython = one[~one["condition"].isin(forks | published_claims.twins())]
    cells = mechanism_cells()
    lines = {(r.switch_interval, r.cpu_threads): published_claims.line(cells[(r.switch_interval, r.cpu_threads)])
             for r in one.itertuples()}       # "about two": each judged cell's claim line
    band = lexicon.about("one, in words")     # "about one": 1 +- one in words' band
    one_low, one_high = 1 - band, 1 + band
    out = []
    if len(cpython):
        lo, hi = float(cpython["waits"].min()), float(cpython["waits"].max())
        listing = said.fill("waits-per-request-evidence", waits="; ".join(
            said.fill("build-at-interval-waits", build=r.condition, interval=f"{r.switch_interval:g}",
                      waits=f"{r.waits:.2f}", lo=f"{r.ci_lo:.2f}", hi=f"{r.ci_hi:.2f}") for r in cpython.itertuples()))
        two = [lines[(r.switch_interval, r.cpu_threads)] for r in cpython.itertuples()]
        # the why (the handler keeps the GIL after send(), and only the wait after recv() remains)
        # is a statement about the race: said only where the server's count shows about one race
        # lost a request (one in words) at every cell, never from the rates alone
        races = cpython["races_lost"] if "races_lost" in cpython else pd.Series(dtype=float)
        one_race = bool(len(races)) and races.notna().all() and races.between(one_low, one_high).all()
        if one_low <= lo and hi <= one_high:
            out.append(said.check("mechanism-one-wait-per-request", {"holds": True}, listing,
                                  why=said["why-one-wait-not-two"] if one_race else "",
                                  low=f"{one_low:g}", high=f"{one_high:g}"))
        elif all(a <= r.waits <= b for r, (a, b) in zip(cpython.itertuples(), two)):
            out.append(said.check("mechanism-two-waits-per-request", {"holds": True}, listing,
                                  low=f"{min(a for a, _ in two):g}", high=f"{max(b for _, b in two):g}"))
        else:
            out.append(said.check("mechanism-waits-vary", {"holds": True}, listing,
                                  why=said["why-handler-often-keeps-the-gil"] if one_race else "",
                                  lowest=f"{lo:.2f}", highest=f"{hi:.2f}"))
    out += _gil_wait_checks(one[~one["condition"].isin(forks | published_claims.twins())], said)
    fork = one[one["condition"].isin(forks)]
    if len(fork):
        from ..judge.prose import at_least, listed, together

        waits = {said.fill("build-at-interval", build=r.condition, interval=f"{r.switch_interval:g}"):
                 ({"median": r.waits, "ci_lo": r.ci_lo, "ci_hi": r.ci_hi, "n": int(r.rounds), "method": stats.PAIRED},
                  lines[(r.switch_interval, r.cpu_threads)][1])
                 for r in fork.itertuples()}
        # more than the model's two: above the upper end of each cell's "about two" line
        out.append(said.check(
            "nogil-fork-waits-more-than-two", together(*(at_least([m], top) for m, top in waits.values())),
            listed(said.fill("fork-waits-evidence", high=f"{max(top for _, top in waits.values()):g}"),
                   [(k, m) for k, (m, _) in waits.items()])))
    return out


def _gil_wait_checks(cpython: pd.DataFrame, said) -> list:
    """The request's waits split in two on the judged cells (pinned, one CPU thread, stock
    CPython): what one lost race cost, checked at its claim's line (convoy/gil_wait/..., 1 +- 0.1
    of an interval: the document's '5 ms ... each'), beside the races a request lost, the machine's
    number, shown and never checked against a line.  ``cpython``: :func:`waits_summary`'s rows."""
    from ..judge import claims as published_claims
    from ..judge.prose import at_least, listed, together, within

    has = cpython[cpython["a_race_costs"].notna()] if "a_race_costs" in cpython else cpython.iloc[0:0]
    if has.empty:
        return []
    cells = gil_wait_cells()
    has = has[[round(x, 9) in {round(k, 9) for k in cells} for x in has["switch_interval"]]]
    if has.empty:
        return []

    def m(r, what, lo, hi, n):
        return {"median": getattr(r, what), "ci_lo": getattr(r, lo), "ci_hi": getattr(r, hi), "n": int(getattr(r, n)),
                "method": stats.PAIRED}

    label = {r.Index: said.fill("build-at-interval", build=r.condition, interval=f"{r.switch_interval:g}")
             for r in has.itertuples()}
    costs = {label[r.Index]: m(r, "a_race_costs", "race_cost_lo", "race_cost_hi", "race_rounds")
             for r in has.itertuples()}
    races = {label[r.Index]: m(r, "races_lost", "races_lo", "races_hi", "race_rounds") for r in has.itertuples()}
    low, high = published_claims.line(next(iter(cells.values())))
    lines = {published_claims.line(c) for c in cells.values()}
    if len(lines) != 1:
        raise ValueError(f"claims.csv: the convoy/gil_wait rows read one line, got {sorted(lines)}")
    evidence = (listed(said.fill("race-cost-evidence"), costs.items()) + "; "
                + listed(said.fill("races-lost-evidence"), races.items()))
    # a cell whose whole interval lies above the line: the race cost more than the interval there.
    # Where every such cell is at a shorter interval than every other cell, the sentence says so,
    # at the same line (the other cells still read it); else the document's one interval everywhere
    cells = [(float(r.switch_interval), costs[label[r.Index]], r.race_cost_lo > high) for r in has.itertuples()]
    above = sorted({si for si, _, up in cells if up})
    rest = sorted({si for si, _, _ in cells} - set(above))
    if above and rest and max(above) < min(rest):
        short = [m for si, m, _ in cells if si in above]
        long_ = [m for si, m, _ in cells if si not in above]
        return [said.check("a-lost-race-costs-more-at-short-intervals",
                           together(within(long_, low, high), at_least(short, high)), evidence,
                           why=said["why-a-race-also-waits-for-a-wake-up"], low=f"{low:g}", high=f"{high:g}",
                           longer=", ".join(f"{x:g} s" for x in rest), shorter=", ".join(f"{x:g} s" for x in above))]
    return [said.check("a-lost-race-costs-one-interval", within(costs.values(), low, high), evidence,
                       why=said["why-the-race-is-the-machines"], low=f"{low:g}", high=f"{high:g}")]


# -- figures ------------------------------------------------------------------------------------
def figure(df: pd.DataFrame):
    """RPS against switch interval, one panel per condition, one line per CPU-thread count,
    with the document's values and its model (1 CPU thread)."""
    from ..present import plots

    pub = published()

    def doc(n):
        p = pub[pub["cpu_bound_threads"] == n].sort_values("switch_interval_s")
        return p["switch_interval_s"], p["rps"].clip(lower=0.5)

    fig, axes, panels = plots.lines_per_level(
        _threads_rows(summary(df)), "cpu_threads", ("rps_median", "rps_ci_lo", "rps_ci_hi"),
        lambda n: f"{n} CPU thread{'s' if n != 1 else ''}", doc, height=3.6, weak="rps_weak",
        documented=lambda g: bool(g["gil_enabled"].all()))   # the document's numbers are of GIL builds
    for ax, cond, g in panels:
        alone = g[(g["cpu_threads"] == 0)]
        gil_on = bool(g["gil_enabled"].all())
        if len(alone) and gil_on:       # nor its model
            rps0 = float(alone["rps_median"].median())
            xs = np.logspace(-6, -1, 50)
            ax.plot(xs, model_rps(rps0, xs, 1), color="black", linestyle="--", linewidth=1,
                    label="document's model, 1 CPU thread: 1/(t0 + 2 x interval)")
            ax.plot(xs, model_rps(rps0, xs / 2, 1), color="0.4", linestyle=":", linewidth=1,
                    label="one wait per request: 1/(t0 + interval)")
        ax.set_title(f"{cond} (GIL on)\ndots = ours (median, interval), open diamonds = document" if gil_on else
                     f"{cond} (GIL off)\ndots = ours (median, interval); no document values here",
                     fontsize=9)
        ax.set_yscale("symlog", linthresh=1)
        ax.set_ylabel("requests / second")
        ax.legend(fontsize=8.5, loc="center left", bbox_to_anchor=(1.01, 0.5))   # beside: it covers no point
    axes[-1, 0].set_xlabel("switch interval (s), sys.setswitchinterval")
    fig.tight_layout()
    return fig


def mechanism_figure(df: pd.DataFrame):
    """The document's mechanism: GIL waits per request in switch intervals against the interval,
    one panel per number of CPU threads, one colour per GIL build (median over rounds with its
    interval; filled: pinned, the document's setting; hollow: where the OS put the threads), the
    model's 2n as a line, the document's table read the same way as open diamonds; the cells
    claims.csv judges (pinned) are shaded, the others are context."""
    import matplotlib.pyplot as plt

    from ..present import plots
    from ..judge.prose import gil_by_condition

    w = waits_summary(df)
    gil = w[w["condition"].isin([c for c, on in gil_by_condition(df).items() if on])]
    pub = publishedrequest_cost()
    levels = sorted(gil["cpu_threads"].unique()) or [1]
    pal = plots.palette(w["condition"].unique())
    # one panel a row, at the page's width (8 in at 100 dpi: every text at least 10 px as shown)
    fig, axes = plt.subplots(len(levels), 1, figsize=(8, 3.4 * len(levels)), squeeze=False, sharex=True)
    judged = mechanism_cells()
    for ax, n in zip(axes[:, 0], levels):
        for (si, k) in judged:
            if k == n:
                ax.axvspan(si / 1.4, si * 1.4, color="0.92", zorder=0)
        ax.axhline(2 * n, color="black", linestyle="--", linewidth=1, label=f"document's model: {2 * n}")
        p = pub[(pub["cpu_threads"] == n) & (pub["published"] > 0)]
        ax.plot(p["switch_interval"], p["published"], "D", mfc="none", color="0.3", label="document's table")
        conds = sorted(gil["condition"].unique())
        for i, cond in enumerate(conds):
            for placement, mfc, shift in (("pinned", None, 0.0), ("os", "none", 0.5)):
                g = gil[(gil["condition"] == cond) & (gil["cpu_threads"] == n) & (gil["placement"] == placement)]
                g = g.sort_values("switch_interval")
                g = g[g["waits"] > 0]
                if not len(g):
                    continue
                x = g["switch_interval"] * 1.08 ** (2 * i + shift - (len(conds) - 1))     # dodge on the log axis
                _, _, bars = ax.errorbar(x, g["waits"], yerr=[g["waits"] - g["ci_lo"].clip(lower=1e-3),
                                                              g["ci_hi"] - g["waits"]],
                                         fmt="o", color=pal[cond], mfc=mfc or pal[cond], capsize=3,
                                         label=f"{cond}, {'pinned' if placement == 'pinned' else 'unpinned (OS)'}")
                plots.mark_weak(ax, bars, list(g["weak"]))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{n} CPU thread{'s' if n != 1 else ''}: shaded = the model's cells (pinned)", fontsize=10)
        ax.legend(fontsize=8.5, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        ax.set_ylabel("GIL waits / request\n(intervals)")
    axes[-1, 0].set_xlabel("switch interval (s)")
    fig.tight_layout()
    return fig


PLACEMENT_COLOURS = {"pinned": "#1b7837", "handler apart from the CPU threads": "#5aae61",
                     "handler beside a CPU thread": "#c2410c", "handler moving between the two": "#7b3294",
                     "not read": "0.55"}


def placement_figure(df: pd.DataFrame):
    """What a request costs next to one CPU thread, by where the threads ran: one panel per GIL
    build, the cost in switch intervals against the interval (median over runs with its 95%
    interval; hollow where too few runs), one colour per placement: pinned (the document's
    setting) and each regime of the unpinned runs, never pooled; the model's 2 as a line."""
    import matplotlib.pyplot as plt

    from ..present import plots
    from ..judge.prose import gil_by_condition

    c = cost_by_placement(df)
    on = [k for k, v in gil_by_condition(df).items() if v]
    c = c[c["condition"].isin(on) & (c["cpu_threads"] == 1) & (c["switch_interval"] >= 0.001)]
    conds = sorted(c["condition"].unique())
    if not conds:
        return None
    cols = min(2, len(conds))
    rows = -(-len(conds) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.0 * cols, 3.4 * rows), squeeze=False, sharex=True, sharey=True)
    placements = [k for k in REGIME_ORDER if k in set(c["placement"])]
    for ax, cond in zip(axes.flat, conds):
        ax.axhline(2, color="black", linestyle="--", linewidth=1, label="document's model: 2")
        ax.axhline(1, color="0.5", linestyle=":", linewidth=1, label="one wait per request")
        for j, placement in enumerate(placements):
            g = c[(c["condition"] == cond) & (c["placement"] == placement)].sort_values("switch_interval")
            g = g[g["cost"] > 0]
            if not len(g):
                continue
            x = g["switch_interval"] * 1.1 ** (j - (len(placements) - 1) / 2)
            colour = PLACEMENT_COLOURS.get(placement, "0.3")
            _, _, bars = ax.errorbar(x, g["cost"], yerr=[g["cost"] - g["ci_lo"].clip(lower=1e-3), g["ci_hi"] - g["cost"]],
                                     fmt="o", color=colour, capsize=3, label=placement)
            plots.mark_weak(ax, bars, list(g["weak"]))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(5e-4, 0.2)          # every panel the same intervals, measured there or not
        ax.set_xlabel("switch interval (s)")
        ax.set_title(f"{cond}: one CPU thread", fontsize=10)
    for ax in axes.flat[len(conds):]:
        ax.set_visible(False)
    axes[0, 0].set_ylabel("a request costs (intervals)")
    handles = {}
    for ax in axes.flat:
        for h, n in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(n, h)
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=3, fontsize=8.5, frameon=False)
    fig.tight_layout(rect=(0, 0.08 + 0.04 * (len(handles) > 3), 1, 1))
    return fig


def explain_figure(df: pd.DataFrame):
    """What explains the curve: the handler's context switches per request, and the client's
    CPU share (near 100% means the client, not the server, sets the rate)."""
    import matplotlib.pyplot as plt

    from ..present import plots

    s = _threads_rows(summary(df))
    pal = plots.palette(s["condition"].unique())
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3.6))
    for cond, g in s.groupby("condition"):
        for n, style in ((0, ":"), (1, "-")):
            h = g[g["cpu_threads"] == n].sort_values("switch_interval")
            a1.plot(h["switch_interval"], h["handler_vcsw_per_request"], style, marker="o", color=pal[cond],
                    label=f"{cond}, {n} CPU thread{'s' if n != 1 else ''}")
            a2.plot(h["switch_interval"], h["client_cpu_share"] * 100, style, marker="o", color=pal[cond])
    for a in (a1, a2):
        a.set_xscale("log")
        a.set_xlabel("switch interval (s)")
    a1.set_ylabel("handler voluntary switches / request")
    a1.set_title("Server handler thread", fontsize=10)
    a2.set_ylabel("client CPU, % of one core")
    a2.set_ylim(0, 105)
    a2.set_title("Client: is it the bottleneck?", fontsize=10)
    a1.legend(fontsize=8.5)
    fig.tight_layout()
    return fig


def processes_figure(df: pd.DataFrame):
    import matplotlib.pyplot as plt

    from ..present import plots

    d = unpinned(df)
    g = d[(d["cpu_threads"] == 0) & np.isclose(d["switch_interval"], 0.005)]
    runs = g.groupby(["condition", "cpu_processes", "run_id", "repeat"], as_index=False)["rps"].median()
    fig, ax = plt.subplots(figsize=(8, 3.6))
    pal = plots.palette(g["condition"].unique())
    plots.median_with_ci(ax, runs, "cpu_processes", "rps", "condition", pal, join=False)   # CI over runs
    inline = inline_published()
    for scenario, style, colour, words in (("echo server + 1 CPU-bound process", "--", "black", "with processes"),
                                           ("echo server, no CPU-bound thread", ":", "0.5", "alone")):
        row = inline_row(inline, scenario)
        ax.axhline(float(row["value"]), color=colour, linestyle=style, linewidth=1,
                   label=f"document: {float(row['value']):,.0f} {words} ({row['exactness']})")
    ax.set_xlabel("CPU-bound processes (0 = server alone), 5 ms interval")
    ax.set_ylabel("requests / second")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8.5)
    ax.set_title("CPU work in separate processes: every window (dots), median and interval", fontsize=10)
    fig.tight_layout()
    return fig


def explorer(df: pd.DataFrame):
    import matplotlib.pyplot as plt

    from ..present import plots, widgets

    d = unpinned(df)
    d = d[d["cpu_processes"] == 0]
    pal = plots.palette(d["condition"].unique())
    conds = sorted(pal)
    ns = sorted(d["cpu_threads"].unique())
    sis = sorted(d["switch_interval"].unique(), reverse=True)
    pub = published()
    s = _threads_rows(summary(df))
    ymax = float(d["rps"].max()) * 1.1

    def draw(n, si):
        fig, ax = plt.subplots(figsize=(7.5, 3.6))
        g = d[(d["cpu_threads"] == n) & np.isclose(d["switch_interval"], si)]
        plots.samples_by_condition(ax, g, "rps", pal)
        p = pub[(pub["cpu_bound_threads"] == n) & np.isclose(pub["switch_interval_s"], si)]["rps"]
        if len(p):
            ax.axhline(float(p.iloc[0]), color="black", linestyle="--", label=f"document: {p.iloc[0]:,.0f}")
        for i, cond in enumerate(conds):
            alone = s[(s["condition"] == cond) & (s["cpu_threads"] == 0)]["rps_median"]
            if n and len(alone):
                m = float(model_rps(float(alone.median()), si, n))
                ax.plot([i - 0.3, i + 0.3], [m, m], color="0.3", linestyle=":",
                        label="model 1/(t0 + 2 n x interval)" if i == 0 else None)
        ax.set_yscale("symlog", linthresh=1)
        ax.set_ylim(0, ymax)
        ax.set_ylabel("requests in each 1-s window")
        ax.set_xlabel("")
        ax.set_title(f"{n} CPU thread{'s' if n != 1 else ''}, switch interval {si:g} s: every window", fontsize=10)
        ax.legend(fontsize=8.5, loc="lower left")
        return fig

    return widgets.stack_explorer(draw, ("CPU threads", ns, [str(n) for n in ns]),
                                  ("switch interval (s)", sis, [f"{x:g}" for x in sis]),
                                  title="Explore every counted window")


# the sentences the book's first screen shows, by their words' keys (notebooks/03_convoy.md)
HEADLINE = ("gil-builds-show-the-convoy",)

ANALYSIS = ModuleAnalysis(__name__, extras=('settings_table', 'explain_figure', 'processes_figure', 'mechanism_figure',
                                            'placement_table', 'placement_figure', 'race_split_table'))
