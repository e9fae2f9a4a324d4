"""Running a sweep: every check first, then for each repeat, each point, each condition
(interleaved, so drift on a shared machine hits every condition alike) one fresh process per
sample, each sample stored the moment it is measured, in the reader's campaign
(:mod:`gillab.measure.campaigns`).  A sample already stored there is resumed only when its *resume key*
matches: same configuration, same interpreter identity (binary hash, version, build flags,
environment) and same measuring code (workload, runner, experiment class); so a killed sweep
resumes where it stopped, and a changed workload or a rebuilt interpreter is measured anew.
:func:`plan` says what would be measured, and why, without measuring.

The command line (``gillab measure``/``reproduce``), papermill's ``-p measure True`` and the live
explorers all measure through :func:`measure`.

Why it is long: every check before a sweep, the interleaved loop and stopping on time share one
prepared plan (:class:`Prepared`); apart, each would have to rebuild it.  Which samples are
measured or resumed (:mod:`gillab.measure.resume`) and one sample's rows
(:mod:`gillab.measure.sample`) are apart.
"""
from __future__ import annotations

import datetime as _dt
import math
import os
import statistics
import sys
import time
import uuid
from dataclasses import dataclass, field

from . import grid as grid_mod
from . import alone, codekey, interpreters, metadata
from .resume import adaptive_rounds, left_out, plan_samples, why_not_resumable, wide_points
from .sample import SAMPLE_FAILURES, identity_record, sample
from .protocol import Experiment, point_key
from .experiments import get, waits, waits_done, work
from ..paths import results_dir
from .profiles import ParameterError
from .store import StoreWriteError

# -- resume keys ------------------------------------------------------------------------------
def code_key(exp: Experiment) -> str:
    """The key of the code that shapes a sample of ``exp`` (:mod:`gillab.measure.codekey`)."""
    return codekey.code_key(exp)


@dataclass
class Plan:
    """What a sweep would measure, before measuring: every (repeat, point, condition), and for
    each sample that is stored but not resumable, why."""
    experiment: str
    profile: str
    campaign: str
    campaign_is_new: bool
    config_id: str
    code_key: str
    identity_keys: dict
    points: list
    conditions: list
    missing_conditions: list
    todo: list                       # (repeat, point, condition) to measure
    resumable: int = 0
    reasons: dict = field(default_factory=dict)   # reason -> count, for the samples in todo
    details: list = field(default_factory=list)   # one entry per sample in todo
    adaptive_max: int = 0            # at most this many more, where a CI stays wide (max_repeats)
    damaged: list = field(default_factory=list)   # rows of samples.csv found damaged: line, reason
    estimate_s: float | None = None   # the samples to measure, at the chapter's median sample time
    estimate_basis: str = ""

    def as_dict(self) -> dict:
        total = len(self.todo) + self.resumable
        return {
            "experiment": self.experiment, "profile": self.profile, "campaign": self.campaign,
            "campaign_is_new": self.campaign_is_new, "config_id": self.config_id, "code_key": self.code_key,
            "identity_keys": self.identity_keys, "points": self.points, "conditions": self.conditions,
            "missing_conditions": self.missing_conditions, "samples_total": total,
            "samples_planned": len(self.todo), "samples_resumable": self.resumable,
            "reasons": self.reasons, "samples": self.details, "samples_adaptive_max": self.adaptive_max,
            "damaged_rows": self.damaged, "estimate_s": self.estimate_s, "estimate_basis": self.estimate_basis,
        }


@dataclass
class RunResult:
    run_id: str
    experiment: str
    campaign: str
    params: dict
    config_id: str
    measured: int = 0
    skipped: int = 0
    failed: int = 0
    not_alone: int = 0        # samples measured beside foreign load (kept aside; :mod:`.alone`), each once
    measured_again: int = 0   # of them, measured again in this run and then alone
    missing_conditions: list = field(default_factory=list)
    status: str = "running"
    reasons: dict = field(default_factory=dict)


MAX_PLAN_SAMPLES = 100_000   # one sweep; more is refused before any list of it is made
MAX_PLAN_HOURS = 12.0        # one sweep's estimated time; more is refused unless allowed (--allow-long)


