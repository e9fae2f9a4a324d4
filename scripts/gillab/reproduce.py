"""``gillab reproduce``: a whole run, above the layers it drives.  The plan is made once
(:class:`gillab.judge.plan.Plan`: every check, the forecast, the chapters chosen and their order) and redone
at each chapter's turn at the pace every probe so far measured; this module measures what it says
(:func:`gillab.measure.sweep.measure`), spends the time left on the rows more runs would decide
(:func:`more_rounds`), keeps the run's record (:class:`gillab.record.RunRecord`: how long each step
took, the paces, how steady the machine kept and whether samples were alone) and renders the book
(:mod:`gillab.present.book`).  It is the one module that measures and presents; the layers below
it do one or the other.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from .judge import budget
from .measure import experiments
from .measure.protocol import NOT_CONFIG
from .judge.plan import Plan, budget_minutes, precheck  # noqa: F401 - the whole run's checks, re-exported
from .present.book import book
from .record import RunRecord


def reproduce(profile: str = "default", campaign: str | None = None, render: bool = True,
              new_campaign: bool = False, minutes: float | None = None) -> tuple[Path, list[dict]]:
    """Measure every experiment into the reader's campaign (resuming what it holds), through
    the command line's code, then render the book, which shows that campaign beside the reference.

    Every check comes first; the campaign is made only once they pass.  Then, for `default` and
    `verdicts` (or with ``minutes``), the plan (:class:`gillab.judge.plan.Plan`): what each chapter's
    planned runs take on this machine, at the pace of a warmed-up probe, and which judged rows they
    decide, printed before anything is measured.  Where the chapters' planned runs do not all fit
    the minutes, every chapter's claims (the points its judged rows read) come first and the points
    no claim reads (the figures' runs) after them, while time is left.  At each chapter's turn the
    plan is redone at the pace every probe so far measured (:meth:`gillab.judge.plan.Plan.turn`): its
    planned runs, else one run a point, else it is named as not reached.  Then, while time is left,
    one more round at a time where judged rows still straddle an edge of their band; no sample
    starts after the deadline.  A sample measured beside foreign load is kept aside and measured
    again (:mod:`gillab.measure.alone`).  A chapter that fails is recorded with why, and the others
    are measured all the same; Ctrl-C stops the whole run.  Pace probes at the start, every few
    minutes between chapters and at the end record how steady the machine kept
    (:class:`gillab.judge.steadiness.Probes`).  The record (:class:`gillab.record.RunRecord`) is saved
    in the campaign as ``reproduce-<started>.json`` before the first chapter and after each.  Returns the book's folder
    (or the record's path with ``render=False``) and the chapters that failed, each with its reason."""
    run = WholeRun.start(profile, campaign, new_campaign, budget_minutes(profile) if minutes is None else minutes)
    try:
        run.save("running")
        run.planned()
        run.figures()
        run.rounds()
    except BaseException as exc:
        run.save(f"interrupted ({type(exc).__name__})")
        raise
    run.finish()
    return (book(profile=profile) if render else run.path), run.record.failures


class WholeRun:
    """One whole run under way: its plan, its clock, its probes and its record."""

    def __init__(self, plan: Plan, probes, record: RunRecord, path: Path):
        self.plan, self.probes, self.record, self.path = plan, probes, record, path
        self.t0 = time.monotonic()
        minutes = plan.minutes
        self.deadline = budget.Deadline.after(None if minutes is None else minutes - probes.reserve / 60)
        self.spent = self.forecast_spent = 0.0    # the chapters measured so far: their seconds, and their forecast's

    @classmethod
    def start(cls, profile: str, campaign: str | None, new_campaign: bool, minutes: float | None) -> "WholeRun":
        """Check everything, probe, plan and print the plan; then make the campaign and the record."""
        from .judge import steadiness
        from .measure import alone, campaigns, metadata

        probes = steadiness.Probes(profile)
        plan = Plan.make(profile, campaign, new_campaign, minutes, probes)
        if plan.timed:
            print(f"[gillab] this machine now: {plan.speed}\n[gillab] the plan, before anything is measured, at that "
                  "speed:\n" + plan.describe(), file=sys.stderr, flush=True)
        camp = campaigns.for_measuring(campaign, new=new_campaign)
        first = plan.forecast()
        rec = RunRecord(profile=profile, campaign=camp.id, started=metadata.now(), git=metadata.git_commit(),
                        machine=metadata.machine(), loadavg_start=metadata.loadavg(),
                        cpu_times_start=metadata.cpu_times(), budget_minutes=minutes, foreign_limit=alone.limit(),
                        speed_factor=round(plan.factor, 3), speed=plan.speed,
                        forecast=[_forecast_row(c) for c in first],
                        choice=budget.CHOICE, claims_first=plan.claims_first,
                        left_out={c.experiment: c.judged + c.short for c in plan.left_out},
                        fewest={c.experiment: c.judged + c.short for c in first if c.experiment in plan.fewest},
                        probes=probes.taken)
        path = camp.dir / f"reproduce-{rec.started.replace(':', '').replace('+0000', 'Z')}.json"
        return cls(plan, probes, rec, path)

    def save(self, status: str) -> None:
        from .measure import metadata

        rec, end = self.record, metadata.cpu_times()
        rec.status, rec.finished, rec.seconds = status, metadata.now(), round(time.monotonic() - self.t0, 1)
        rec.loadavg_end, rec.cpu_times_end = metadata.loadavg(), end
        rec.cpu_steal_share = metadata.steal_share(rec.cpu_times_start, end)
        rec.save(self.path)

    def run(self, name: str, overrides: dict | None, phase: str, probe: bool = True):
        """One chapter's sweep (or more of it) at ``overrides`` (its parameters are the plan's:
        :meth:`gillab.judge.plan.Plan.params`), recorded, after a probe where one is due (``probe``:
        not yet taken at this turn); a chapter that fails is recorded with why."""
        from .measure import sweep

        if probe:
            self.probes.between(self.deadline)
        t1 = time.monotonic()
        try:
            res = sweep.measure(name, self.plan.profile, overrides, campaign=self.record.campaign,
                                deadline=self.deadline, claims_first=self.plan.claims_first and phase == "plan",
                                params=self.plan.params(name, overrides))
        except Exception as exc:   # noqa: BLE001 - this chapter fails; the others are measured
            self.record.failures.append({"experiment": name, "error": f"{type(exc).__name__}: {exc}",
                                         "seconds": round(time.monotonic() - t1, 1)})
            print(f"[gillab] {name} failed ({type(exc).__name__}: {exc}); going on with the other chapters",
                  file=sys.stderr)
            self.save("running")
            return None
        self.record.experiments.append({
            "experiment": name, "run_id": res.run_id, "status": res.status, "seconds": round(time.monotonic() - t1, 1),
            "measured": res.measured, "resumed": res.skipped, "failed": res.failed, "not_alone": res.not_alone,
            "measured_again": res.measured_again, "missing_conditions": res.missing_conditions,
            "config_id": res.config_id, "phase": phase, "params": {k: res.params[k] for k in NOT_CONFIG if k in res.params}})
        if res.not_alone:
            print(f"[gillab] {name}: {res.not_alone} sample(s) measured beside other processes' load, kept aside; "
                  f"{res.measured_again} of them measured again alone", file=sys.stderr)
        self.save("running")
        return res

    def pace(self, name: str) -> tuple[float, float]:
        """The pace for ``name``'s turn, recorded: every probe so far (:func:`gillab.judge.speed.pace`),
        and the correction of the chapters so far (their seconds over their forecast at the probes'
        pace of their turn).  The correction only ever slows the plan down: chapters that ran slower
        than their forecast slow the rest's; chapters that ran faster never make room, since their
        forecast's own errors (a build read at another size) say nothing of the next chapter's: only
        the probes give a cut chapter its runs back."""
        factor, _ = self.probes.pace(self.plan.probe_ref)
        correction = max(1.0, self.spent / self.forecast_spent) if self.forecast_spent > 0 else 1.0
        self.record.paces.append({"before": name, "factor": round(factor, 3), "correction": round(correction, 3),
                                  "probes": sum(1 for p in self.probes.taken if p.get("median_s"))})
        return factor, correction

    def planned(self) -> None:
        """Every chapter's planned runs, in the plan's order, each as the plan redone at its turn says."""
        rec, plan = self.record, self.plan
        for name in [n for n in experiments.names() if n in plan.cannot]:
            rec.failures.append({"experiment": name, "error": plan.cannot[name]})
            print(f"[gillab] {name} cannot start ({plan.cannot[name]}); going on with the other chapters", file=sys.stderr)
        for name in [n for n in experiments.names() if n not in plan.cannot and n not in plan.chosen]:
            print(f"[gillab] {name}: left out, its planned runs do not fit the {plan.minutes:g} minutes", file=sys.stderr)
        done: set[str] = set()
        for name in plan.chosen:
            self.turn(name, done)
            done.add(name)

    def turn(self, name: str, done: set[str]) -> None:
        from .measure import sweep

        rec, plan = self.record, self.plan
        self.probes.between(self.deadline)          # the pace of this turn reads a probe that is due
        factor, correction = self.pace(name) if plan.timed else (1.0, 1.0)
        t = plan.turn(name, factor * correction, self.deadline.left(), done)
        rows = plan.rows(name)
        if not t.reached:
            rec.not_reached[name] = rows
            print(f"[gillab] {name}: left out, its planned runs (about {t.expect / 60:.1f} minutes at the pace so "
                  f"far) no longer fit the {self.deadline.left() / 60:.1f} minutes left", file=sys.stderr)
            return
        _note_change(rec, name, t, rows, self.deadline.left())
        t1 = time.monotonic()
        res = self.run(name, t.overrides, "plan", probe=False)
        if plan.timed and res is not None and res.status != sweep.STOPPED_ON_TIME:
            self.spent += time.monotonic() - t1
            self.forecast_spent += t.expect / correction

    def figures(self) -> None:
        if self.plan.claims_first:
            names = [n for n in self.plan.chosen if n not in self.record.not_reached]
            figures(names, {c.experiment: c for c in self.plan.forecast()}, self.deadline, self.run, self.record)

    def rounds(self) -> None:
        plan = self.plan
        if plan.timed and plan.profile in ("default", "verdicts") and self.deadline.left() > 0:
            # a chapter at one run a point gets no rounds: its points would take its whole plan's runs
            more_rounds(plan, self.record.campaign, [n for n in plan.chosen if n not in self.record.fewest],
                        self.deadline, self.run, self.record)

    def finish(self) -> None:
        from .judge import steadiness
        from .measure import sweep

        self.probes.take("end")
        if self.plan.timed or self.probes.taken:
            factor, words = self.probes.pace(self.plan.probe_ref)
            self.record.pace, self.record.pace_words = round(factor, 3), words
        st = steadiness.of(self.record)
        print(f"[gillab] steadiness: {st.outcome} ({st.why})", file=sys.stderr)
        rec = self.record
        failed_samples = sum(e["failed"] for e in rec.experiments)
        stopped = any(e["status"] == sweep.STOPPED_ON_TIME and e["phase"] in ("plan", "figures")
                      for e in rec.experiments)
        self.save("stopped on time" if stopped or rec.not_reached or rec.figures_not_reached else
                  "complete" if not rec.failures and not failed_samples else "complete with failures")
        from .judge import claims, verdicts

        guarded = set(claims.table().query("role == 'control'")["experiment"])
        names = [n for n in dict.fromkeys(e["experiment"] for e in rec.experiments) if n in guarded]
        if self.plan.timed and names:   # saved first; then the pace from run to run, as its controls read it
            ctl = steadiness.controls_of(verdicts.flat(verdicts.verdicts(rec.campaign, names,
                                                                         profile=self.plan.profile)))
            print(f"[gillab] controls: {ctl.outcome} ({ctl.why})", file=sys.stderr)


def _forecast_row(c) -> dict:
    return {"experiment": c.experiment, "samples": c.samples, "seconds": round(c.seconds, 1),
            "waits": round(c.waits, 1), "judged": len(c.judged), "decided": len(c.decided),
            "too_few": c.short, "basis": c.basis, "error": c.error,
            "fewest_seconds": None if c.fewest is None else round(c.fewest.seconds, 1)}


def _note_change(rec: RunRecord, name: str, t, rows: list, left: float) -> None:
    """A chapter the plan redone at its turn measures otherwise than the first plan said."""
    if t.change == "cut":
        rec.fewest[name] = rows
        rec.fewest_late.append(name)
        print(f"[gillab] {name}: its planned runs no longer fit the {left / 60:.1f} minutes left at the pace "
              "so far; one run a point instead", file=sys.stderr)
    elif t.change == "restored":
        rec.fewest.pop(name, None)
        rec.restored.append(name)
        print(f"[gillab] {name}: the machine ran faster than the first probe said; its planned runs "
              f"(about {t.expect / 60:.1f} minutes) fit the {left / 60:.1f} minutes left after all", file=sys.stderr)


def figures(names: list[str], planned: dict, deadline, run, record: RunRecord) -> None:
    """After every chapter's claims: each chapter's points no claim reads (the figures' runs), in
    the order the claims were measured, while time is left; a chapter's run resumes its claims and
    measures the rest (at one run a point where its claims were), and one the time no longer
    reaches is named in the record."""
    fewest = record.fewest
    for name in names:
        if not planned[name].measured(fewest).figures:
            continue
        if deadline.left() <= 0:
            record.figures_not_reached.append(name)
            continue
        run(name, budget.FEWEST if name in fewest else None, "figures")


def more_rounds(plan: Plan, campaign: str, names: list[str], deadline, run, record: RunRecord) -> None:
    """While time is left: one more round of the chapter whose straddling judged rows more runs
    would most decide per second of a round (:mod:`gillab.judge.rounds`), its claims' points only,
    up to the confidence sequence's runs, at the parameters the plan resolves for it; each round is
    recorded like a chapter's run."""
    from . import stats
    from .judge import budget
    from .judge.rounds import most_repeats, round_size, straddling

    repeats = {n: plan.params(n)["repeats"] for n in names}
    open_rows = {}
    for n in names:
        try:
            open_rows[n] = straddling(n, campaign)
        except Exception as exc:   # noqa: BLE001 - a chapter that cannot be read gets no more rounds
            print(f"[gillab] {n}: its verdicts cannot be read ({type(exc).__name__}: {exc}); no more rounds",
                  file=sys.stderr)
    rounds = record.rounds
    while deadline.left() > 0:
        best = None
        for n, o in open_rows.items():
            step = round_size(n)
            if not o.rows or not o.sequential or repeats[n] + step > most_repeats(n):
                continue
            more = {"repeats": repeats[n] + step}
            fc = budget.forecast_chapter(n, plan.profile, campaign, [], overrides=more,   # at this run's own times
                                         resolve=plan.params)
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
        open_rows[n] = straddling(n, campaign)
