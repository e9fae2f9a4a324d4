"""What a build changes: one CPython source built twice (ours and Debian's), and today's releases
as one builder builds them.

Our 3.13.5 is built with ``./configure`` and nothing more; Debian builds the same source with
profile-guided and link-time optimisation (its ``debian/rules``).  Measured side by side in the
same interleaved rounds, their time on the same workload is the build's effect, and 3.14 or
3.15 against 3.13.5, all three Debian's, is the release's with the builder held fixed: a
difference between our 3.13.5 and Debian's 3.14 is the sum of both, and is never read as the
release's alone.

Each row is the median over rounds of the ratio of the two builds' times in one round
(:func:`gillab.stats.paired_ratio`, the statistic document 002's chapter reads), with its 95%
interval; a ratio whose whole interval lies below 1 is *faster*, above 1 *slower*, and one whose
interval holds 1 *inconclusive* (the book's word for an interval that settles nothing), as is one
with too few rounds for an interval.  A row
reads the reader's campaign where it has the rounds, else the newest campaign that has (named in
the table): :func:`effects`.
"""
from __future__ import annotations

import math

import pandas as pd

from .. import stats
from ..measure import campaigns, experiments
from . import results

# (numerator, denominator, what the ratio measures)
PAIRS = (("debian-3.13.5", "3.13.5", "build: Debian's 3.13.5 / ours"),
         ("debian-3.14", "debian-3.13.5", "release: 3.14 / 3.13.5 (Debian's)"),
         ("debian-3.15", "debian-3.13.5", "release: 3.15 / 3.13.5 (Debian's)"))
# (experiment, point, how the table names it)
WORKLOADS = (("countdown", "threads=1", "countdown, 1 thread"),
             ("countdown", "threads=2", "countdown, 2 threads"),
             ("st_loop", None, "loop (document 002)"))
KEY = "debian-3.13.5"


def _default_samples(experiment: str, campaign: str) -> pd.DataFrame | None:
    exp = experiments.get(experiment)
    try:
        df = results.samples(experiment, campaign, exp.config_id(exp.resolve("default")))
    except (results.NoData, campaigns.NoCampaign):
        return None
    return df if KEY in set(df["condition"]) else None


def _order(campaign: str | None) -> list[str]:
    """The campaigns a row may read, in the order it tries them: the reader's, then newest first."""
    return list(dict.fromkeys(([campaign] if campaign else []) + [c.id for c in reversed(campaigns.all_campaigns())]))


def verdict(r: dict) -> str:
    if not stats.conclusive(r["method"], r["n"]):
        return "inconclusive (too few runs)"
    if r["ci_hi"] < 1:
        return "faster"
    if r["ci_lo"] > 1:
        return "slower"
    return "inconclusive (its interval holds 1)"


def effects(campaign: str | None = None) -> pd.DataFrame:
    """One row per workload and pair: the paired ratio, its interval, rounds, verdict, and the
    campaign it reads: the reader's (``campaign``) where it has rounds enough for an interval, else
    the newest that has, else the first that measured both builds at all (`default` measures
    Debian's 3.14 and 3.15 once a point; `verdicts` gives them their rounds)."""
    rows = []
    frames: dict[tuple[str, str], pd.DataFrame | None] = {}
    for experiment, point, label in WORKLOADS:
        for num, den, what in PAIRS:
            first = None
            for cid in _order(campaign):
                if (experiment, cid) not in frames:
                    frames[(experiment, cid)] = _default_samples(experiment, cid)
                df = frames[(experiment, cid)]
                if df is None:
                    continue
                if point is not None:
                    df = df[df["point"] == point]
                a = df[df["condition"] == num].groupby("repeat")["seconds"].median()
                b = df[df["condition"] == den].groupby("repeat")["seconds"].median()
                if not len(a) or not len(b):
                    continue
                r = stats.paired_ratio(a, b)
                row = {"workload": label, "ratio of times": what, "median": r["ratio"], "ci_lo": r["ci_lo"],
                       "ci_hi": r["ci_hi"], "rounds": r["n"], "reads": verdict(r), "campaign": cid}
                first = first or row
                if row["reads"] != "too few runs":
                    first = row
                    break
            if first:
                rows.append(first)
    return pd.DataFrame(rows, columns=["workload", "ratio of times", "median", "ci_lo", "ci_hi", "rounds",
                                       "reads", "campaign"])


def _cell(r) -> str:
    if not stats.conclusive(stats.PAIRED, r["rounds"]) or math.isnan(r["ci_lo"]):
        return f"{r['median']:.3f} (n = {r['rounds']}: too few runs)"
    return f"{r['median']:.3f} [{r['ci_lo']:.3f}, {r['ci_hi']:.3f}]"


def markdown(campaign: str | None = None) -> str:
    """The method chapter's table of what the build and the release change, with a sentence on
    the build's effect computed from it."""
    df = effects(campaign)
    if df.empty:
        return ("*No campaign here measured Debian's 3.13.5 beside ours yet: `make interpreters` provisions it "
                "and the countdown and single-threaded loop chapters of `default` measure it.*\n")
    lines = ["| workload | ratio of times | median [95% interval] | rounds | reads | campaign |",
             "|---|---|---|---:|---|---|"]
    for _, r in df.iterrows():
        lines.append(f"| {r['workload']} | {r['ratio of times']} | {_cell(r)} | {r['rounds']} | {r['reads']} "
                     f"| {r['campaign']} |")
    build = df[df["ratio of times"] == PAIRS[0][2]]
    said = []
    for _, r in build.iterrows():
        if r["reads"] in ("faster", "slower"):
            pct = abs(1 - r["median"]) * 100
            said.append(f"{r['workload']}: Debian's build is {r['reads']} by about {pct:.0f}%")
        else:
            said.append(f"{r['workload']}: {r['reads']}")
    text = ("\n\nThe build's effect, from one source: " + "; ".join(said) + ". "
            "A chapter that sets our 3.13.5 beside Debian's 3.14 or 3.15 reads the release's change only where the "
            "table's release rows say it, never from that difference alone.") if said else ""
    return "\n".join(lines) + text + "\n"