def seconds_per_sample(exp: Experiment, config: str | None = None, planned_work: float | None = None,
                       planned_waits: float = 0.0) -> tuple[float, str] | None:
    """The median time of one of this chapter's samples (the workload process's wall time) in the
    reader's newest campaign that holds it, else in the reference, else (a data folder of its own,
    ``GILLAB_DATA``, that holds neither) in the checkout's committed reference; with where it was
    read.  Where that campaign holds samples of ``config`` (the sizes about to be measured), only
    theirs count: a `seed` sample can take ten times a `default` one.  Where it holds none, and the
    chapter says what a sample's work is (:func:`gillab.measure.experiments.work`), the median is
    scaled by ``planned_work`` (the mean work of the samples about to be measured) over the median
    work of the samples read: the time beyond what each sample read waited out (the part no size
    scales), with ``planned_waits`` (the mean of the samples about to be measured) added."""
    from . import campaigns
    from ..paths import repo_root
    from .store import ExperimentStore

    def median_of(store) -> tuple[float, str] | None:
        vals, ours, done, waited = {}, {}, {}, {}
        for r in store.rows():
            try:
                if r.get("status") == "ok":
                    key = (r.get("config"), r.get("condition"), r.get("point"), r.get("repeat"))
                    v = float(r.get("process_wall_s") or "nan")
                    if key not in vals:       # a sample stored as several rows counts once, read once
                        vals[key] = v
                        done[key] = work(exp.name, r, r)
                        waited[key] = waits_done(exp.name, r) or 0.0
                    if config is not None and r.get("config") == config:
                        ours.setdefault(key, v)
            except ValueError:
                continue
        ours = [v for v in ours.values() if math.isfinite(v)]
        if ours:
            return statistics.median(ours), " of this configuration"
        keys = [k for k, v in vals.items() if math.isfinite(v)]
        if not keys:
            return None
        if planned_work and all(done[k] is not None for k in keys):
            per_unit = statistics.median(max(vals[k] - waited[k], 0.0) / done[k] for k in keys)
            return (per_unit * planned_work + planned_waits,
                    " (other configurations, in proportion to each sample's work beyond what it waits out)")
        return statistics.median(vals[k] for k in keys), ""

    yours, ref = campaigns.for_reading(exp.name)
    for c in (yours, ref):
        if c is not None and (m := median_of(c.store(exp.name))) is not None:
            return m[0], f"{c.id}{m[1]}"
    committed = repo_root() / "data" / "results"
    if committed.resolve() != results_dir().resolve() and (committed / campaigns.REFERENCE_FILE).is_file():
        cid = (committed / campaigns.REFERENCE_FILE).read_text().strip()
        store = ExperimentStore(exp.name, cid, root=committed)
        if cid and store.samples_path.is_file() and (m := median_of(store)) is not None:
            return m[0], f"{cid} (the checkout's committed reference){m[1]}"
    return None


def check_count(exp: Experiment, p: dict, n_points: int, n_builds: int) -> None:
    """Refuse a sweep of more than :data:`MAX_PLAN_SAMPLES` samples, from the count alone (no list
    of them is made, nothing is read)."""
    reps = max(p["repeats"], p["max_repeats"] or 0)
    most = reps * n_points * n_builds
    if most > MAX_PLAN_SAMPLES:
        raise ParameterError(
            f"{exp.name}: {most:,} samples ({reps} repeats x {n_points} points x {n_builds} builds) is more than "
            f"the {MAX_PLAN_SAMPLES:,} one sweep may hold; nothing was measured")


