"""How long measuring took and what the plan chose, as the method chapter's tables: the runs'
minutes per document and chapter (from their run files and ``data/timing/``), the profiles'
forecasts beside them, the rows a run decided per minute, and the builds.  Read from stored
records, computed when the book builds; never measured here.

Why it is long: its tables all read the same records (the run files' starts and ends, ``data/timing/``,
the plans of :mod:`gillab.judge.budget`) and print them side by side; apart, each would read them again.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path
from ..judge.budget import FEWEST
from ..judge.verdicts import asks_as_recorded
from ..measure import experiments
from ..measure.protocol import NOT_CONFIG
from ..measure.profiles import BUDGET_MINUTES, VERDICTS_MINUTES
from ..paths import repo_root


def measuring_times(profile: str = "default") -> str:
    """How long the reference campaign's runs of ``profile``'s configuration took, per document and
    chapter, from the start and end its run files record (for the method chapter; computed when
    the book builds, never typed).  For `default` that counts its `verdicts` runs too (default's
    configuration with more runs: a reference is measured with `verdicts`), each profile named
    with its minutes.  Only runs that hold samples in the store count."""
    from ..measure import campaigns

    ref = campaigns.reference_id()
    if ref is None:
        return "*No reference campaign in `data/results/`.*\n"
    camp = campaigns.load(ref)
    profiles = (profile, "verdicts") if profile == "default" else (profile,)
    per_doc, per_profile, rows = {}, {}, []
    for name in experiments.names():
        if not camp.has(name):
            continue
        secs, n = 0.0, 0
        for run in campaigns.runs_that_stored(camp.store(name)):
            took = campaigns.run_seconds(run)
            if run.get("profile") not in profiles or took is None:
                continue
            secs += took
            n += 1
            per_profile[run["profile"]] = per_profile.get(run["profile"], 0.0) + took
        if not n:
            continue
        doc = experiments.get(name).document[:3]
        per_doc[doc] = per_doc.get(doc, 0.0) + secs
        rows.append(f"| `{name}` | {doc} | {n} | {secs / 60:.1f} |")
    if not rows:
        return (f"The committed reference campaign (`{ref}`) holds no run of the `{profile}` configuration."
                "\n\n" + reproduce_times(profile))
    total = sum(per_doc.values())
    used = [p for p in profiles if p in per_profile]
    which = (f"in the `{used[0]}` profile" if len(used) == 1 else
             "at the `{}` configuration, {}".format(profile, " and ".join(
                 f"{per_profile[p] / 60:.0f} in `{p}`" for p in used)))
    also = (f" (`{profile}`'s configuration with more runs)" if "verdicts" in used and profile != "verdicts" else "")
    head = (f"The committed reference campaign (`{ref}`) took **{total / 60:.0f} minutes** of measuring "
            f"{which}{also}, as its run files record, every run counted (a chapter measured again after its "
            f"code changed included): {_per_document(per_doc)}.\n\n")
    table = "| chapter | document | runs | minutes |\n|---|---|---|---|\n" + "\n".join(rows) + "\n"
    return head + table + "\n" + reproduce_times(profile)


def chapter_times(profile: str = "seed", campaign: str | None = None) -> dict:
    """The record of how long ``profile``'s samples took to measure in ``campaign`` (default: the
    reference), chapter by chapter, from its run files: every run that stored samples of the
    profile's configuration (a profile measured in several sittings, or whose samples `default`
    and `verdicts` runs measured, has several), with its time, samples and load average, and how
    much of the profile's sweep the campaign holds (``gillab timing`` writes it to
    ``data/timing/``; the method chapter shows it)."""
    from ..measure import campaigns, metadata, sweep

    cid = campaign or campaigns.reference_id()
    if cid is None:
        raise campaigns.NoCampaign("no reference campaign to read")
    camp = campaigns.load(cid)
    out = {"kind": "chapter times", "profile": profile, "campaign": cid, "written": metadata.now(),
           "git": metadata.git_commit(), "experiments": []}
    for name in experiments.names():
        cov = sweep.coverage(name, profile, cid)
        runs = [{k: run.get(k) for k in ("run_id", "profile", "started", "finished", "status", "measured",
                                         "skipped_already_measured", "failed", "loadavg_start", "loadavg_end",
                                         "cpu_steal_share")} | {"seconds": campaigns.run_seconds(run)}
                for run in (campaigns.runs_that_stored(camp.store(name), cov["config_id"]) if camp.has(name) else [])]
        p = cov["params"]
        out["experiments"].append({
            "experiment": name, "config_id": cov["config_id"], "planned": cov["planned"], "stored": cov["stored"],
            "to_measure": cov["to_measure"], "missing_conditions": cov["missing_conditions"],
            "seconds": round(sum(r["seconds"] or 0.0 for r in runs), 1), "runs": runs,
            "params": {k: p[k] for k in NOT_CONFIG if k in p}})
    return out


def write_chapter_times(profile: str = "seed", campaign: str | None = None) -> Path:
    """:func:`chapter_times` as ``data/timing/<profile>-chapters.json`` (one file per profile,
    rewritten as sittings add to the campaign)."""
    rec = chapter_times(profile, campaign)
    path = timing_dir() / f"{profile}-chapters.json"
    path.write_text(json.dumps(rec, indent=1, default=str) + "\n")
    return path


def chapter_times_record(profile: str = "seed") -> dict | None:
    """The committed :func:`chapter_times` record of ``profile`` (None without one)."""
    path = timing_dir() / f"{profile}-chapters.json"
    return json.loads(path.read_text()) if path.is_file() else None


def profile_minutes(profile: str = "seed") -> str:
    """Per chapter, the minutes ``default`` took (the newest whole run) beside those of
    ``profile``'s samples in the reference campaign (all its sittings), with how much of the
    profile's sweep the campaign holds: what measuring the documents' own sizes costs on 2 cores
    (for the method chapter; from the committed records in ``data/timing/``)."""
    rec = chapter_times_record(profile)
    if rec is None:
        return f"*No record of the `{profile}` profile's chapter times in `data/timing/` (`gillab timing -P {profile}`).*\n"
    default = (timing_records("default") or [None])[-1]
    dmin = _minutes_of(default)          # a chapter's planned runs and its later rounds, summed
    rows = [f"| chapter | minutes in `default` | minutes in `{profile}` | `{profile}` runs (profiles) "
            "| samples stored of those asked |", "|---|---|---|---|---|"]
    total, whole = 0.0, 0
    for e in rec["experiments"]:
        total += e["seconds"]
        asks = asks_as_recorded(e, profile)
        whole += e["to_measure"] == 0 and asks
        profiles = sorted({r["profile"] for r in e["runs"]})
        held = f"{e['stored']:,} of {e['planned']:,}" + ("" if e["to_measure"] == 0 else " (**not complete**)")
        if not asks:
            held += " (**the profile now asks for more**: measure it again with `-P " + profile + "`)"
        d = dmin.get(e["experiment"])
        rows.append(f"| `{e['experiment']}` | {'-' if d is None else f'{d:.1f}'} | {e['seconds'] / 60:.1f} "
                    f"| {len(e['runs'])} ({', '.join(profiles) or '-'}) | {held} |")
    n = len(rec["experiments"])
    from ..measure import campaigns

    where = (f"the reference campaign `{rec['campaign']}`" if rec["campaign"] == campaigns.reference_id() else
             f"campaign `{rec['campaign']}` (the reference when it was measured; the reference since holds no "
             "such run)")
    return (f"The `{profile}` profile in {where}: **{total / 60:.0f} minutes** of "
            f"measuring over its sittings, as its run files record (`data/timing/{profile}-chapters.json`, written "
            f"{rec['written'][:10]}); {whole} of {n} chapters hold every sample the profile asks for today. A chapter "
            f"whose `{profile}` configuration is `default`'s (the same sizes) shares its samples, so its runs are "
            "`default`'s and `verdicts`'s. The minutes in `default` are the newest whole run's"
            + (f" (`{default.campaign}`, every round of a chapter counted)" if default else "") + ".\n\n"
            + "\n".join(rows) + "\n")


def _by_chapter(judged):
    """(chapter, its judged rows) in the report's order, for the chapters that have any."""
    for name in experiments.names():
        g = judged[judged["experiment"] == name]
        if not g.empty:
            yield name, g


