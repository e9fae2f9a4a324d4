"""How the ccbench chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.ccbench`).

Why it is long: ccbench's three tasks, two policies and the latency and throughput views share
one reading of a run's pings and counts; its figures, claims and sentences read them together."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..judge import claims as published_claims
from ..measure import interpreters
from ..judge import results
from .. import stats
from ..judge.analysis import ModuleAnalysis, frame_cached
from ..judge.prose import words as chapter_words
from ..judge.prose import ok_rows
from ..measure.experiments.ccbench import TASKS


TASK_WORDS = {"pi": "A: digits of pi (pure Python)", "regex": "B: regex (C, holds the GIL)",
              "bz2": "C: bz2 (C, releases the GIL)", "countdown": "a trivial countdown loop"}


TASK_SHORT = {"pi": "A pi", "regex": "B regex", "bz2": "C bz2", "countdown": "loop"}


# -- reading ----------------------------------------------------------------------------------------
def published() -> pd.DataFrame:
    return results.reference("pitrou_2009_claims")


def published_table() -> pd.DataFrame:
    return (published().drop(columns=["source", "old_gil_value", "new_gil_value", "value_note"])
            .rename(columns={"old_gil": "old GIL", "new_gil": "new GIL", "unit_or_note": "unit or note"}))


def _throughput(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["test"] == "throughput"].drop_duplicates(["run_id", "condition", "point", "repeat"])


def _latency(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["test"] == "latency"]


def _tool(df: pd.DataFrame) -> pd.DataFrame:
    """ccbench's own latency protocol: one row per ping, ``oneway_ms`` none where it was never read."""
    return df[df["test"] == "tool"] if "test" in df else df.iloc[0:0]


@frame_cached
def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Throughput: per condition, task, workers and threads, the median speed over runs with its
    CI and relative to one thread.  Latency: per condition, task, threads and policy, over every
    ping of every run: answered share, mean, median (CI), p90, p99 and max one-way time."""
    rows = []
    tp = _throughput(df)
    for (cond, task, workers, n), g in tp.groupby(["condition", "task", "workers", "threads"]):
        s = stats.summarize(g["speed"], lower_is_better=False)
        one = tp[(tp["condition"] == cond) & (tp["task"] == task) & (tp["threads"] == 1)]["speed"]
        if int(n) == 1:     # one thread relative to itself: 1 by definition, not a ratio of two measurements
            r = {"ratio": 1.0, "ci_lo": 1.0, "ci_hi": 1.0}
        else:
            r = stats.ratio_of_medians(g["speed"], one) if len(one) else {"ratio": math.nan, "ci_lo": math.nan,
                                                                           "ci_hi": math.nan}
        rows.append({"test": "throughput", "condition": cond, "task": task, "workers": workers, "threads": int(n),
                     "policy": "default", "median": s["median"], "ci_lo": s["ci_lo"], "ci_hi": s["ci_hi"],
                     "n": s["n"], "relative": r["ratio"], "relative_ci_lo": r["ci_lo"],
                     "relative_ci_hi": r["ci_hi"]})
    pings = pd.concat([_latency(df), _tool(df)])
    for (test, cond, task, n, pol), g in pings.groupby(["test", "condition", "task", "threads", "policy"]):
        ow = g["oneway_ms"].dropna()
        answered = g["rtt_ms" if test == "latency" else "oneway_ms"].notna()
        s = stats.summarize(ow) if len(ow) else {"median": math.nan, "ci_lo": math.nan, "ci_hi": math.nan}
        rows.append({"test": test, "condition": cond, "task": task, "workers": "threads", "threads": int(n),
                     "policy": pol, "median": s["median"], "ci_lo": s["ci_lo"], "ci_hi": s["ci_hi"],
                     "n": int(len(g)), "mean": float(ow.mean()) if len(ow) else math.nan,
                     "p90": float(ow.quantile(0.9)) if len(ow) else math.nan,
                     "p99": float(ow.quantile(0.99)) if len(ow) else math.nan,
                     "max": float(ow.max()) if len(ow) else math.nan,
                     "starved_share": float(1 - answered.mean()), "runs": int(g["run_id"].astype(str).add(
                         g["repeat"].astype(str)).nunique())})
    return pd.DataFrame(rows)


def run_starved(g: pd.DataFrame) -> pd.Series:
    """Per independent run of the latency test, the share of its pings with no answer within the
    bound: the unit a sentence about "does not answer" reads with an interval over runs (the pings
    of one run wait on the same background thread, so they are not independent)."""
    return g.groupby(["run_id", "repeat"])["rtt_ms"].apply(lambda v: float(v.isna().mean()))


def run_means(g: pd.DataFrame) -> pd.Series:
    """ccbench's statistic per independent run: the mean one-way time of the run's answered
    pings (ccbench printed the mean).  A verdict's n counts these runs, never the pings."""
    ok = g[g["oneway_ms"].notna()]
    return ok.groupby(["run_id", "repeat"])["oneway_ms"].mean()