def estimate(exp: Experiment, p: dict, samples: list, allow_long: bool = True,
             config: str | None = None) -> tuple[float, str] | None:
    """The time the planned ``samples`` ((slot, point, build) triples of ``p``) take at the chapter's
    median sample time (read at other sizes, in proportion to their mean work,
    :func:`gillab.measure.experiments.work`), at least what a sample waits out on average and at
    most its timeout, with its basis (None with no stored sample to go by); unless ``allow_long``,
    refuse more than :data:`MAX_PLAN_HOURS`."""
    todo = len(samples)
    units = [work(exp.name, p, pt) for _, pt, _ in samples]
    waited = sum(waits(exp.name, p, pt) for _, pt, _ in samples) / todo if todo else 0.0
    per = seconds_per_sample(exp, config, sum(units) / todo if todo and None not in units else None, waited)
    if per is None:
        return None
    basis = f"{per[0]:.2g} s per sample, the median in campaign {per[1]}"
    if per[0] < waited:
        basis = f"{waited:.2g} s per sample, what each waits out (the median in campaign {per[1]}: {per[0]:.2g} s)"
        per = (waited, per[1])
    timeout = p.get("timeout")
    if timeout and per[0] > timeout:
        basis = f"{timeout:.2g} s per sample, its timeout (the median in campaign {per[1]}: {per[0]:.2g} s)"
        per = (float(timeout), per[1])
    seconds = per[0] * todo
    if seconds > MAX_PLAN_HOURS * 3600 and not allow_long:
        raise ParameterError(
            f"{exp.name}: about {seconds / 3600:,.0f} hours ({todo:,} samples at {basis}), more than the "
            f"{MAX_PLAN_HOURS:g} hours one sweep may take unless asked for: add --allow-long (allow_long=True) if "
            "you mean it; nothing was measured")
    return seconds, basis


@dataclass
class Prepared:
    """What every check of a sweep yields: the experiment and its resolved parameters, the grid,
    the conditions (those available, those missing), their identity keys, the code key and the
    campaign (None where :func:`plan` found none yet)."""
    exp: Experiment
    p: dict
    grid: grid_mod.Grid
    conds: list
    idents: dict
    usable: list
    missing: list
    camp: object
    is_new: bool
    keys: dict
    ckey: str

    @property
    def cids(self) -> list[str]:
        return [c.id for c in self.usable]

    @property
    def config_id(self) -> str:
        return self.exp.config_id(self.p)

    def stored(self) -> tuple[dict, set, object]:
        """The campaign's resumable rows and failed samples of this configuration, and its store
        (None where the campaign does not hold the experiment yet)."""
        if self.camp is None or not self.camp.has(self.exp.name):
            return {}, set(), None
        store = self.camp.store(self.exp.name)
        return store.measured(self.config_id), store.failed(self.config_id), store

    def plan_samples(self, rows: dict, failed: set, **kw) -> tuple[list, int, dict, list]:
        return plan_samples(self.exp, self.p, self.cids, rows, failed, self.keys, self.ckey, self.idents,
                            grid=self.grid, **kw)


def _builds(p: dict) -> tuple[list, dict, list, list, dict]:
    """The conditions ``p`` names, each one's identity, those available and the ids of those
    missing, and the identity keys of the available ones."""
    conds = interpreters.select(p["conditions"])
    idents = {c.id: interpreters.identify(c) for c in conds}
    usable = [c for c in conds if idents[c.id].available]
    missing = [c.id for c in conds if not idents[c.id].available]
    return conds, idents, usable, missing, {c.id: idents[c.id].key() for c in usable}


def _prepare(name, profile, overrides, campaign, new_campaign, *, create, allow_long=False,
             claims_first=False, params=None) -> Prepared:
    """Every check, then the campaign, the conditions, their keys and what the store holds
    (``claims_first``: the grid of the claims' points only, :func:`gillab.measure.grid.claims_first`;
    ``params``: ``profile`` with ``overrides`` already resolved, by a whole run's plan)."""
    from . import campaigns

    exp = get(name)
    p = exp.resolve(profile, overrides) if params is None else params
    grid = grid_mod.of(exp, p)   # full_grid and small_grid checked too, before anything is measured
    try:
        alone.limit()            # $GILLAB_FOREIGN_CPUS, read by every sample
    except ValueError as exc:
        raise ParameterError(str(exc)) from None
    if claims_first:
        grid = grid_mod.claims_first(grid)
    conds, idents, usable, missing, keys = _builds(p)
    if not usable:
        raise ParameterError(
            "none of the requested conditions is available: "
            + "; ".join(f"{c.id}: {idents[c.id].error}" for c in conds)
            + ". Build the core ones with `gillab provision` (or `make interpreters`).")
    check_count(exp, p, len(exp.points(p)), len(usable))   # before any list of the samples is made
    camp = campaigns.for_measuring(campaign, new=new_campaign, create_new=False)   # nothing made yet
    prep = Prepared(exp, p, grid, conds, idents, usable, missing, camp, False, keys, code_key(exp))
    if create:
        rows, failed, _ = prep.stored()
        estimate(exp, p, prep.plan_samples(rows, failed)[0], allow_long, prep.config_id)
        check_writable(results_dir())
        prep.camp = campaigns.for_measuring(campaign, new=new_campaign, create_new=True)   # every check passed
    prep.is_new = prep.camp is None or not prep.camp.experiments()
    return prep