def straddling(flat, where: str = "") -> str:
    """Per chapter, the judged rows inconclusive with enough runs (their interval straddles an edge
    of the band), and how many more runs each would need at its current spread
    (:func:`gillab.judge.budget.runs_to_decide`):
    within the 20 a point may get, and the median of those, or not within them."""
    import statistics as st

    from ..judge import verdicts
    from ..judge.budget import runs_to_decide
    from .. import stats

    every = verdicts.straddling(verdicts.judged(flat))
    open_ = every[every["estimand"].isin([*stats.ORDER, stats.RATIO])]
    apart = every[~every.index.isin(open_.index)]
    if open_.empty:
        return ""
    rows = ["| chapter | straddling their band | decided within 20 at their spread (median more runs, pairs or "
            "trials) | not within 20 |", "|---|---|---|---|"]
    for name, g in _by_chapter(open_):
        more = [runs_to_decide(r) for _, r in g.iterrows()]
        within = [k for k in more if k is not None]
        rows.append(f"| `{name}` | {len(g)} | {len(within)}" + (f" ({st.median(within):g})" if within else "")
                    + f" | {len(more) - len(within)} |")
    return (f"Rows left inconclusive{where} with enough runs (their interval straddles an edge of the band), and how "
            "many more runs each would need at its current spread to lie wholly inside or outside the band (the "
            "interval's ranks read as a normal distribution's quantiles: a projection to plan runs with, not an "
            "interval; beyond 20 runs a point gets no more rounds, and a row is decided only by a narrower "
            "spread):\n\n" + "\n".join(rows) + "\n"
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


def _minutes_of(rec) -> dict[str, float]:
    """Per chapter, the minutes a whole run's record (a :class:`gillab.record.RunRecord`) says it
    spent: its planned run and its later rounds, summed."""
    out: dict[str, float] = {}
    for e in (rec.experiments if rec is not None else []):
        out[e["experiment"]] = out.get(e["experiment"], 0.0) + e["seconds"] / 60
    return out


def _chapter_minutes(profile: str, campaign: str | None = None) -> dict[str, float]:
    """Per chapter, the minutes the newest whole ``profile`` run (``data/timing/``; into
    ``campaign``, if given) spent on it."""
    return _minutes_of(([r for r in timing_records(profile) if campaign is None or r.campaign == campaign]
                        or [None])[-1])


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

    from ..judge import budget, verdicts
    from ..measure import campaigns
    from .. import stats
    from ..judge.across import DEFINITE

    recs = [r for r in timing_records("default") if r.forecast]
    if record is not None and record.forecast and record.profile == "default":
        recs = [record]                       # the reader's own run, from its campaign's folder
    if not recs:
        return ""
    rec = recs[-1]
    where = (f"data/results/{rec.campaign}/{rec.file}" if rec is record else f"data/timing/{rec.file}")
    which = "Your run" if rec is record else "The newest whole `default` run"
    try:
        campaigns.load(rec.campaign)
    except campaigns.NoCampaign:
        return ""
    if flat is None:
        flat = verdicts.flat(verdicts.verdicts(rec.campaign, profile="default"))
    judged = verdicts.judged(flat)
    minutes = _minutes_of(rec)
    few = judged["why"].map(stats.too_few_runs)
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
    if rec.fewest:
        least = {n: len(v) for n, v in rec.fewest.items()}
        lines += ["Measured at one run a point, the figures' runs (the runs their claims need did not fit at the "
                  "machine's pace; their judged rows have too few runs): "
                  + "; ".join(f"`{n}` ({k} row{'s' if k != 1 else ''})" for n, k in least.items())
                  + ". A faster machine, `--minutes`, or `PROFILE=verdicts make reproduce` measures their claims.", ""]
    open_ = straddling(flat, " by this run")
    if open_:
        lines += [open_, ""]
    if len(left):
        extra = {}
        for name in sorted(set(left["experiment"])):
            try:
                v = budget.forecast_chapter(name, "verdicts", None, [], new_campaign=True).seconds
                d = budget.forecast_chapter(name, "default", None, [], new_campaign=True).seconds
                extra[name] = max(0.0, v - d) / 60
            except Exception:   # noqa: BLE001 - a forecast that cannot be made is shown as unknown
                extra[name] = math.nan
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

    from ..judge import claims, verdicts
    from ..measure import campaigns
    from .. import stats

    flat = verdicts.reference_flat(flat)
    if flat is None:
        return ""
    judged = verdicts.judged(flat)
    judged = judged[judged["estimand"] != ""]
    # both profiles' minutes from the reference's own runs (the newest whole run of one profile may
    # be another machine's, at another pace)
    minutes = {p: _chapter_minutes(p, campaigns.reference_id()) for p in ("default", "verdicts")}
    rows = ["| chapter | judged claims x builds | what their intervals need | `default` gives | `verdicts` gives "
            "| minutes in `default` | minutes `verdicts` added |", "|---|---|---|---|---|---|---|"]
    for name, g in _by_chapter(judged):
        needs = []
        for (estimand, cid), _ in g.groupby(["estimand", "claim_id"]):
            need = stats.runs_needed(estimand)
            size = claims.trial_size(cid) if cid in claims.table().index else 1
            words = ("no interval (no runs are enough)" if need is None else
                     f"{need * size} runs ({need} trials of {size})" if size > 1 else
                     f"{need} run{'s' if need != 1 else ''}{' a side' if estimand == stats.RATIO else ''}")
            needs.append(f"{estimand}: {words}")
        exp = experiments.get(name)
        d, v = exp.resolve("default"), exp.resolve("verdicts")
        gives = f"{d['repeats']}" + (f" to {d['max_repeats']}" if d["max_repeats"] else "")

        def mins(p):
            m = minutes[p].get(name)
            return "-" if m is None or (isinstance(m, float) and math.isnan(m)) else f"{m:.1f}"
        rows.append(f"| `{name}` | {len(g)} | {'; '.join(dict.fromkeys(needs))} | {gives} | {v['repeats']} "
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
        for name, m in _chapter_minutes(p, campaigns.reference_id()).items():
            minutes[name] = minutes.get(name, 0.0) + m
    rows = _decided_table(verdicts.judged(flat), minutes)
    return ("How much each measuring minute decides, on the reference campaign (its `default` and `verdicts` "
            "runs, as their records give them): per chapter, the claims x "
            "builds judged on the builds they speak of, how many have a definite outcome (agrees, higher or lower), "
            "the runs their intervals rest on, their intervals' width over the band's (*about* rows), and the "
            "minutes the reference's whole `default` and `verdicts` runs spent on the chapter (`data/timing/`).\n\n"
            + "\n".join(rows) + "\n")


def _per_document(seconds: dict) -> str:
    """'document 000: 11.1, document 001: 2.1 minutes' from document -> seconds."""
    return ", ".join(f"document {d}: {v / 60:.1f}" for d, v in sorted(seconds.items())) + " minutes"


def timing_dir() -> Path:
    """Committed records of whole ``gillab reproduce`` runs (copied unchanged from the campaign
    that wrote them), whatever ``$GILLAB_DATA`` says."""
    return repo_root() / "data" / "timing"


def timing_records(profile: str = "default") -> list:
    """The committed reproduce records (:class:`gillab.record.RunRecord`) of ``profile`` that ran to
    their end (:attr:`gillab.record.RunRecord.ended`), oldest first."""
    from ..record import load

    recs = [load(f) for f in timing_dir().glob("reproduce-*.json")]
    return sorted((r for r in recs if r.profile == profile and r.ended), key=lambda r: r.started)


def profile_drift(record) -> list[str]:
    """What in today's profile differs from the one ``record`` (a :class:`gillab.record.RunRecord`
    or its dict) measured: per experiment, its configuration or a parameter that says how much to
    measure (repeats, grids, builds)."""
    from ..record import RunRecord

    record = RunRecord.of(record)
    out = []
    # a chapter's planned run (its later rounds only add repeats where intervals straddled a band)
    seen = {e["experiment"]: e for e in record.experiments if e.get("phase", "plan") == "plan"}
    for name in experiments.names():
        if name not in seen:
            # left out by the budget, or no longer in time at the run's pace: the plan, not drift
            if name not in record.left_out and name not in record.not_reached:
                out.append(f"{name}: not in the record")
            continue
        exp, rec = experiments.get(name), seen[name]
        # a chapter its budget measured at one run a point: against the profile at those runs
        p = exp.resolve(record.profile, FEWEST if name in record.fewest else None)
        if exp.config_id(p) != rec["config_id"]:
            out.append(f"{name}: configuration {rec['config_id']} then, {exp.config_id(p)} now")
        for k in NOT_CONFIG:
            if k in rec["params"] and json.dumps(rec["params"][k], sort_keys=True) != json.dumps(p.get(k), sort_keys=True):
                out.append(f"{name}: {k} {rec['params'][k]!r} then, {p.get(k)!r} now")
    return out


def reproduce_times(profile: str = "default") -> str:
    """How long the newest committed whole run of ``profile`` took (``gillab reproduce``), per
    document and chapter, with how quiet the machine was and whether today's profile is the one
    it measured."""
    recs = timing_records(profile)
    if not recs:
        return f"*No record of a whole `{profile}` run in `data/timing/`.*\n"
    r = recs[-1]
    per_doc, rows = {}, []
    per_chapter: dict[str, dict] = {}       # a chapter's planned run and its later rounds, summed
    for e in r.experiments:
        c = per_chapter.setdefault(e["experiment"], {"measured": 0, "failed": 0, "seconds": 0.0, "rounds": 0})
        c["measured"] += e["measured"]
        c["failed"] += e["failed"]
        c["seconds"] += e["seconds"]
        c["rounds"] += e.get("phase") == "rounds"
    for name, c in per_chapter.items():
        doc = experiments.get(name).document[:3]
        per_doc[doc] = per_doc.get(doc, 0.0) + c["seconds"]
        more = f" (+{c['rounds']} round{'s' if c['rounds'] != 1 else ''})" if c["rounds"] else ""
        rows.append(f"| `{name}`{more} | {doc} | {c['measured']} | {c['failed']} | {c['seconds'] / 60:.1f} |")
    minutes = (r.seconds or 0) / 60
    other = minutes - sum(per_doc.values()) / 60      # not a chapter's: probes, forecast, start-up
    within = "within" if round(minutes, 1) <= BUDGET_MINUTES else "**over**"   # as printed, to 0.1 minute
    given = r.budget_minutes
    budget = (f"{within} the {BUDGET_MINUTES}-minute budget of the report on 2 cores" if profile == "default" else
              f"{'within' if round(minutes, 1) <= float(given) else '**over**'} the {float(given):g} minutes it "
              f"was given (`{profile}` measures at most {VERDICTS_MINUTES} in all)" if profile == "verdicts" and given
              else "a profile with no budget")
    # a chapter's later rounds count its planned samples as resumed again: its plan's count only
    resumed = sum(int(e.get("resumed") or 0) for e in r.experiments if e.get("phase", "plan") == "plan")
    failed = sum(int(e.get("failed") or 0) for e in r.experiments)
    steal = r.cpu_steal_share
    commit = (r.git or {}).get("commit") or "?"
    drift = profile_drift(r)
    from ..judge import verdicts

    grids = verdicts.reference_grids() if profile == "default" else None
    lines = [
        f"A whole `{profile}` run, `gillab reproduce`"
        f"{' from an empty campaign' if profile == 'default' else ''} on {r.started[:10]} (commit "
        f"`{commit[:10]}`, machine `{r.machine.get('machine_id')}`"
        + (f" of kind `{r.machine['fingerprint']}`" if r.machine.get("fingerprint") else "")
        + f"), measured for **{minutes:.1f} minutes**, "
        f"{budget}: "
        + _per_document(per_doc)
        + (f" (the other {other:.1f} went to its pace probes, its forecast and starting each chapter)"
           if other >= 0.05 else "") + ". "
        f"The 1-minute load average went from {(r.loadavg_start or ['?'])[0]} to "
        f"{(r.loadavg_end or ['?'])[0]}"
        + (f", and the hypervisor took {steal:.1%} of the CPU time" if steal is not None else "") + ". "
        + ("Where a chapter's grid times its builds would not fit, the profile measures the document's own GIL "
           "build and today's at every point and the other builds on a small grid (`full_grid`, `small_grid` in "
           "`profiles.toml`); `-p full_grid=all` measures everything"
           + (", as the reference campaign did." if grids == "all" else
              ". The reference campaign measured the profile's grids, as this run did." if grids == "profile"
              else ".") if profile == "default" else
           f"It ran into a campaign that already held {resumed:,} of its samples (measured before it, by "
           "another run), and resumed them: the minutes are what it added."),
        "",
        *([f"{failed} sample{'s' if failed != 1 else ''} failed (recorded with why, in the chapter's store).", ""]
          if failed else []),
        *([_plan_words(r), ""] if r.forecast else []),
        "| chapter | document | samples | failed | minutes |", "|---|---|---|---|---|", *rows, "",
        (f"The profile has changed since this record: {'; '.join(drift)}." if drift else
         f"Today's `{profile}` profile is the one this run measured (`data/timing/{r.file}`)."),
    ]
    return "\n".join(lines) + "\n"


def _plan_words(r) -> str:
    """What a planned run's record (a :class:`gillab.record.RunRecord` or its dict) says of its
    plan: the machine's pace against the times it forecast from, the forecast, the chapters left
    out, cut or given their runs back at their turn, and the rounds after the plan."""
    from ..record import RunRecord

    r = RunRecord.of(r)
    late = r.fewest_late
    # chosen so before measuring: those cut at their turn, and those the first plan cut and their turn restored
    fewest = {n: v for n, v in r.fewest.items() if n not in late}
    first = {**fewest, **{n: [] for n in r.restored}}
    fc = sum((c.get("fewest_seconds") or c["seconds"]) if c["experiment"] in first else c["seconds"]
             for c in r.forecast if c["experiment"] not in r.left_out) / 60
    out = [f"It planned its runs before measuring: {r.speed or 'at the times read'}; forecast "
           f"{fc:.1f} minutes for the chapters it chose"]
    if r.pace is not None and r.paces:
        out.append(f"redid the plan at each chapter's turn at the pace of every probe so far (at its end "
                   f"{r.pace:.2f}x)")
    for names, when, why in ((list(fewest), "", "did not fit at that pace"),
                             (late, " when its turn came", "no longer fit the minutes left at the pace it kept")):
        if names:
            rows = sum(len(r.fewest[n]) for n in names)
            out.append(f"measured {', '.join(f'`{n}`' for n in names)} at one run a point{when}, its figures (the runs "
                       f"of {'their' if len(names) > 1 else 'its'} claims {why}: {rows} judged "
                       f"row{'s' if rows != 1 else ''} left with too few runs)")
    if r.restored:
        out.append(f"gave {', '.join(f'`{n}`' for n in r.restored)} its planned runs back when its turn came "
                   "(the probes since the first measured a faster machine)")
    if r.left_out:
        from ..judge.budget import CHOSEN_BEFORE

        out.append(f"left out {', '.join(f'`{n}`' for n in r.left_out)} ({r.choice or CHOSEN_BEFORE}: "
                   "they did not fit the budget at that pace)")
    if r.not_reached:
        out.append(f"and did not reach {', '.join(f'`{n}`' for n in r.not_reached)} in time")
    if r.claims_first:
        late = r.figures_not_reached
        out.append("measured every chapter's claims first and the points no claim reads after them (its planned "
                   "runs did not all fit)" + (f", and did not reach those of {', '.join(f'`{n}`' for n in late)}"
                                             if late else ""))
    if r.rounds:
        per = {}
        for x in r.rounds:
            per[x["experiment"]] = per.get(x["experiment"], 0) + 1
        out.append("then spent what was left on more rounds where judged rows straddled their band ("
                   + ", ".join(f"`{n}` {k}" for n, k in per.items()) + ")")
    return "; ".join(out) + "."


def whole_run_records() -> dict[str, list]:
    """Per campaign (every one in ``data/results/``, oldest first), the records of its whole runs
    (``reproduce-*.json`` in its folder), oldest first; then those in ``data/timing/`` whose
    campaign is not in ``data/results/`` (each with its ``file``)."""
    from ..measure import campaigns

    out: dict[str, list[dict]] = {}
    seen = set()
    from ..record import load

    for c in campaigns.all_campaigns():
        recs = campaigns.whole_runs(c)
        out[c.id] = sorted(recs, key=lambda r: r.started)
        seen |= {r.file for r in recs}
    for f in sorted(timing_dir().glob("reproduce-*.json")):
        if f.name not in seen:
            rec = load(f)
            out.setdefault(rec.campaign or "?", []).append(rec)
    return out


def _pace_cell(rec) -> str:
    """A whole run's pace against the times its forecast read, as its record says: every probe's
    where it holds that, and its first probe's where the plan read another."""
    speed = rec.speed or ""
    if rec.speed_factor is None or not speed:
        return "not recorded"
    if speed.startswith("no build"):
        return "not compared (no time to compare with)"
    if rec.pace is None or abs(rec.pace - rec.speed_factor) < 0.005:
        return f"{rec.speed_factor:.2f}x"
    return f"{rec.pace:.2f}x (first probe {rec.speed_factor:.2f}x)"


def _when(stamp) -> float:
    import datetime as dt

    try:
        return dt.datetime.fromisoformat(stamp).timestamp()
    except (TypeError, ValueError):
        return float("nan")


def _field(rec, key: str):
    """A key of a chapter's run file (a dict) or a field of a whole run's record."""
    return rec.get(key) if isinstance(rec, dict) else getattr(rec, key, None)


def _span(rec) -> tuple[float, float]:
    """A run's start and end (its start where it never finished), in seconds: a chapter's run file
    or a whole run's record."""
    return _when(_field(rec, "started")), _when(_field(rec, "finished") or _field(rec, "started"))


# runs apart from a whole run further apart than this (one's end to the next one's start) are two stretches
STRETCH_GAP_S = 3600.0


def apart_runs(c, whole: list) -> list[list[dict]]:
    """The runs of ``c``'s chapters that measured something outside every whole run of it (a
    chapter measured again on its own, `gillab measure`/`run`, or a campaign measured chapter by
    chapter), in stretches: the runs between two whole runs (or before the first, after the last)
    with no more than :data:`STRETCH_GAP_S` between one and the next are one stretch of measuring,
    oldest first, and each has a steadiness too."""
    from ..measure import campaigns

    spans = [_span(r) for r in whole]
    stretches: list[list[dict]] = []
    place = None
    for r in sorted(campaigns.runs(c), key=lambda r: r.get("started") or ""):
        t = _when(r.get("started"))
        if not r.get("measured") or any(a <= t <= b for a, b in spans):
            continue
        between = sum(a < t for a, _ in spans)
        if place != between or t - _span(stretches[-1][-1])[1] > STRETCH_GAP_S:
            stretches.append([])
        place = between
        stretches[-1].append(r)
    return stretches


def apart_steadiness(runs: list[dict]):
    """The rule (:func:`gillab.judge.steadiness.of`) over the runs apart from a whole run, read as
    one stretch: their probes in order and the largest steal share of any; *not recorded* where
    one of them took no probe (a run before the probe existed)."""
    from ..judge import steadiness

    bare = sum(not r.get("probes") for r in runs)
    if bare:
        return steadiness.Steadiness(steadiness.NOT_RECORDED, 0, None, None,
                                     f"{bare} of the {len(runs)} runs took no pace probe")
    steals = [r["cpu_steal_share"] for r in runs if isinstance(r.get("cpu_steal_share"), (int, float))]
    return steadiness.of({"probes": [p for r in runs for p in r["probes"]],
                          "cpu_steal_share": max(steals) if steals else None})


def _still_read(c, runs: list[dict]) -> str:
    """Which chapters' samples of ``runs`` no page reads now, in words to append to a row ('' where
    every sample is read): a chapter measured again keeps its former samples in its file, read by
    nothing (:func:`gillab.judge.results.current_rows`), and samples of a configuration no profile
    resolves to today (:func:`_configs`) are read by no page either."""
    from ..judge import results

    ids, gone = {r.get("run_id") for r in runs}, []
    for exp in dict.fromkeys(r.get("experiment") for r in runs):
        df = c.store(exp).frame()
        if df.empty or "run_id" not in df.columns:
            continue
        stored = int(df["run_id"].isin(ids).sum())
        cur = results.current_rows(df, exp)
        read = int((cur["run_id"].isin(ids) & cur["config"].isin(_configs(exp))).sum())
        if stored and read < stored:
            gone.append(exp if not read else f"{1 - read / stored:.0%} of {exp}")
    if not gone:
        return ""
    return f"; not read now (measured again, or at sizes no profile asks for): {', '.join(gone)}"


@functools.lru_cache(maxsize=None)
def _configs(name: str) -> frozenset[str]:
    """The configuration ids the profiles of chapter ``name`` resolve to today: the samples of any
    other configuration (a chapter measured again at new sizes) no page reads."""
    from ..measure.profiles import PROFILES, ParameterError

    exp, out = experiments.get(name), set()
    for profile in PROFILES:
        try:
            out.add(exp.config_id(exp.resolve(profile)))
        except (ParameterError, KeyError):
            continue
    return frozenset(out)


def _inside(c, rec) -> list[dict]:
    """The chapters' runs of ``c`` that a whole run's record spans."""
    from ..measure import campaigns

    a, b = _span(rec)
    return [r for r in campaigns.runs(c) if a <= _when(r.get("started")) <= b]


def _probes_cell(st) -> str:
    """The steadiness table's probes cell: how many, the slowest over the fastest."""
    from ..judge import steadiness

    if st.outcome == steadiness.NOT_RECORDED:
        return "not recorded"
    return f"{st.probes}" + (f" ({st.spread:.2f}x)" if st.spread is not None else "")


def _apart_row(name: str, runs: list[dict], c=None) -> str:
    from ..judge import steadiness

    st = apart_steadiness(runs)
    names = list(dict.fromkeys(r.get("experiment", "?") for r in runs))
    chapters = ", ".join(names) if len(names) <= 4 else f"{len(names)} chapters"
    profiles = ", ".join(f"`{p}`" for p in dict.fromkeys(r.get("profile", "?") for r in runs))
    first, last = runs[0], runs[-1]
    span = " → ".join(((r.get(k) or "?")[:16].replace("T", " ")) for r, k in ((first, "started"), (last, "finished")))
    load = " → ".join(str((r.get(k) or ["?"])[0]) for r, k in ((first, "loadavg_start"), (last, "loadavg_end")))
    steals = [r["cpu_steal_share"] for r in runs if isinstance(r.get("cpu_steal_share"), (int, float))]
    stolen = f"{max(steals):.1%} (the most of its runs)" if steals else "not recorded"
    probes = _probes_cell(st)
    some = any(r.get("probes") for r in runs)
    verdict = (f"**{st.outcome}**: {st.why}" if st.outcome != steadiness.NOT_RECORDED else
               f"not recorded: {st.why}" if some else "not recorded")
    return (f"| {name} | {len(runs)} run{'s' if len(runs) != 1 else ''} apart from a whole run ({profiles}: "
            f"{chapters}), {span}{_still_read(c, runs) if c is not None else ''} | none (no forecast) | {load} "
            f"| {stolen} "
            f"| {probes} | {verdict} |")


def steadiness_table() -> str:
    """Each campaign's whole runs, their pace beside their steadiness (:mod:`gillab.judge.steadiness`):
    the pace their forecast measured, the load average from start to end, the share of CPU time
    stolen over the run, the pace probes (how many, the slowest over the fastest) and what the
    rule says; a record written before the probe says *not recorded*, and a campaign without a
    whole-run record says so (for the method chapter; computed when the book builds)."""
    from ..judge import steadiness
    from ..measure import campaigns

    committed = {c.id for c in campaigns.all_campaigns()}
    rows = ["| campaign | whole run | pace (x the time its forecast read) | load average, start → end "
            "| CPU stolen over the run | pace probes (slowest / fastest) | steadiness |", "|---|---|---|---|---|---|---|"]
    by_id = {c.id: c for c in campaigns.all_campaigns()}
    ref = campaigns.reference_id()      # which samples no page reads: said of the reference's runs (reading
    for cid, recs in whole_run_records().items():   # every campaign's samples would slow the book down)
        name = f"`{cid}`" + ("" if cid in committed else " (not in `data/results/`)")
        apart = apart_runs(by_id[cid], recs) if cid in by_id else []
        if not recs:
            rows.append(f"| {name} | no whole-run record in its folder | not recorded | not recorded | not recorded "
                        "| not recorded | not recorded |")
        for r in recs:
            st = steadiness.of(r)
            load = " → ".join(str((getattr(r, k) or ["?"])[0]) for k in ("loadavg_start", "loadavg_end"))
            steal = r.cpu_steal_share
            probes = _probes_cell(st)
            verdict = st.outcome if st.outcome == steadiness.NOT_RECORDED else f"**{st.outcome}**: {st.why}"
            later = _still_read(by_id[cid], _inside(by_id[cid], r)) if cid == ref else ""
            rows.append(f"| {name} | `{r.profile}`, {(r.started or '?')[:16].replace('T', ' ')}{later} "
                        f"| {_pace_cell(r)} | {load} | {'not recorded' if steal is None else f'{steal:.1%}'} "
                        f"| {probes} | {verdict} |")
        rows += [_apart_row(name, runs, by_id[cid] if cid == ref else None) for runs in apart]
    return ("Every campaign's whole runs (`gillab reproduce`), their pace beside their steadiness, from the "
            "records in each campaign's folder (and `data/timing/`): " + steadiness.rule_words() + " "
            "(`gillab.judge.steadiness`, fixed before any sitting was read against it; it names no CPU). A record "
            "written before the probe existed holds no probes: its steadiness is *not recorded*, whatever its load "
            "and steal were. Chapters measured on their own outside a whole run (`gillab measure` or `run`: a "
            "chapter measured again, or a campaign measured chapter by chapter) take the same probes (the runs before the "
            "probe existed took none), and their runs between two whole runs (or before the first, after the last), "
            f"none more than {STRETCH_GAP_S / 3600:g} hour after the one before, are read as one stretch, on a row "
            "of their own: it has no forecast, so no pace against one (*none*), and "
            "its steal is the most any of its runs lost. The reference's rows say which of their chapters' samples "
            "no page reads now (the chapter was measured again, or at sizes no profile asks for since): their "
            "steadiness no longer bears on a result.\n\n" + "\n".join(rows) + "\n")


def alone_rule() -> str:
    """The rule that says whether a sample was measured alone (:mod:`gillab.measure.alone`), in words
    from its constants, for the method chapter."""
    from ..judge import lexicon
    from ..measure import alone

    same = lexicon.about("the same")
    return (f"**The rule:** {alone.words()}. {alone.MOST_FOREIGN_CPUS:g} of a CPU is {alone.MOST_FOREIGN_CPUS / 2:.0%} "
            f"of a 2-core machine: beside a CPU-bound sample that uses both CPUs, it can shift the sample by about "
            f"{alone.MOST_FOREIGN_CPUS / 2:.0%}, under the band of \"the same\" (within {same:.0%}).\n")


def builds_table() -> str:
    """Every build of builds.toml as a Markdown table, for the method chapter (narrow enough to
    read at 1300 px: the full sha256 is in builds.toml): its origin (the registry, the package, the
    version fetched where it was built here, the upstream tarball's checksum), then the retired
    builds whose samples earlier campaigns hold, each with why nothing builds it now."""
    import shlex

    from ..measure import provision
    from ..measure.provision import package_version

    lines = ["| build (built here?) | origin: registry, package, checksum | configure flags |", "|---|---|---|"]
    for spec in provision.all_specs():
        s = spec.src
        rec = provision.read_marker(spec)
        twin = f"<br>and `{spec.gil_twin[0]}`:<br>{spec.gil_twin[1]}={spec.gil_twin[2]}" if spec.gil_twin else ""
        lacks = [m for m, ok in (rec or {}).get("modules", {}).items() if not ok]
        verb = "unpacked" if spec.prebuilt else "built"
        built = (f"{verb} in {rec['build_seconds']:.0f} s" + (f"<br>without {', '.join(lacks)}" if lacks else "")
                 if rec and rec.get("build_seconds") else "not built")
        fetched = package_version(rec)
        if spec.debian_binary:
            how = (rec or {}).get("sys_version", "").split("[", 1)[-1].rstrip("]") if rec else ""
            n = len((rec or {}).get("packages", []))
            source = (f"Debian {s['suite']}, binary package `{s['deb']}`" + (f" {fetched}" if fetched else "")
                      + ": built by Debian" + (f" with {how}" if how else "") + ", unpacked here"
                      + (f" with the {n} packages it needs (its suite's C library among them)" if n else "")
                      + " into a private root<br>each package checked by apt against the suite's signed index")
            args = (rec or {}).get("builder_configure_args")
            used = [f for f in shlex.split(args) if f.startswith(("--enable-", "--disable-", "--with-lto"))] \
                if args is not None else []
            flags = "<br>".join([*(f"`{f}`" for f in used), "(Debian's)"])
        elif spec.prebuilt:
            group, artifact, version = s["maven"].split(":")
            how = (rec or {}).get("sys_version", "").split("[", 1)[-1].rstrip("]") if rec else ""
            source = (f"Maven Central, `{group}:{artifact}` {version} ({s['classifier']}): built by its publisher"
                      + (f" with {how}" if how else "") + f", unpacked here<br>sha256 `{s['sha256'][:10]}` of the jar")
            args = (rec or {}).get("builder_configure_args")
            used = [f for f in shlex.split(args) if f.startswith("--") and not f.startswith(("--prefix", "--with-openssl"))] \
                if args is not None else []
            flags = "<br>".join([*(f"`{f}`" for f in used), "(the publisher's)"])
        else:
            source = (f"Debian {s['suite']}, source package `{s['debian']}`" + (f" {fetched}" if fetched else "")
                      + f"<br>`{s['file']}`<br>sha256 `{s['sha256'][:10]}`, checked against the `.dsc` and `builds.toml`")
            flags = "<br>".join(f"`{f}`" for f in spec.configure_flags)
        lines.append(f"| `{spec.build_id}`{twin}<br>*{built}* | {source} | {flags} |")
    for r in provision.retired().values():
        instead = f"; `{r.replaced_by}` plays its part" if r.replaced_by else ""
        lines.append(f"| `{r.build_id}`<br>*retired* | no longer built: {r.why}{instead} | - |")
    return "\n".join(lines) + "\n"