def _claim(claim_id, claim, published_as, measured, note=""):
    """A verdict row: value, unit and band from claims.csv (``{band}`` in the note: the band;
    ``{bound}``: the comparison and its value, e.g. *at least 1.1*)."""
    c = published_claims.get(f"ccbench/{claim_id}")
    band = published_claims.band(c["claim_id"])
    note = note.replace("{band}", f"+-{band:.0%}" if band is not None else "")   # noqa: RUF027 (a template)
    note = note.replace("{bound}", f"{c['comparison']} {c['published']:g}")
    return {"experiment": "ccbench", "table": "pitrou_2009_claims", "claim_id": c["claim_id"],
            "claim": claim, "published": c["published"], "unit": c["unit"], "published_as": published_as,
            "measured": measured, "note": note, "band": band}


def _speeds(g: pd.DataFrame, threads: int) -> pd.Series:
    """The throughput runs of ``g`` (one condition and task) with ``threads`` threads: their speed
    keyed by the interleaved round that measured them (:data:`claims.ROUND`), so that two points'
    runs pair by round."""
    return published_claims.by_round(g[g["threads"] == threads], "speed")


def _thread_ratios(tp: pd.DataFrame, task: str, *, time: bool = False) -> dict[str, tuple[dict, float]]:
    """Per build, its throughput runs of ``task`` with 2 threads against those with 1, paired by
    round (:func:`claims.round_ratio`): the speed with 2 over the speed with 1, or with ``time`` the
    time for the same work with 2 over 1 (the speed with 1 over with 2); each with the ratio of
    the best runs."""
    th = (tp[(tp["task"] == task) & (tp["workers"] == "threads")] if {"task", "workers"} <= set(tp.columns)
          else tp.iloc[0:0])
    out = {}
    for cond, g in th.groupby("condition"):
        one, two = _speeds(g, 1), _speeds(g, 2)
        if len(one) and len(two):
            num, den = (one, two) if time else (two, one)
            out[cond] = (published_claims.round_ratio(num, den), float(num.max() / den.max()))
    return out


def _no_parallelism(tp: pd.DataFrame) -> list[dict]:
    """"There still is a Global Interpreter Lock which serializes access ... Python doesn't become
    really better at extracting computational parallelism out of several cores": per build, the
    speed with 2 threads over 1 (what ccbench prints as a share of one thread's), paired by round,
    for task A (pure Python) and task B (C that holds the GIL); C releases it and is not claimed."""
    out = []
    for task in ("pi", "regex"):
        cid = f"throughput/no_parallelism/{task}"
        measured = {cond: published_claims.judged(f"ccbench/{cid}", r["ratio"], r, note=r["note"])
                    for cond, (r, _) in _thread_ratios(tp, task).items()}
        out.append(_claim(cid, f"speed with 2 threads / 1 thread, {TASK_WORDS[task]}",
                          "\"doesn't become really better at extracting computational parallelism\"", measured,
                          "{bound} on a build with a GIL (two CPUs); the builds without one are findings"))
    return out


def _contended_vs_idle(df: pd.DataFrame) -> dict:
    """"It would be scheduled again only much later": per build and interleaved round, our bounded
    echo's mean one-way time next to one regex thread over its mean with none.  A ping the echo
    thread never read waited at least the bound (the client sends its end only a bound after its
    last ping), so it counts as the bound: the numerator, and the ratio, are lower bounds where
    pings starved."""
    lat = _latency(df)
    lat = lat[(lat["task"] == "regex") & (lat["policy"] == "default") & lat["threads"].isin([0, 1])]
    key = list(published_claims.ROUND)
    measured = {}
    for cond, g in lat.groupby("condition"):
        ow = g["oneway_ms"].fillna(g["bound"].astype(float) * 1000.0)
        means = ow.groupby([g["threads"], *(g[k] for k in key)]).mean()
        if not {0, 1} <= set(means.index.get_level_values(0)):
            continue
        unread = int(g.loc[g["threads"] == 1, "oneway_ms"].isna().sum())
        r = published_claims.round_ratio(means.loc[1], means.loc[0])
        measured[cond] = published_claims.judged(
            "ccbench/latency/old_GIL/contended_vs_idle", r["ratio"], r,
            note=r["note"] + (f"; {unread} pings never read, each counted at the bound (a lower bound)"
                              if unread else ""))
    return _claim("latency/old_GIL/contended_vs_idle", "mean one-way time of our bounded echo: with one regex "
                  "thread / with none", "\"it would be scheduled again only much later\"", measured,
                  "{bound} under the old GIL; the other builds are findings")


def _throughput_new_vs_old(tp: pd.DataFrame, pub: pd.DataFrame) -> dict:
    """"Roughly similar but slightly better throughput": per task of ccbench's three, each build's
    speed with 2 threads relative to 1 thread over the old GIL's, within each interleaved round
    (the builds of one round measured back to back), median over rounds with its interval."""
    old_gil = interpreters.role("old_gil")
    key = list(published_claims.ROUND)
    needed = {"speed", "task", "workers", "threads", *key}
    th = tp[tp["workers"] == "threads"] if needed <= set(tp.columns) else tp.iloc[0:0]
    measured = {}

    def relative(cond, task):
        g = th[(th["condition"] == cond) & (th["task"] == task)]
        return (_speeds(g, 2) / _speeds(g, 1)).dropna()

    for task in ("pi", "regex", "bz2") if len(th) else ():
        old = relative(old_gil, task)
        for cond in sorted(set(th["condition"]) - {old_gil}):
            r = stats.paired_ratio(relative(cond, task), old)      # the rounds both builds measured
            if not r["n"]:
                continue
            measured[f"{cond} vs {old_gil} ({task})"] = published_claims.judged(
                "ccbench/throughput/new_vs_old", r["ratio"], r, note=f"{r['n']} rounds, paired with {old_gil}")
    return _claim("throughput/new_vs_old", f"relative throughput with 2 threads, this build / {old_gil} (old GIL), "
                  "per task, paired by round", pub.loc["ccbench throughput (Linux, two systems)", "new_gil"], measured,
                  f"band {{band}}; each of ccbench's three tasks apart. {old_gil} and the 3.x builds differ in far "
                  "more than the GIL: this compares what each build's threads keep of its own single-thread speed")