def coverage(name: str, profile: str, campaign: str) -> dict:
    """How much of ``profile``'s sweep ``campaign`` holds, read only (the reference campaign too):
    the samples the profile asks for, those stored and resumable, those still to measure, and the
    builds it names that are not available here, with the profile's resolved parameters."""
    from . import campaigns

    exp = get(name)
    p = exp.resolve(profile)
    conds, idents, usable, missing, keys = _builds(p)
    prep = Prepared(exp, p, grid_mod.of(exp, p), conds, idents, usable, missing, campaigns.load(campaign), False,
                    keys, code_key(exp))
    rows, failed, _ = prep.stored()
    todo, resumable, *_ = prep.plan_samples(rows, failed)
    return {"planned": len(todo) + resumable, "stored": resumable, "to_measure": len(todo),
            "missing_conditions": missing, "config_id": prep.config_id, "params": p}


def check_writable(folder) -> None:
    """Raise :class:`ParameterError` unless a file can be made in ``folder`` (or, where it does not
    exist yet, in the nearest folder above it that does), before anything is measured."""
    import tempfile
    from pathlib import Path

    where = Path(folder)
    while not where.exists() and where.parent != where:
        where = where.parent
    try:
        with tempfile.TemporaryFile(dir=where):
            pass
    except OSError as exc:
        raise ParameterError(
            f"the data folder {folder} cannot be written ({exc.strerror or exc} in {where}); nothing was measured. "
            "Make it writable, or point GILLAB_DATA at a folder you can write") from None


def plan(name: str, profile: str = "default", overrides: dict | None = None, *,
         campaign: str | None = None, new_campaign: bool = False, claims_first: bool = False,
         params: dict | None = None) -> Plan:
    """What ``measure`` would do, without measuring or writing anything (``params``: as
    :func:`measure`'s)."""
    prep = _prepare(name, profile, overrides, campaign, new_campaign, create=False, claims_first=claims_first,
                    params=params)
    exp, p = prep.exp, prep.p
    rows, failed, store = prep.stored()
    damaged = [{"line": d.line, "reason": d.reason} for d in store.damaged] if store is not None else []
    todo, resumable, reasons, details = prep.plan_samples(rows, failed)
    cname = prep.camp.id if prep.camp is not None else campaign or "(a new campaign)"
    per_round = sum(1 for point in exp.points(p) for cid in prep.cids
                    if not left_out(exp, point, cid, prep.idents[cid], prep.grid))
    est = estimate(exp, p, todo, config=prep.config_id)
    return Plan(exp.name, profile, cname, prep.is_new, prep.config_id, prep.ckey, prep.keys,
                [point_key(x) for x in exp.points(p)], prep.cids, prep.missing, todo, resumable, reasons, details,
                len(adaptive_rounds(p)) * per_round, damaged,
                est[0] if est else None, est[1] if est else "no stored sample of this chapter to go by")


STOPPED_ON_TIME = "stopped on time"   # a run's status where the reader's time was spent (every sample kept)


class OutOfTime(Exception):
    """The run's deadline passed: the sweep stopped between two samples, keeping every one."""


@dataclass
class Deadline:
    """A monotonic deadline (None: no limit)."""
    at: float | None = None

    @classmethod
    def after(cls, minutes: float | None) -> "Deadline":
        return cls(None if minutes is None else time.monotonic() + minutes * 60)

    def left(self) -> float:
        return math.inf if self.at is None else self.at - time.monotonic()

    def check(self, need: float = 0.0) -> None:
        """Raise :class:`OutOfTime` when a sample of ``need`` seconds would end after the deadline."""
        if self.at is not None and time.monotonic() + need >= self.at:
            raise OutOfTime("the run's time is spent")


