"""``gillab reproduce``: a whole run, above the layers it drives: check everything first
(:func:`precheck`), then measure every chapter under the profile's plan and budget
(:mod:`gillab.judge.budget`, :func:`gillab.measure.sweep.measure`), spend the time left on the rows
more runs would decide (:func:`more_rounds`), record how long each step took (``data/timing/``) and
how steady the machine kept (:mod:`gillab.judge.steadiness`: its probes and its rule), and render the book
(:mod:`gillab.present.book`).  It is the one module that measures and presents; the layers below
it do one or the other.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .measure import experiments
from .measure.profiles import BUDGET_MINUTES
from .measure.protocol import NOT_CONFIG
from .present.book import book


def precheck(profile: str = "default", campaign: str | None = None, new_campaign: bool = False) -> dict[str, str]:
    """Every check of a whole run before anything is made or measured: the data folder can be
    written, the campaign may be measured into, and each chapter's profile and builds (its
    :func:`gillab.measure.sweep.plan`).  Returns the chapters that cannot start, each with why; raises
    :class:`ParameterError` when none can."""
    from .measure import campaigns, sweep
    from .measure.profiles import ParameterError
    from .paths import results_dir

    sweep.check_writable(results_dir())
    campaigns.for_measuring(campaign, new=new_campaign, create_new=False)   # the reference is refused here
    cannot = {}
    for name in experiments.names():
        try:
            sweep.plan(name, profile, campaign=campaign, new_campaign=new_campaign)
        except ParameterError as exc:
            cannot[name] = str(exc)
    if len(cannot) == len(experiments.names()):
        raise ParameterError("no chapter can be measured: " + "; ".join(f"{k}: {v}" for k, v in cannot.items()))
    return cannot


def budget_minutes(profile: str) -> float | None:
    """The minutes a whole run of ``profile`` may measure: `default` the report's budget,
    `verdicts` its own; the others (smoke, seed, history) are not timed."""
    from .measure.profiles import VERDICTS_MINUTES

    return {"default": float(BUDGET_MINUTES), "verdicts": float(VERDICTS_MINUTES)}.get(profile)


def reproduce(profile: str = "default", campaign: str | None = None, render: bool = True,
              new_campaign: bool = False, minutes: float | None = None) -> tuple[Path, list[dict]]:
    """Measure every experiment into the reader's campaign (resuming what it holds), through
    the command line's code, then render the book, which shows that campaign beside the reference.

    Every check comes first (:func:`precheck`); the campaign is made only once they pass.  Then,
    for `default` and `verdicts` (or with ``minutes``), the forecast (:mod:`gillab.judge.budget`): what
    each chapter's planned runs take on this machine and which judged rows they decide, printed
    before anything is measured.  Where the chapters' planned runs do not all fit the minutes, every
    chapter's claims (the points its judged rows read) come first and the points no claim reads
    (the figures' runs) after them, while time is left; a chapter whose claims do not fit either is
    left out, the fewest rows the reference decides at the planned runs per minute first
    (:attr:`gillab.judge.budget.ChapterForecast.rank`), and named.  The chosen chapters' planned
    runs come first, then, while time is left, one more round at a time where judged rows still
    straddle an edge of their band; no sample starts after the deadline.  A chapter that fails (it
    cannot start, a build's environment cannot be made, its store cannot be written) is recorded
    with why, and the others are measured all the same; Ctrl-C stops the whole run.  A pace probe
    at the start (which also gives the forecast its pace), between chapters or rounds every few
    minutes and at the end records how steady the machine kept (:class:`gillab.judge.steadiness.Probes`;
    the rule that reads them is beside it).  The whole measurement is recorded in the
    campaign as ``reproduce-<started>.json``, saved after each chapter (what :func:`reproduce_times`
    reports once committed to ``data/timing/``): how long the report took to measure, chapter by
    chapter, the forecast, and how quiet and steady the machine was.
    Returns the book's folder (or the record's path with ``render=False``) and the chapters that
    failed, each with its reason."""
    from .judge import budget, steadiness
    from .measure import campaigns, metadata, sweep

    cannot = precheck(profile, campaign, new_campaign)
    minutes = budget_minutes(profile) if minutes is None else minutes
    timed = minutes is not None
    probes = steadiness.Probes(profile)
    first = probes.take("start")
    factor, speed = budget.speed_factor(profile, first) if timed else (1.0, "")
    forecast = (budget.forecast(profile, campaign, new_campaign=new_campaign, factor=factor) if timed else [])
    chosen, left_out, fewest = budget.choose(forecast, minutes) if timed else (experiments.names(), [], [])
    claims_first = timed and not budget.whole_fits(forecast, minutes)
    if timed:
        chosen = budget.by_yield(forecast, chosen)
        print(f"[gillab] this machine now: {speed}\n[gillab] the plan, before anything is measured, at that "
              "speed:\n" + budget.describe(forecast, chosen, minutes), file=sys.stderr, flush=True)
    planned = {c.experiment: c for c in forecast}
    camp = campaigns.for_measuring(campaign, new=new_campaign)
    record = {"profile": profile, "campaign": camp.id, "started": metadata.now(), "git": metadata.git_commit(),
              "machine": metadata.machine(), "loadavg_start": metadata.loadavg(),
              "cpu_times_start": metadata.cpu_times(), "status": "running", "experiments": [],
              "budget_minutes": minutes, "speed_factor": round(factor, 3), "speed": speed,
              "forecast": [{"experiment": c.experiment, "samples": c.samples, "seconds": round(c.seconds, 1),
                            "waits": round(c.waits, 1), "judged": len(c.judged), "decided": len(c.decided),
                            "too_few": c.short, "basis": c.basis, "error": c.error,
                            "fewest_seconds": None if c.fewest is None else round(c.fewest.seconds, 1)}
                           for c in forecast],
              "choice": budget.CHOICE, "claims_first": claims_first,
              "left_out": {c.experiment: c.judged + c.short for c in left_out},
              "fewest": {c.experiment: c.judged + c.short for c in forecast if c.experiment in fewest},
              "probes": probes.taken}
    path = camp.dir / f"reproduce-{record['started'].replace(':', '').replace('+0000', 'Z')}.json"
    t0 = time.monotonic()
    deadline = budget.Deadline.after(None if minutes is None else minutes - probes.reserve / 60)
    failures: list[dict] = []

    def save(status: str) -> None:
        end = metadata.cpu_times()
        record.update(status=status, finished=metadata.now(), seconds=round(time.monotonic() - t0, 1),
                      loadavg_end=metadata.loadavg(), cpu_times_end=end, failures=failures,
                      cpu_steal_share=metadata.steal_share(record["cpu_times_start"], end))
        path.write_text(json.dumps(metadata.portable(record), indent=1, default=str) + "\n")

    def run(name: str, overrides: dict | None, phase: str):
        probes.between(deadline)
        t1 = time.monotonic()
        try:
            res = sweep.measure(name, profile, overrides, campaign=camp.id, deadline=deadline,
                                claims_first=claims_first and phase == "plan")
        except Exception as exc:   # noqa: BLE001 - this chapter fails; the others are measured
            failures.append({"experiment": name, "error": f"{type(exc).__name__}: {exc}",
                             "seconds": round(time.monotonic() - t1, 1)})
            print(f"[gillab] {name} failed ({type(exc).__name__}: {exc}); going on with the other chapters",
                  file=sys.stderr)
            save("running")
            return None
        record["experiments"].append({
            "experiment": name, "run_id": res.run_id, "status": res.status, "seconds": round(time.monotonic() - t1, 1),
            "measured": res.measured, "resumed": res.skipped, "failed": res.failed,
            "missing_conditions": res.missing_conditions, "config_id": res.config_id, "phase": phase,
            "params": {k: res.params[k] for k in NOT_CONFIG if k in res.params}})
        save("running")
        return res

    spent = forecast_spent = 0.0      # the chosen chapters measured so far: their seconds, and forecast's

    def cost(c) -> float:
        """What a chapter's planned runs take in this run: its claims, where those come first."""
        return c.claims if claims_first else c.seconds
    try:
        for name in [n for n in experiments.names() if n in cannot]:
            failures.append({"experiment": name, "error": cannot[name]})
            print(f"[gillab] {name} cannot start ({cannot[name]}); going on with the other chapters", file=sys.stderr)
        for name in [n for n in experiments.names() if n not in cannot and n not in chosen]:
            print(f"[gillab] {name}: left out, its planned runs do not fit the {minutes:g} minutes", file=sys.stderr)
        for name in [n for n in chosen if n not in cannot]:
            # the forecast, corrected by how the chapters so far ran against theirs
            pace = spent / forecast_spent if forecast_spent > 0 else 1.0
            share = cost(planned[name].measured(record["fewest"])) if timed else 0.0
            least = planned[name].fewest if timed and name not in record["fewest"] else None
            if least is not None and share * pace > deadline.left() and cost(least) * pace <= deadline.left():
                # its claims' runs no longer fit: one run a point (its figures) rather than nothing
                record["fewest"][name] = planned[name].judged + planned[name].short
                record.setdefault("fewest_late", []).append(name)
                print(f"[gillab] {name}: its planned runs (about {share * pace / 60:.1f} minutes at the pace so far) "
                      f"no longer fit the {deadline.left() / 60:.1f} minutes left; one run a point instead",
                      file=sys.stderr)
                share = cost(least)
            expect = share * pace
            if timed and expect > deadline.left():
                record.setdefault("not_reached", {})[name] = planned[name].judged + planned[name].short
                print(f"[gillab] {name}: left out, its planned runs (about {expect / 60:.1f} minutes at the pace so "
                      f"far) no longer fit the {deadline.left() / 60:.1f} minutes left", file=sys.stderr)
                continue
            t1 = time.monotonic()
            res = run(name, budget.FEWEST if name in record["fewest"] else None, "plan")
            if timed and res is not None and res.status != sweep.STOPPED_ON_TIME:
                spent += time.monotonic() - t1
                forecast_spent += share
        if claims_first:
            figures([n for n in chosen if n not in cannot and n not in record.get("not_reached", {})],
                    planned, deadline, run, record)
        if timed and profile in ("default", "verdicts") and deadline.left() > 0:
            # a chapter at one run a point gets no rounds: its points would take its whole plan's runs
            more_rounds(camp.id, profile, [n for n in chosen if n not in cannot and n not in record["fewest"]],
                        deadline, run, record)
    except BaseException as exc:
        save(f"interrupted ({type(exc).__name__})")
        raise
    probes.take("end")
    st = steadiness.of(record)
    print(f"[gillab] steadiness: {st.outcome} ({st.why})", file=sys.stderr)
    failed_samples = sum(e["failed"] for e in record["experiments"])
    stopped = any(e["status"] == sweep.STOPPED_ON_TIME and e["phase"] in ("plan", "figures")
                  for e in record["experiments"])
    save("stopped on time" if stopped or record.get("not_reached") or record.get("figures_not_reached") else
         "complete" if not failures and not failed_samples else "complete with failures")
    return (book(profile=profile) if render else path), failures


def figures(names: list[str], planned: dict, deadline, run, record: dict) -> None:
    """After every chapter's claims: each chapter's points no claim reads (the figures' runs), in
    the order the claims were measured, while time is left; a chapter's run resumes its claims and
    measures the rest (at one run a point where its claims were), and one the time no longer
    reaches is named in the record."""
    from .judge import budget

    fewest = record.get("fewest", {})
    for name in names:
        if not planned[name].measured(fewest).figures:
            continue
        if deadline.left() <= 0:
            record.setdefault("figures_not_reached", []).append(name)
            continue
        run(name, budget.FEWEST if name in fewest else None, "figures")


def more_rounds(campaign: str, profile: str, names: list[str], deadline, run, record: dict) -> None:
    """While time is left: one more round of the chapter whose straddling judged rows more runs
    would most decide per second of a round (:mod:`gillab.judge.budget`), its claims' points only,
    up to the confidence sequence's runs; each round is recorded like a chapter's run."""
    from . import stats
    from .judge import budget

    repeats = {n: experiments.get(n).resolve(profile)["repeats"] for n in names}
    open_rows = {}
    for n in names:
        try:
            open_rows[n] = budget.straddling(n, campaign)
        except Exception as exc:   # noqa: BLE001 - a chapter that cannot be read gets no more rounds
            print(f"[gillab] {n}: its verdicts cannot be read ({type(exc).__name__}: {exc}); no more rounds",
                  file=sys.stderr)
    rounds = record.setdefault("rounds", [])
    while deadline.left() > 0:
        best = None
        for n, o in open_rows.items():
            step = budget.round_size(n)
            if not o.rows or not o.sequential or repeats[n] + step > budget.most_repeats(n):
                continue
            more = {"repeats": repeats[n] + step}
            fc = budget.forecast_chapter(n, profile, campaign, [], overrides=more)   # at this run's own times
            if fc.error or not fc.samples or fc.seconds > deadline.left():
                continue
            score = (o.decidable / fc.seconds, o.rows / fc.seconds)
            if best is None or score > best[0]:
                best = (score, n, more, fc)
        if best is None:
            break
        _, n, more, fc = best
        o = open_rows[n]
        print(f"[gillab] {n}: {o.rows} judged row(s) straddle their band ({o.decidable} projected to decide "
              f"within {stats.ADAPTIVE_MAX} runs): one more round (repeats {more['repeats']}, {fc.samples} samples, "
              f"about {fc.seconds:.0f} s)", file=sys.stderr)
        res = run(n, more, "rounds")
        repeats[n] = more["repeats"]
        rounds.append({"experiment": n, "repeats": more["repeats"], "straddling_before": o.rows,
                       "decidable_before": o.decidable})
        if res is None:
            open_rows.pop(n)
            continue
        open_rows[n] = budget.straddling(n, campaign)