def claims(df: pd.DataFrame) -> list[dict]:
    """The document's measurable claims, every condition measured (n: ccbench runs, never pings):
    the latency with regex in the background (old GIL: almost a second; new: a couple of ms) and
    the new GIL's latency against the old, each the tool's own number (its mean one-way time with
    one background thread, measured with its protocol: ``test=tool``), the old GIL's wait next to
    a regex thread over its wait with none (our bounded echo: "only much later"), the Beazley
    effect (the trivial loop: time with two threads over one, +50% on OS X, context) and its
    direction on two CPUs (still a degradation), no gain from a second thread with a GIL, and the
    new GIL's throughput (roughly similar to the old).  Two points of one build pair by round."""
    pub = published().set_index("item")
    out = []
    tool = _tool(df)
    g1 = tool[(tool["task"] == "regex") & (tool["threads"] == 1) & (tool["policy"] == "default")]
    row = pub.loc["ccbench latency, workload B (regex, C, does not release GIL)"]
    for label, col in (("old GIL", "old_gil"), ("new GIL", "new_gil")):
        cid = f"latency/regex/{label.replace(' ', '_')}"
        measured = {}
        for cond, g in g1.groupby("condition"):
            ow = g["oneway_ms"].dropna()
            unread = int(g["oneway_ms"].isna().sum())
            s = stats.summarize(run_means(g))
            measured[cond] = published_claims.judged(
                f"ccbench/{cid}", s["median"], s, best=float(ow.min()) if len(ow) else math.nan,
                note=f"{len(g)} pings in {s['n']} run{'s' if s['n'] != 1 else ''}"
                + (f"; {unread} never read" if unread else ""))
        out.append(_claim(cid, f"mean latency with one regex thread in the background ({label}: {row[col]})",
                          f"{row[col]} (Linux, 2009)", measured,
                          "ccbench's own protocol: each run's mean one-way time of its 20 pings, as the tool printed "
                          "it, and the median over runs; band {band} (the words are approximate)"))
    out += _latency_new_vs_old(tool)
    tp = _throughput(df)
    beazley = pub.loc[pub.index.str.contains("Dave Beazley effect")].iloc[0]
    loop = _thread_ratios(tp, "countdown", time=True)      # the trivial loop, read by both rows below
    for cid, what in (("beazley/countdown/2threads", "the document's case is OS X's slow locks; on Linux it expected "
                       "less: context, beside the direction row old_GIL/degradation"),
                      ("throughput/old_GIL/degradation", "'a smaller performance degradation' on Linux: time with 2 "
                       "threads / 1 {bound}, under the old GIL (a cores row: two CPUs)")):
        measured = {cond: published_claims.judged(f"ccbench/{cid}", r["ratio"], r, best=best, note=r["note"])
                    for cond, (r, best) in loop.items()}
        out.append(_claim(cid, "the trivial loop: time with 2 threads / 1 thread (same work)",
                          f"{beazley['old_gil']} (old GIL, OS X)", measured, what))
    out += _no_parallelism(tp)
    out.append(_contended_vs_idle(df))
    out.append(_throughput_new_vs_old(tp, pub))
    out += _design_claims(df, pub)
    return out


def _latency_new_vs_old(lat: pd.DataFrame) -> list[dict]:
    """"Much better in the latency tests, especially in workload B": per task, the mean one-way
    time with one background thread (ccbench's statistic, one per run, with its protocol) under
    each new-GIL build over the old GIL's: the ratio of the medians over runs, with its interval."""
    out = []
    old_gil = interpreters.role("old_gil")      # builds.toml [roles]: 2.7.18
    g1 = lat[(lat["threads"] == 1) & (lat["policy"] == "default")]
    for task in ("pi", "regex", "bz2"):
        cid = f"latency/new_vs_old/{task}"
        t = g1[g1["task"] == task]
        old = run_means(t[t["condition"] == old_gil])
        measured = {}
        for cond, g in t.groupby("condition"):
            new = run_means(g)
            if cond == old_gil or not len(new) or not len(old):
                continue
            r = stats.ratio_of_medians(new, old)
            unread = int(t[t["condition"] == old_gil]["oneway_ms"].isna().sum())
            measured[f"{cond} vs {old_gil}"] = published_claims.judged(
                f"ccbench/{cid}", r["ratio"], r,
                note=f"{r['n_num']} and {r['n_den']} runs, each its mean over its pings"
                     + (f"; {unread} of the old GIL's pings never read (not in its mean)" if unread else ""))
        out.append(_claim(cid, f"mean latency with one {TASK_WORDS[task]} thread: this build / the old GIL",
                          "\"much better in the latency tests, especially in workload B\"", measured,
                          "ccbench's own protocol, its mean one-way time, new GIL over old"))
    return out