def measure(name: str, profile: str = "default", overrides: dict | None = None, *,
            campaign: str | None = None, new_campaign: bool = False, progress=True,
            allow_long: bool = False, deadline=None, claims_first: bool = False, probes=None,
            params: dict | None = None) -> RunResult:
    """Run (or resume) a sweep in the reader's campaign.  Every check happens before the first
    sample; the committed reference campaign is never written to nor resumed from.

    ``progress``: True draws a progress bar on stderr, False nothing; a callable is called as
    ``progress(done, total, what)`` before the first sample and after each (the live explorer's
    bar).

    The steps, each a method of :class:`_Run`: open the run (under the store's lock: mark killed
    runs, plan, write the run file), the measurements before the sweep, the planned samples, the
    adaptive rounds, and closing the run file whatever happened.

    ``deadline`` (a :class:`Deadline`): no sample starts once it has passed; the run ends with the
    status :data:`STOPPED_ON_TIME`, every sample measured so far stored.

    ``claims_first``: only the points the claims read (:func:`gillab.measure.grid.claims_first`);
    a later run without it resumes them and measures the rest.

    ``probes``: a run measured on its own (``gillab measure``/``run``, not inside a whole run, which
    probes for itself) takes pace probes too, so that any stretch of measuring has its steadiness on
    record: an object with ``take(when)``, ``between(deadline)`` and ``taken``
    (:class:`gillab.judge.steadiness.Probes`); one at the start when there is anything to measure, one
    between samples once one is due, one at the end, kept in the run file's ``probes``.

    ``params``: the parameters ``profile`` and ``overrides`` resolve to, where a whole run's plan
    (:meth:`gillab.judge.plan.Plan.params`) resolved them once for every step; ``profile`` then only
    names them."""
    prep = _prepare(name, profile, overrides, campaign, new_campaign, create=True, allow_long=allow_long,
                    claims_first=claims_first, params=params)
    for cid in prep.missing:
        print(f"[gillab] {name}: {cid} is not available ({prep.idents[cid].error}); "
              "it is reported as not measured, not replaced.", file=sys.stderr)
    run = _Run(prep, profile, deadline, probes)
    with run.store.lock():
        run.open(progress)
        try:
            run.before_sweep()
            run.take(run.todo)
            run.adaptive()
            run.again()
            run.result.status = "complete" if not run.result.failed else "complete with failures"
        except OutOfTime:
            run.result.status = STOPPED_ON_TIME
        except StoreWriteError as exc:
            run.result.status = "failed"
            run.meta["failure"] = str(exc)
            raise
        except BaseException as exc:
            run.result.status = f"interrupted ({type(exc).__name__})"
            raise
        finally:
            run.close()
    return run.result


