"""How long measuring took and what a whole run's plan did, for the method chapter: the reference's
minutes per document and chapter (from its run files), the documents' own sizes' minutes
(``data/timing/<profile>-chapters.json``), and the newest committed whole run (``data/timing/``,
:class:`gillab.record.RunRecord`): its minutes, its plan, and whether today's profile is the one it
measured.  Read from stored records when the book builds; never measured or judged here.
"""
from __future__ import annotations

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