def _design_claims(df: pd.DataFrame, pub: pd.DataFrame) -> list[dict]:
    """The design's two mechanisms, as the builds' sources have them (``in_builds``, checked
    against the source tarballs by the tests).  Forced switching shipped: a thread waiting for
    the GIL gets it after about one switch interval, which the latency next to a regex thread at
    default interval measures (the mean one-way time next to a regex thread / the interval, under
    the builds whose GIL switches by time; a regex call itself holds the GIL a millisecond or
    more, which adds to the wait).  Priority requests did not ship: not testable."""
    out = []
    lat = _latency(df)
    lat = lat[(lat["task"] == "regex") & (lat["threads"] == 1) & (lat["policy"] == "default")]
    row = pub.loc["forced switching"]
    measured = {}
    for cond, g in lat.groupby("condition"):
        # only where a GIL is in force and switches by time (not the old GIL, not without a GIL)
        interval = g["switch_interval_runtime"]
        if not (interval.notna().all() and g["gil_enabled"].fillna(False).astype(bool).all()):
            continue
        ow = g["oneway_ms"].dropna()
        interval_ms = float(interval.iloc[0]) * 1000.0
        s = stats.summarize(run_means(g) / interval_ms)
        measured[cond] = published_claims.judged(
            "ccbench/design/forced_switching", s["median"], s,
            best=float(ow.min()) / interval_ms if len(ow) else math.nan, note=f"interval {interval_ms:g} ms")
    out.append(_claim("design/forced_switching", "a thread waiting for the GIL is forced in when the interval "
                      "ends: mean one-way time / the interval set, about one interval (a number in words, read "
                      "by the lexicon)", f"{row['new_gil']} ({row['in_builds']})", measured,
                      "the old GIL and the builds without a GIL have no interval to force"))
    row = pub.loc["single-threaded performance"]
    out.append(_claim("single_thread/not_degraded", "single-threaded speed not degraded by the new GIL",
                      f"{row['new_gil']}", {},
                      f"not testable here: the builds with the old GIL ({interpreters.role('old_gil')}) and the new "
                      f"({interpreters.role('new_gil_then')}) differ in far "
                      "more than the GIL; the one-thread speeds are in ccbench's printout above"))
    row = pub.loc["priority requests"]
    out.append(_claim("design/priority_requests", "priority requests: an I/O thread takes the GIL at once",
                      f"{row['new_gil']} ({row['in_builds']})", {},
                      "not testable: " + row["in_builds"]))
    return out


def side_by_side(df: pd.DataFrame) -> pd.DataFrame:
    """ccbench's own printout as one table: a line per test, task, threads (or processes) and
    policy, a column per condition; throughput as iterations/s and the share of one thread's
    (median over runs), latency as mean / maximum one-way time and the share of starved pings."""
    from ..measure.interpreters import display_order

    s = summary(df)
    s = s.assign(cell=[
        (f"{r.median:,.0f} it/s" + ("" if r.threads == 1 else f" ({r.relative:.0%})")) if r.test == "throughput"
        else (f"{r.mean:,.2f} / {r.max:,.1f} ms" + (f", {r.starved_share:.0%} starved" if r.starved_share else ""))
        if r.starved_share < 0.5 else f"{r.starved_share:.0%} starved (read {r.median:,.0f} ms late, median)"
        for r in s.itertuples()])
    s["task"] = s["task"].map(TASK_SHORT)
    s["threads"] = [f"{n} {w[:-1] if n == 1 else w}" for n, w in zip(s["threads"], s["workers"])]
    out = s.pivot_table(index=["test", "task", "threads", "policy"], columns="condition", values="cell",
                        aggfunc="first").reset_index()
    conds = display_order([c for c in out.columns if c not in ("test", "task", "threads", "policy")])
    out.columns.name = None
    return out[["test", "task", "threads", "policy", *conds]].fillna("-")