class _Run:
    """One run of a sweep, step by step (see :func:`measure`, which holds the store's lock)."""

    def __init__(self, prep: Prepared, profile: str, deadline=None, probes=None):
        self.prep, self.exp, self.p, self.profile = prep, prep.exp, prep.p, profile
        self.deadline, self.probes = deadline, probes
        self.store = prep.camp.store(prep.exp.name)
        self.cfg = prep.config_id
        # to the microsecond: a store lists its runs by name, so two runs begun in one second
        # (a resumed sweep with nothing left) still list in the order they ran
        self.run_id = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ") + "-" + uuid.uuid4().hex[:6]
        self.result = RunResult(self.run_id, self.exp.name, prep.camp.id, self.p, self.cfg,
                                missing_conditions=prep.missing)
        self.by_id = {c.id: c for c in prep.usable}
        self.rows: dict = {}
        self.todo: list = []
        self.flagged: dict = {}     # (repeat, point key, condition) -> sample, of those not alone
        self.meta: dict = {}
        self.bar = None

    def open(self, progress) -> None:
        """Mark runs that ended without a word, plan the samples and write the run file."""
        prep, exp, name = self.prep, self.exp, self.exp.name
        killed = self.store.mark_killed()
        if killed:
            print(f"[gillab] {name}: run(s) {', '.join(killed)} ended without a word (killed); "
                  "marked so, and their samples resumed", file=sys.stderr)
        self.rows, failed = self.store.measured(self.cfg), self.store.failed(self.cfg)
        todo, resumable, reasons, _ = prep.plan_samples(self.rows, failed)
        self.todo = [(rep, point, self.by_id[cid]) for rep, point, cid in todo]
        self.result.skipped, self.result.reasons = resumable, reasons
        self.meta = {
            "run_id": self.run_id, "campaign": prep.camp.id, "experiment": name, "title": exp.title,
            "document": exp.document, "profile": self.profile, "params": self.p, "config_id": self.cfg,
            "config": exp.config(self.p),
            "conditions": {c.id: identity_record(c, prep.idents[c.id]) | {"identity_key": prep.keys.get(c.id)}
                           for c in prep.conds},
            "missing_conditions": prep.missing, "code_key": prep.ckey,
            "machine": metadata.machine(), "harness": metadata.harness() | {"pid": os.getpid()},
            "boot_id": metadata.boot_id(),
            "started": metadata.now(), "loadavg_start": metadata.loadavg(), "cpu_times_start": metadata.cpu_times(),
            "foreign_limit": alone.limit(),
            "planned_samples": len(self.todo), "skipped_already_measured": resumable,
            "why_measured": reasons, "killed_runs_found": killed,
            "status": "running",
        }
        if self.probes is not None and self.todo:
            self.probes.take("start")
            self.meta["probes"] = self.probes.taken
        self.store.write_run(self.meta)
        self.store.reserve()
        self.bar = _progress(len(self.todo), f"{name} [{self.profile}]", progress)

    def before_sweep(self) -> None:
        """Measurements that belong to the run, not to a condition (b2's curl ceiling)."""
        hook = getattr(self.exp, "before_sweep", None)
        if hook is None:
            return
        exp, prep = self.exp, self.prep

        def needed(cid, point, rep):
            row = self.rows.get((cid, point_key(point), rep))
            return why_not_resumable(row, prep.keys.get(cid, ""), prep.ckey, exp.name) is not None

        def add_row(cid, point, rep, res):
            seen = window.lap()
            self.result.not_alone += not seen.alone
            try:
                self.store.append({
                    "run_id": self.run_id, "experiment": exp.name, "profile": self.profile, "config": self.cfg,
                    "condition": cid, "point": point_key(point), "repeat": rep, **point,
                    "time": metadata.now(), "loadavg_1m": (metadata.loadavg() or [math.nan])[0],
                    **seen.row(), "identity_key": prep.keys.get(cid, ""), "code_key": prep.ckey,
                    **res})
            except OSError as exc:
                raise StoreWriteError(f"{exp.name}: a measurement before the sweep could not be stored "
                                      f"({exc.strerror or exc}: {exc.filename or self.store.samples_path})") from exc

        # each measurement is what the hook did between one stored row and the next, read as a lap
        # of one window: one beside foreign load is kept aside like a sample, and measured by a later run
        try:
            with alone.Window() as window:
                hook(self.p, needed, add_row)
        except SAMPLE_FAILURES as exc:   # recorded, and the sweep goes on with every build's samples
            self.result.failed += 1
            self.meta["before_sweep_failure"] = f"{type(exc).__name__}: {exc}"
            print(f"[gillab] failed: {exp.name}'s measurements before the sweep ({self.meta['before_sweep_failure']}); "
                  "the samples of every build are measured as planned", file=sys.stderr)

    def take(self, batch) -> None:
        """Measure each (repeat, point, condition) of ``batch`` and store it the moment it is
        measured; a sample that cannot be stored stops the run (:class:`StoreWriteError`)."""
        result, exp = self.result, self.exp
        last = 0.0
        for rep, point, cond in batch:
            if self.deadline is not None:
                self.deadline.check(last)   # OutOfTime: no sample that would end after the reader's time
            if "probes" in self.meta:
                self.probes.between(self.deadline)
            t0 = time.monotonic()
            out = sample(exp, self.p, self.cfg, self.run_id, self.profile, rep, point, cond)
            for r in out:
                r.update(identity_key=self.prep.keys[cond.id], code_key=self.prep.ckey)
            try:
                self.store.extend(out)
            except OSError as exc:   # a full disk, a read-only folder: stop, keep what is stored
                raise StoreWriteError(
                    f"{exp.name}: the sample {cond.id} {point_key(point)} repeat {rep} was measured but could "
                    f"not be stored ({exc.strerror or exc}: {exc.filename or self.store.samples_path}); the sweep "
                    f"stopped there, and the {result.measured + result.failed} sample(s) this run stored before "
                    "it are kept. Free some space and rerun: it resumes from there") from exc
            if out[0]["status"] == "ok":
                result.measured += 1
                if (rep, point_key(point), cond.id) in self.flagged:
                    result.measured_again += 1
            elif out[0]["status"] == alone.NOT_ALONE:
                result.not_alone += (rep, point_key(point), cond.id) not in self.flagged
                self.flagged[(rep, point_key(point), cond.id)] = (rep, point, cond)
                print(f"[gillab] not alone: {cond.id} {point_key(point)} repeat {rep}: {out[0]['error']}; kept "
                      "aside, measured again at the end of this run", file=sys.stderr)
            else:
                result.failed += 1
                print(f"[gillab] failed: {cond.id} {point_key(point)} repeat {rep}: {out[0]['error']}",
                      file=sys.stderr)
            self.bar.set_postfix_str(f"{cond.id} {point_key(point)} r{rep}", refresh=False)
            self.bar.update(1)
            last = time.monotonic() - t0

    def adaptive(self) -> None:
        """Another repeat of every point whose interval is still wide, each round decided on
        everything measured so far (:func:`gillab.measure.resume.wide_points`), up to ``max_repeats``."""
        prep = self.prep
        for rep in adaptive_rounds(self.p):
            rows, failed = self.store.measured(self.cfg), self.store.failed(self.cfg)
            wide = wide_points(self.exp, self.p, prep.cids, rows, prep.keys, prep.ckey, prep.idents, rep,
                               grid=prep.grid)
            if not wide:
                break
            more, resumed, why_more, _ = prep.plan_samples(rows, failed, reps=[rep], points=[pt for pt, _ in wide])
            self.result.skipped += resumed
            self.meta.setdefault("adaptive", []).append(
                {"repeat": rep, "points": {point_key(pt): why for pt, why in wide}, "samples": len(more)})
            for k, v in why_more.items():
                self.result.reasons[k] = self.result.reasons.get(k, 0) + v
            self.bar.total += len(more)
            self.take([(r, pt, self.by_id[cid]) for r, pt, cid in more])

    def again(self) -> None:
        """The samples measured beside foreign load (:mod:`.alone`), measured again, each at most
        :data:`.alone.MEASURE_AGAIN` more times; one still not alone is left to a later run."""
        for _ in range(alone.MEASURE_AGAIN):
            rows = self.store.measured(self.cfg)
            todo = [(rep, pt, cond) for (rep, pk, cid), (_, pt, cond) in self.flagged.items()
                    if (cid, pk, rep) not in rows]
            if not todo:
                break
            self.bar.total += len(todo)
            self.meta.setdefault("measured_again", []).append(len(todo))
            self.take(todo)

    def close(self) -> None:
        """The run file's last word, whatever happened; never raises, so the first error is the
        one the reader sees."""
        if self.bar is not None:
            self.bar.close()
        if not self.meta:       # stopped before the run file was written
            return
        if "probes" in self.meta and not self.result.status.startswith("interrupted"):
            try:
                self.probes.take("end")
            except Exception as exc:   # noqa: BLE001 - the run file's last word comes first
                print(f"[gillab] {self.exp.name}: the end probe failed ({exc})", file=sys.stderr)
        end_times = metadata.cpu_times()
        result = self.result
        self.meta.update(status=result.status, finished=metadata.now(), loadavg_end=metadata.loadavg(),
                         cpu_times_end=end_times,
                         cpu_steal_share=metadata.steal_share(self.meta["cpu_times_start"], end_times),
                         measured=result.measured, failed=result.failed, not_alone=result.not_alone,
                         measured_again=result.measured_again)
        unwritten = self.store.write_run_even_if_full(self.meta)
        self.store.release_reserve()
        if unwritten:
            print(f"[gillab] {self.exp.name}: the run file could not be updated ({unwritten}); it still says "
                  "'running', and the next run here marks it killed", file=sys.stderr)


class _Callback:
    """The progress bar's interface over ``report(done, total, what)``."""

    def __init__(self, report, total: int):
        self.report, self.total, self.done, self.what = report, total, 0, ""
        report(0, total, "")

    def set_postfix_str(self, what: str, refresh: bool = False) -> None:
        self.what = what

    def update(self, n: int = 1) -> None:
        self.done += n
        self.report(self.done, self.total, self.what)

    def close(self) -> None:
        pass


def _progress(total: int, desc: str, enabled):
    from tqdm.auto import tqdm

    if callable(enabled):
        return _Callback(enabled, total)

    return tqdm(total=total, desc=desc, unit="sample", disable=not enabled or total == 0,
                file=sys.stderr, dynamic_ncols=True)
