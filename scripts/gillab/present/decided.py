"""What runs decide, for the method chapter: per chapter, the judged claims x builds a run decided
and the minutes it spent, the rows left straddling their band with the runs their spread would need,
what the judged claims need against what each profile gives, and the newest planned `default` run's
account.  The numbers come from :mod:`gillab.judge.yields`; this module formats them.
"""
from __future__ import annotations

from ..judge.yields import by_chapter as _by_chapter
from ..measure import experiments
from ..measure.profiles import BUDGET_MINUTES
from . import timing


def straddling(flat, where: str = "") -> str:
    """Per chapter, the judged rows inconclusive with enough runs (their interval straddles an edge
    of the band), and how many more runs each would need at its current spread
    (:func:`gillab.judge.rounds.runs_to_decide`):
    within the 20 a point may get, and the median of those, or not within them."""
    import statistics as st

    from ..judge import yields

    found = yields.straddling(flat)
    apart = found.apart
    if not found.chapters:
        return ""
    rows = ["| chapter | straddling their band | decided within 20 at their spread (median more runs, pairs or "
            "trials) | not within 20 | guarded by a control wider than its band |", "|---|---|---|---|---|"]
    for name, more in found.chapters:
        within = [k for k in more if k is not None]
        rows.append(f"| `{name}` | {len(more)} | {len(within)}" + (f" ({st.median(within):g})" if within else "")
                    + f" | {len(more) - len(within)} | {found.machine.get(name, 0)} |")
    return (f"Rows left inconclusive{where} with enough runs (their interval straddles an edge of the band), and how "
            "many more runs each would need at its current spread to lie wholly inside or outside the band (the "
            "interval's ranks read as a normal distribution's quantiles: a projection to plan runs with, not an "
            "interval; beyond 20 runs a point gets no more rounds, and a row is decided only by a narrower "
            "spread). The last column counts the rows whose chapter's control, comparing runs of identical work, "
            "spread wider than its whole band: there the spread is the machine's pace from run to run, not the "
            "GIL's:\n\n" + "\n".join(rows) + "\n"
            + (f"\nNot in the table: {len(apart)} row{'s' if len(apart) != 1 else ''} whose interval is no median's "
               f"or ratio's ({', '.join(f'`{c}`' for c in dict.fromkeys(apart['claim_id']))}: "
               f"{', '.join(dict.fromkeys(apart['estimand']))}), which no spread projects.\n" if len(apart) else ""))


def _width_over_band(g) -> str:
    """The median width of the *about* rows' intervals over their band's (under 1: an interval can
    lie inside the band), with how many rows, or '-'."""
    import numpy as np

    about = g[g["band"].notna() & (g["band"] > 0) & g["ci_low"].notna() & g["published"].notna()]
    if "coverage" in about.columns:         # one run has no interval: no width either
        about = about[about["coverage"].fillna(0) > 0]
    w = (about["ci_high"] - about["ci_low"]) / (2 * about["band"] * about["published"].abs())
    w = w[np.isfinite(w)]
    return f"{w.median():.2f} ({len(w)})" if len(w) else "-"