def findings(df: pd.DataFrame) -> str:
    s = summary(df)
    lines = []
    lat = s[(s["test"] == "latency") & (s["task"] == "regex") & (s["policy"] == "default")]
    for cond, g in lat.groupby("condition"):
        g = g.set_index("threads")
        parts = [(f"{n} thread{'s' if n != 1 else ''}: median {g.at[n, 'median']:,.2f} ms, max {g.at[n, 'max']:,.0f} ms"
                  + (f", {g.at[n, 'starved_share']:.0%} starved" if g.at[n, 'starved_share'] else ""))
                 if g.at[n, "starved_share"] < 0.5 else
                 (f"{n} thread{'s' if n != 1 else ''}: {g.at[n, 'starved_share']:.0%} of the pings starved (no answer "
                  "within the bound while the threads computed: not a latency; the echo read them a median "
                  f"{g.at[n, 'median']:,.0f} ms after they were sent, once the threads stopped)")
                 for n in g.index]
        lines.append(f"- **{cond}**, latency next to regex threads: " + "; ".join(parts) + ".")
    one = s[(s["test"] == "latency") & (s["threads"] == 1) & (s["policy"] == "default")].set_index(["condition", "task"])
    held = {c for c, _ in one.index}
    old_gil, new_gil = interpreters.role("old_gil", held), interpreters.role("new_gil_then", held)   # builds.toml [roles]
    for task in [t for t in TASKS if ((old_gil, t) in one.index and (new_gil, t) in one.index)]:
        old, new = one.loc[(old_gil, task), "mean"], one.loc[(new_gil, task), "mean"]
        lines.append(f"- Next to one thread running {TASK_WORDS[task]}, the old GIL ({old_gil}) answered in a mean "
                     f"{old:,.2f} ms and the new ({new_gil}) in {new:,.2f} ms: the old was "
                     f"{'faster' if old < new else 'slower'} ({old / new:,.2g}x the new).")
    tool = s[(s["test"] == "tool") & (s["threads"] == 1)].set_index(["condition", "task"])
    for cond in interpreters.display_order(sorted({c for c, _ in tool.index})):
        parts = [f"{TASK_SHORT[t]} {tool.at[(cond, t), 'mean']:,.2f} / "
                 + (f"{one.at[(cond, t), 'mean']:,.2f}" if (cond, t) in one.index else "-")
                 for t in TASKS if (cond, t) in tool.index]
        lines.append(f"- **{cond}**, mean one-way time next to one background thread, ccbench's own protocol / our "
                     "bounded echo (ms): " + ", ".join(parts) + ".")
    for cond, (after, total, stop) in read_after_stop(df).items():
        if after:
            lines.append(f"- **{cond}**, ccbench's own protocol next to one regex thread: of {total} pings sent while "
                         f"the background thread computed, {after} were read only once it had stopped (a median "
                         f"{stop:.2f} s after the release): for those, the tool's number is the wait for the end of "
                         "its own window.")
    tp = s[(s["test"] == "throughput") & (s["workers"] == "threads") & (s["threads"] == 2)]
    for cond, g in tp.groupby("condition"):
        lines.append(f"- **{cond}**, 2 threads keep of 1 thread's throughput: " + ", ".join(
            f"{r.task} {r.relative:.0%}" for r in g.itertuples()) + ".")
    return "\n".join(lines)


def read_after_stop(df: pd.DataFrame, task: str = "regex") -> dict:
    """Per condition, in ccbench's own protocol next to one ``task`` thread: of the pings sent while
    the background threads computed, how many were read only once they had stopped, of how many,
    and the median time the threads stopped (s after the release)."""
    t = ok_rows(_tool(df))
    t = t[(t["task"] == task) & (t["threads"] == 1) & t["read_s"].notna() & t["bg_stopped_s"].notna()] \
        if {"read_s", "bg_stopped_s"} <= set(t.columns) else t.iloc[0:0]
    out = {}
    for cond, g in t.groupby("condition"):
        during = g[g["sent_s"] < g["bg_stopped_s"]]
        out[cond] = (int((during["read_s"] >= during["bg_stopped_s"]).sum()), int(len(during)),
                     float(g["bg_stopped_s"].median()))
    return out


def _gil_kinds(df: pd.DataFrame) -> dict:
    """condition -> "old" (switches by check interval: 2.7's GIL), "new" (by switch interval) or
    "none" (no GIL at run time), as each build's samples recorded it."""
    from ..judge.prose import gil_by_condition

    ok = ok_rows(df)
    old = set(ok.loc[ok["check_interval_runtime"].notna(), "condition"]) if "check_interval_runtime" in ok else set()
    return {c: "old" if c in old else "new" if on else "none" for c, on in gil_by_condition(df).items()}


def _plain(holds) -> dict:
    """A sentence's outcome where it reads counts and means, without an interval: it holds or not."""
    return {"holds": bool(holds), "open": False}


def prose(df: pd.DataFrame) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``.  A sentence that
    says what a claim says reads the claim's line (claims.csv): "waits about one switch interval" is
    ccbench/design/forced_switching's one, in words; one in the documents' words reads the word's
    line (lexicon.csv): "shortens" and "sooner" a change, "nearly every" and "does not answer"
    completely; a number in the words is the number checked."""
    from ..judge import claims as published_claims
    from ..judge import lexicon
    from ..judge.prose import at_least, at_most, interval, together, within

    said = chapter_words("ccbench")     # the words cell of its text
    fall = lexicon.falls("a change")    # "shortens", "sooner": at most 0.9 of the other
    whole = lexicon.rises("completely")  # "nearly every", "does not answer": at least 0.9 of them

    s = summary(df)
    kinds = _gil_kinds(df)
    lat = s[(s["test"] == "latency") & (s["threads"] == 1)]
    mean = lat.set_index(["condition", "task", "policy"])["mean"]
    ok = ok_rows(df)
    default_si = ok.loc[ok["policy"] == "default", "switch_interval_runtime"].dropna()
    si_ms = float(default_si.median()) * 1000 if len(default_si) else math.nan
    new = [c for c, k in kinds.items() if k == "new" and (c, "regex", "default") in mean.index]
    pings = _latency(df)

    def runs(c, task, policy, threads=1, per_run=run_means):
        """Each run's ``per_run`` statistic (ccbench's mean one-way time, or :func:`run_starved`), by
        the interleaved round it ran in."""
        g = pings[(pings["condition"] == c) & (pings["task"] == task) & (pings["threads"] == threads)
                  & (pings["policy"] == policy)]
        return per_run(g).groupby(level="repeat").mean()

    def ms(m):
        return interval(m, ".2f", " ms")

    out = []
    if new and math.isfinite(si_ms):
        vals = {c: stats.summarize(runs(c, "regex", "default")) for c in new}
        low, high = published_claims.line("ccbench/design/forced_switching")   # in switch intervals
        out.append(said.check(
            "new-gil-waits-one-switch-interval", within(vals.values(), low * si_ms, high * si_ms),
            said.fill("mean-one-way-time-evidence", low=f"{low * si_ms:g}", high=f"{high * si_ms:g}", times="; ".join(
                said.fill("build-time", build=c, ms=ms(v)) for c, v in vals.items())),
            interval=f"{si_ms:g}"))
    swept = [c for c in new if (c, "regex", "switch:0.001") in mean.index and (c, "regex", "switch:0.0001") in mean.index]
    if swept:
        one = {c: stats.paired_ratio(runs(c, "regex", "switch:0.001"), runs(c, "regex", "default")) for c in swept}
        tenth = {c: stats.summarize(runs(c, "regex", "switch:0.0001")) for c in swept}
        out.append(said.check(
            "shorter-interval-shortens-the-wait-not-in-proportion",
            together(at_most(one.values(), fall), at_least(tenth.values(), 0.5)),
            said.fill("mean-at-three-intervals-evidence", fall=f"{fall:g}", times="; ".join(
                said.fill("build-three-times", build=c, ratio=interval(one[c]), tenth=ms(tenth[c]))
                for c in swept))))
    free = [c for c, k in kinds.items() if k == "none"]
    near = s[(s["test"] == "latency") & (s["threads"] >= 1) & (s["policy"] == "default") & s["condition"].isin(free)]
    if len(near):
        each = {c: [stats.summarize(runs(c, t, "default", int(n))) for t, n in
                    near.loc[near["condition"] == c, ["task", "threads"]].itertuples(index=False)]
                for c in near["condition"].unique()}
        worst = {c: max(v, key=lambda m: m["ci_hi"] if m["ci_hi"] == m["ci_hi"] else m["median"])
                 for c, v in each.items()}
        out.append(said.check(
            "free-threaded-echo-never-waits", at_most([m for v in each.values() for m in v], 1.0),
            said.fill("longest-mean-one-way-time-evidence", times="; ".join(
                said.fill("build-time", build=c, ms=ms(m)) for c, m in worst.items()))))
    old = [c for c, k in kinds.items() if k == "old"]
    after = read_after_stop(df)
    if any(c in after for c in old):
        v = {c: after[c] for c in old if c in after}
        out.append(said.check(
            "old-gil-tool-measures-its-own-window", _plain(all(a >= whole * n for a, n, _ in v.values())),
            said.fill("read-only-after-stop-evidence", line=f"{whole:.0%}", builds="; ".join(
                said.fill("build-read-after-stop", build=c, read=a, sent=n, stopped=f"{st:.2f}")
                for c, (a, n, st) in v.items())),
            why=said["why-the-window-is-the-tools"]))
    for c in old:
        pure = [t for t in ("pi", "countdown") if (c, t, "default") in mean.index
                and any((n, t, "default") in mean.index for n in new)]
        if pure:
            # the old GIL against the new build that answers soonest, per round (paired)
            fastest = {t: min((n for n in new if (n, t, "default") in mean.index),
                              key=lambda n: float(mean[(n, t, "default")])) for t in pure}
            pairs = {t: stats.paired_ratio(runs(c, t, "default"), runs(fastest[t], t, "default")) for t in pure}
            out.append(said.check(
                "old-gil-answers-sooner-next-to-pure-python", at_most(pairs.values(), fall),
                said.fill("old-over-fastest-new-evidence", fall=f"{fall:g}", tasks="; ".join(
                    said.fill("task-old-over-new", task=t, new=fastest[t], ratio=interval(m))
                    for t, m in pairs.items())),
                build=c))
        if (c, "regex", "default") in mean.index and new:
            # the share of a run's pings left unanswered, median over runs with its 95% interval:
            # pooled over pings, one run that answered moved it under the line (86% < 90%)
            share = {b: stats.summarize(runs(b, "regex", "default", per_run=run_starved)) for b in (c, *new)}
            worst = max(stats.summarize(runs(n, "regex", "default"))["median"] for n in new)   # as the wait's sentence
            out.append(said.check(
                "old-gil-silent-next-to-regex",
                together(at_least([share[c]], whole), at_most([share[n] for n in new], 0.01)),
                said.fill("old-gil-silent-evidence", build=c, old=interval(share[c], ".0%"), line=f"{whole:.0%}",
                          new="; ".join(f"{n} {interval(share[n], '.0%')}" for n in new), slowest=f"{worst:.2f}"),
                build=c))
    return out


# -- figures ----------------------------------------------------------------------------------------
def figure(df: pd.DataFrame):
    """Latency: every answered ping's one-way time per condition and background threads, one
    panel per task (log scale), starved pings at the top; the document's two values dashed."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..present import plots

    lat = _latency(df)
    lat = lat[lat["policy"] == "default"].copy()
    tasks = [t for t in TASKS if t in set(lat["task"])]
    if not tasks:
        return _message_figure("no latency run at the default policy in these samples")
    pal = plots.palette(lat["condition"].unique())
    top = float(np.nanmax(lat["oneway_ms"])) if lat["oneway_ms"].notna().any() else 1000.0
    lat["shown_ms"] = lat["oneway_ms"].fillna(top * 2)
    fig, axes = plt.subplots(len(tasks), 1, figsize=(8, 3.3 * len(tasks)), squeeze=False, sharey=True)
    pub = published().set_index("item").loc["ccbench latency, workload B (regex, C, does not release GIL)"]
    for ax, task in zip(axes[:, 0], tasks):
        g = lat[lat["task"] == task]
        sns.stripplot(data=g, x="threads", y="shown_ms", hue="condition", hue_order=sorted(pal), palette=pal,
                      dodge=True, size=2.5, alpha=0.6, jitter=0.25, ax=ax, legend=ax is axes[0, 0])
        ax.set_yscale("log")
        ax.axhline(top * 2, color="0.5", linewidth=0.6)
        ax.text(1.0, top * 2.3, "starved ", transform=ax.get_yaxis_transform(), ha="right", fontsize=8.5, color="0.4")
        if task == "regex":
            for col, label in (("old_gil", "old GIL"), ("new_gil", "new GIL")):
                ax.axhline(float(pub[f"{col}_value"]), color="black", linestyle="--", linewidth=1)
                ax.text(1.0, float(pub[f"{col}_value"]) * 1.2, f"document, {label}: {pub[col]} ",
                        transform=ax.get_yaxis_transform(), ha="right", fontsize=8.5)
        ax.set_title(f"{TASK_WORDS[task]} in the background: one-way time of every ping "
                     "(top line: starved past the bound)", fontsize=9)
        ax.set_ylabel("ms")
        ax.set_xlabel("background threads")
    axes[0, 0].legend(fontsize=8.5, title="condition", title_fontsize=8.5, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    return fig


def _message_figure(text: str):
    """A small figure that says, in place of a plot, why there is nothing to draw."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 1.5))
    ax.text(0.5, 0.5, text, ha="center", va="center")
    ax.axis("off")
    return fig


def tool_figure(df: pd.DataFrame):
    """ccbench's own latency protocol: every ping's one-way time against when it was sent (s
    after the release of one background thread), one panel per task, the median time the
    background threads stopped as a vertical line; a ping under the old GIL read only once they
    stopped falls on a line of slope -1 towards it."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..present import plots

    t = ok_rows(_tool(df))
    one = t[t["threads"] == 1] if (t["threads"] == 1).any() else t
    tasks = [x for x in TASKS if x in set(one["task"])]
    if not tasks:
        return _message_figure("no run of ccbench's own protocol in these samples")
    pal = plots.palette(one["condition"].unique())
    # one task a row, at the page's width (8 in at 100 dpi: every text at least 10 px as shown)
    fig, axes = plt.subplots(len(tasks), 1, figsize=(8, 2.9 * len(tasks) + 0.5), squeeze=False, sharey=True)
    pub = published().set_index("item").loc["ccbench latency, workload B (regex, C, does not release GIL)"]
    for ax, task in zip(axes[:, 0], tasks):
        g = one[(one["task"] == task) & one["oneway_ms"].notna()]
        sns.scatterplot(data=g, x="sent_s", y="oneway_ms", hue="condition", hue_order=sorted(pal), palette=pal,
                        s=10, alpha=0.6, linewidth=0, ax=ax, legend=ax is axes[0, 0])
        if g["bg_stopped_s"].notna().any():
            ax.axvline(float(g["bg_stopped_s"].median()), color="0.4", linestyle=":", linewidth=1)
        if task == "regex":
            for col in ("old_gil", "new_gil"):
                ax.axhline(float(pub[f"{col}_value"]), color="black", linestyle="--", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_title(TASK_WORDS[task], fontsize=9)
        ax.set_ylabel("one-way time, ms")
        ax.set_xlabel("")
    axes[-1, 0].set_xlabel("ping sent, s after the release")
    if axes[0, 0].get_legend():      # beside the last panel, where it covers no ping
        handles, labels = axes[0, 0].get_legend_handles_labels()
        axes[0, 0].get_legend().remove()
        axes[0, -1].legend(handles, labels, fontsize=8.5, title="condition", title_fontsize=8.5,
                           loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.suptitle("ccbench's own latency protocol, one background thread: every ping\n(dotted: the threads "
                 "stopped; dashed: the document's two values)", fontsize=9)
    fig.tight_layout()
    return fig


def throughput_figure(df: pd.DataFrame):
    """Throughput with N threads (or processes) relative to one thread, per task, with intervals."""
    import matplotlib.pyplot as plt

    from ..present import plots

    s = summary(df)
    s = s[s["test"] == "throughput"]
    tasks = [t for t in TASKS if t in set(s["task"])]
    if not tasks:
        return _message_figure("no throughput run in these samples")
    pal = plots.palette(s["condition"].unique())
    # two tasks a row, at the page's width (8 in at 100 dpi: every text at least 10 px as shown)
    cols = min(2, len(tasks))
    rows = -(-len(tasks) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(8, 3.2 * rows), squeeze=False, sharey=True)
    for ax in axes.flat[len(tasks):]:
        ax.set_visible(False)
    for ax, task in zip(axes.flat, tasks):
        g = s[s["task"] == task]
        for cond, h in g.groupby("condition"):
            for workers, style in (("threads", "o-"), ("processes", "s:")):
                k = h[(h["workers"] == workers) | (h["threads"] == 1)].sort_values("threads")
                if workers == "processes" and not (h["workers"] == "processes").any():
                    continue
                ax.errorbar(k["threads"], k["relative"], yerr=[k["relative"] - k["relative_ci_lo"],
                            k["relative_ci_hi"] - k["relative"]], fmt=style, color=pal[cond], capsize=2,
                            label=f"{cond}" + (" (processes)" if workers == "processes" else ""))
        ax.axhline(1, color="0.6", linewidth=0.8)
        ax.set_xticks(sorted(g["threads"].unique()))
        ax.set_title(TASK_WORDS[task], fontsize=9)
        ax.set_xlabel("threads (or processes)")
    for ax in axes[:, 0]:
        ax.set_ylabel("throughput / with 1 thread")
    handles = {}
    for ax in axes.flat:      # below the panels, where it covers no line
        for h, n in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(n, h)
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=4, fontsize=8.5, frameon=False)
    fig.tight_layout(rect=(0, 0.04 + 0.035 * (len(handles) // 4 + 1), 1, 1))
    return fig


def policy_figure(df: pd.DataFrame):
    """Latency next to one background thread against the GIL policy, per condition."""
    import matplotlib.pyplot as plt

    from ..present import plots

    s = summary(df)
    s = s[(s["test"] == "latency") & (s["threads"] == 1)]
    task = s.loc[s["policy"] != "default", "task"]
    if task.empty:
        return _message_figure("no policy sweep in these samples")
    s = s[s["task"] == task.iloc[0]]
    pal = plots.palette(s["condition"].unique())
    order = sorted(s["policy"].unique(), key=lambda p: (p != "default", p))
    fig, ax = plt.subplots(figsize=(8, 3.6))
    xs = {p: i for i, p in enumerate(order)}
    starved_any = False
    for off, (cond, g) in zip(np.linspace(-0.2, 0.2, len(pal)), s.groupby("condition")):
        # where most pings got no answer within the bound, the times are when the computing thread
        # stopped and let them be read (our bound, not the GIL's hand-over): drawn hollow
        for starved, h in g.groupby(g["starved_share"].fillna(0) >= 0.5):
            starved_any |= bool(starved)
            ax.errorbar([xs[p] + off for p in h["policy"]], h["median"],
                        yerr=[h["median"] - h["ci_lo"], h["ci_hi"] - h["median"]], fmt="o", color=pal[cond],
                        mfc="none" if starved else pal[cond], capsize=3,
                        label=cond if not starved or (g["starved_share"].fillna(0) >= 0.5).all() else None)
        ax.scatter([xs[p] + off for p in g["policy"]], g["max"], marker="_", s=120, color=pal[cond])
    ax.set_xticks(range(len(order)), order)
    ax.set_yscale("log")
    ax.set_ylabel("one-way time, ms\n(dot: median, interval; bar: max)")
    if starved_any:
        ax.plot([], [], "o", mfc="none", color="0.4", label="hollow: most pings starved (read when the thread stopped)")
    ax.set_title(f"{TASK_WORDS[task.iloc[0]]} in one background thread, against the GIL policy", fontsize=10)
    ax.legend(fontsize=8.5, loc="center")
    fig.tight_layout()
    return fig


def explorer(df: pd.DataFrame):
    """Kernel-free: pick a task and slide over the background threads: every ping per condition."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..present import plots, widgets

    lat = _latency(df)
    lat = lat[lat["policy"] == "default"]
    tasks = [t for t in TASKS if t in set(lat["task"])]
    ns = sorted(lat["threads"].unique())
    pal = plots.palette(lat["condition"].unique())
    top = float(np.nanmax(lat["oneway_ms"])) if lat["oneway_ms"].notna().any() else 1000.0

    def draw(task, n):
        g = lat[(lat["task"] == task) & (lat["threads"] == n)].copy()
        g["shown_ms"] = g["oneway_ms"].fillna(top * 2)
        fig, ax = plt.subplots(figsize=(7.5, 3.4))
        conds = sorted(pal)
        sns.stripplot(data=g, x="condition", y="shown_ms", order=conds, hue="condition", hue_order=conds,
                      palette=pal, size=4, jitter=0.2, ax=ax, legend=False)
        ax.set_yscale("log")
        ax.set_ylim(0.01, top * 4)
        ax.axhline(top * 2, color="0.5", linewidth=0.6)
        ax.set_ylabel("one-way time of a ping, ms")
        ax.set_xlabel("")
        ax.set_title(f"{TASK_WORDS[task]}, {n} background thread{'s' if n != 1 else ''} (top line: starved)",
                     fontsize=10)
        return fig

    return widgets.stack_explorer(draw, ("task", tasks, [TASK_WORDS[t] for t in tasks]),
                                  ("background threads", ns, [str(n) for n in ns]), title="Explore every ping")


# the sentences the book's first screen shows, by their words' keys (notebooks/07_ccbench.md)
HEADLINE = ("old-gil-silent-next-to-regex",)

ANALYSIS = ModuleAnalysis(__name__, extras=("throughput_figure", "policy_figure", "tool_figure"))