def _decided_table(judged, minutes: dict[str, float], few=None, total: float | None = None) -> list[str]:
    """Per chapter: judged claims x builds, decided, (with ``few``, a mask of the rows, those
    inconclusive for too few runs), the runs they rest on, their intervals' width over the band's,
    the minutes spent and the rows decided per minute; the last line sums them (``total``: the
    minutes to divide by, else those of the chapters in the table)."""
    import math

    import pandas as pd

    from ..judge.across import DEFINITE

    head = ["chapter", "judged claims x builds", "decided", *(["inconclusive, too few runs"] if few is not None else []),
            "runs (median)", "interval / band, *about* rows (median, rows)", "minutes", "decided per minute"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    spent = 0.0
    for name, g in _by_chapter(judged):
        m = minutes.get(name, math.nan)
        d = int(g["outcome"].isin(DEFINITE).sum())
        n = pd.to_numeric(g["n"], errors="coerce").median()
        rows.append(f"| `{name}` | {len(g)} | {d} |" + (f" {int(few[g.index].sum())} |" if few is not None else "")
                    + f" {'-' if math.isnan(n) else f'{n:.0f}'} | {_width_over_band(g)} "
                    f"| {'-' if math.isnan(m) else f'{m:.1f}'} | {'-' if not m or math.isnan(m) else f'{d / m:.2f}'} |")
        spent += 0.0 if math.isnan(m) else m
    total = spent if total is None else total
    decided = int(judged["outcome"].isin(DEFINITE).sum())
    rows.append(f"| all | {len(judged)} | {decided} |" + (f" {int(few.sum())} |" if few is not None else "")
                + f" | {_width_over_band(judged)} | {total:.1f} | {decided / total if total else math.nan:.2f} |")
    return rows


def planned_run(flat=None, ref_flat=None, record=None) -> str:
    """What the newest committed whole `default` run decided on its own samples (a record written by a
    planned run: it holds its forecast), chapter by chapter: judged claims x builds, decided, and
    inconclusive for too few runs, with the minutes it spent; and the rows it left to `verdicts`,
    named, with the minutes `verdicts` adds for their chapters (forecast on the reference's
    times).  ``flat``: that campaign's verdict rows, where the caller has them."""
    import math

    from ..judge import budget, verdicts, yields
    from ..measure import campaigns
    from ..judge.across import DEFINITE

    recs = [r for r in timing.timing_records("default") if r.forecast]
    if record is not None and record.forecast and record.profile == "default":
        recs = [record]                       # the reader's own run, from its campaign's folder
    if not recs:
        return ""
    rec = recs[-1]
    where = (f"data/results/{rec.campaign}/{rec.file}" if rec is record else f"data/timing/{rec.file}")
    which = "Your run" if rec is record else "The newest whole `default` run"
    try:
        camp = campaigns.load(rec.campaign)
    except campaigns.NoCampaign:
        return ""
    if flat is None:
        flat = yields.run_flat(rec.campaign)
    judged = verdicts.judged(flat)
    minutes = timing._minutes_of(rec)
    few = yields.too_few(judged)
    rows = _decided_table(judged, minutes, few, total=sum(minutes.values()))
    decided = int(judged["outcome"].isin(DEFINITE).sum())
    left = judged[few | (judged["outcome"] == "not measured")]
    ref_flat = verdicts.reference_flat(ref_flat)
    ref_j = verdicts.judged(ref_flat) if ref_flat is not None else None
    every = len(ref_j) if ref_j is not None else len(judged)
    skipped = {**rec.left_out, **rec.not_reached}
    late = [n for n in rec.not_reached if n not in rec.left_out]
    lines = [f"{which} (`{where}`, campaign `{rec.campaign}`, "
             f"{rec.started[:10]}) measured for **{(rec.seconds or 0) / 60:.1f} minutes** of its "
             f"{rec.budget_minutes or BUDGET_MINUTES:g}-minute budget (its chapters' sweeps "
             f"{sum(minutes.values()):.1f} of them, the rest the pace probe and the plan) and decided **{decided} of the "
             f"{len(judged)}** judged claims x builds of the chapters it measured on its own samples "
             f"({decided / max(len(judged), 1):.0%}); the report judges {every} on the reference "
             f"({decided / max(every, 1):.0%} of them decided by this run).", "", *rows, ""]
    if skipped:
        count = {n: (int((ref_j["experiment"] == n).sum()) if ref_j is not None else len(v)) for n, v in skipped.items()}
        lines += [f"Not measured in this run's budget ({sum(count.values())} judged rows on the reference; their "
                  f"chapters did not fit at the machine's pace, {rec.choice or budget.CHOSEN_BEFORE}"
                  + (f"; {', '.join(f'`{n}`' for n in late)} fitted the forecast but not the minutes left at the "
                     "pace the run kept" if late else "") + "): "
                  + "; ".join(f"`{n}` ({k} rows)" for n, k in count.items())
                  + ". A faster machine, `--minutes`, or `PROFILE=verdicts make reproduce` measures them.", ""]
    least = {n: len(v) for n, v in rec.fewest.items() if camp.has(n)}   # one it left out after: not measured
    if least:
        lines += ["Measured at one run a point, the figures' runs (the runs their claims need did not fit at the "
                  "machine's pace; their judged rows have too few runs): "
                  + "; ".join(f"`{n}` ({k} row{'s' if k != 1 else ''})" for n, k in least.items())
                  + ". A faster machine, `--minutes`, or `PROFILE=verdicts make reproduce` measures their claims.", ""]
    open_ = straddling(flat, " by this run")
    if open_:
        lines += [open_, ""]
    if len(left):
        extra = yields.verdicts_adds(sorted(set(left["experiment"])))
        named = "; ".join(
            f"`{name}` ({'?' if math.isnan(extra[name]) else f'{extra[name]:.1f}'} more minutes in `verdicts`): "
            + ", ".join(f"`{r.claim_id}` @ {r.condition}" for r in g.itertuples())
            for name, g in left.groupby("experiment", sort=False))
        lines += [f"Left to `verdicts` by the plan ({len(left)} rows, {len(left) / max(len(judged), 1):.0%} of the judged "
                  f"ones; `b2_download/history/*` are the `history` profile's): {named}.", ""]
    return "\n".join(lines)


def runs_by_design(flat=None) -> str:
    """Per chapter: the estimands of its judged claims (from the reference campaign's verdict
    rows) and the runs a 95% interval of each needs (a best of 3: trials of 3 runs), the repeats
    `default` and `verdicts` give, and the minutes each profile's whole run in the reference
    campaign spent on it: what judging them costs (for the method chapter; computed when the book
    builds; ``flat``: the reference's verdict rows, where the caller has them)."""
    import math

    from ..judge import verdicts, yields
    from ..measure import campaigns

    flat = verdicts.reference_flat(flat)
    if flat is None:
        return ""
    judged = verdicts.judged(flat)
    judged = judged[judged["estimand"] != ""]
    # both profiles' minutes from the reference's own runs (the newest whole run of one profile may
    # be another machine's, at another pace)
    minutes = {p: timing._chapter_minutes(p, campaigns.reference_id()) for p in ("default", "verdicts")}
    rows = ["| chapter | judged claims x builds | what their intervals need | `default` gives | `verdicts` gives "
            "| minutes in `default` | minutes `verdicts` added |", "|---|---|---|---|---|---|---|"]
    for name, g in _by_chapter(judged):
        needs = yields.needs(g)
        exp = experiments.get(name)
        d, v = exp.resolve("default"), exp.resolve("verdicts")
        gives = f"{d['repeats']}" + (f" to {d['max_repeats']}" if d["max_repeats"] else "")

        def mins(p):
            m = minutes[p].get(name)
            return "-" if m is None or (isinstance(m, float) and math.isnan(m)) else f"{m:.1f}"
        rows.append(f"| `{name}` | {len(g)} | {'; '.join(needs)} | {gives} | {v['repeats']} "
                    f"| {mins('default')} | {mins('verdicts')} |")
    return ("What the judged claims need for a 95% interval, and what each profile gives them: per chapter, the "
            "intervals its judged claims rest on (on the reference campaign) and the runs each needs, "
            "the repeats of each profile, and the minutes the reference campaign's whole run of each spent on the "
            "chapter (`data/timing/`; `verdicts` runs into default's campaign and adds the rest).\n\n"
            + "\n".join(rows) + "\n")


def efficiency(flat=None) -> str:
    """Per chapter, on the reference campaign's `default` configuration (its `verdicts` runs
    included): the judged claims x builds, how many a definite outcome decides, the runs they rest
    on, how wide their intervals are against the band (the *about* rows: an interval can lie inside
    its band only under 1), the minutes the newest whole `default` and `verdicts` runs spent on the
    chapter, and the rows decided per measuring minute: what a plan of runs is measured against
    (for the method chapter; computed when the book builds; ``flat``: the reference's verdict rows,
    where the caller has them)."""
    from ..measure import campaigns
    from ..judge import verdicts

    flat = verdicts.reference_flat(flat)
    if flat is None:
        return ""
    minutes: dict[str, float] = {}
    for p in ("default", "verdicts"):
        for name, m in timing._chapter_minutes(p, campaigns.reference_id()).items():
            minutes[name] = minutes.get(name, 0.0) + m
    rows = _decided_table(verdicts.judged(flat), minutes)
    return ("How much each measuring minute decides, on the reference campaign (its `default` and `verdicts` "
            "runs, as their records give them): per chapter, the claims x "
            "builds judged on the builds they speak of, how many have a definite outcome (agrees, higher or lower), "
            "the runs their intervals rest on, their intervals' width over the band's (*about* rows), and the "
            "minutes the reference's whole `default` and `verdicts` runs spent on the chapter (`data/timing/`).\n\n"
            + "\n".join(rows) + "\n")
