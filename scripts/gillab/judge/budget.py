"""A whole run against the reader's time: before measuring, what each chapter's sweep will take on
this machine and which judged rows it can decide; while measuring, a deadline; after the planned
runs, where the time left goes.

The forecast of a chapter is its planned samples (:func:`gillab.measure.sweep.plan`), each at the time the
same build took at the same point and configuration, plus the harness's time between samples, read
from the newest campaign that holds them: the reader's on this machine, else the reference, else a
contributed campaign of the same kind of machine; a chapter none of them measured at these sizes is
forecast at other sizes' times (each build and point at its own where they had it, else the
chapter's median sample), in proportion to the work the plan gives a sample where the chapter says
what that is (:func:`gillab.measure.experiments.work`): the time beyond what those samples waited
out scales, the planned sample's own waits are added, and it is never shorter than what a sample
waits out; the basis says so.  On a machine slower or faster than the
one those times come from (:func:`gillab.judge.speed.speed_factor`), the work and the time between samples scale; the
seconds a sample waits out its protocol (a counting window, a load tool's duration:
:func:`gillab.measure.experiments.waits`) do not, so a slow machine's forecast of a server chapter
is not its work's.

The rows a chapter can decide are its *judged* claims x builds (the reference's verdict rows whose
role is ``judged``).  Where every chapter's planned runs fit the budget, each chapter is measured
whole in turn.  Where they do not, every chapter's claims come first (the points its judged rows
read, with all their runs) and the other points (the figures' one run each) after every chapter's
claims, as long as time is left (:func:`gillab.measure.grid.claims_first`); only a chapter whose
claims do not fit either is left out, the fewest rows per minute first, and the run names the rows
it leaves.  A row counts for its chapter's
yield where the reference decides it at the runs the plan gives its points (:func:`deciding_runs`):
where the reference's own runs decided it, or where its interval straddles the band at the
reference's runs but the spread of those runs projects a definite outcome within the plan's
(:func:`gillab.judge.rounds.runs_to_decide`).  A row the reference's interval leaves straddling at any plausible
number of runs will most likely straddle it in a shorter run on a busier machine too, so a short
run spends its minutes where they decide rows; judged rows per minute only break ties (and stand
in where there is no reference).

Where time is left once every chosen chapter has its planned runs, a chapter whose judged rows
still straddle an edge of their band gets one more interleaved round (a trial of 3 where its rows
are a best of 3) at its claims' points, until the time is spent or no round fits: first the chapter
with the most straddling rows per second of a round that its spread projects to decide within the
runs a point may get (:mod:`gillab.judge.rounds`), then, where none is, the most straddling rows.  A row
whose interval sits across an edge at any plausible spread (a ratio of 1.07 judged against a band
ending at 1.1) takes no rounds from one that more runs would decide.  The stopping rule looks at
the data, which the intervals allow: up to :data:`gillab.stats.ADAPTIVE_MAX` runs (trials) their
ranks are a confidence sequence's, valid whenever the sweep stops (``tests/test_coverage.py``
simulates this rule); no chapter is given more.

Why it is long: the forecast and the choice of chapters read the same times and the same judged
rows; apart, each would read them again or pass them back and forth.  The machine's pace
(:mod:`gillab.judge.speed`) and the rounds after the plan (:mod:`gillab.judge.rounds`) are apart.
"""
from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field
from typing import NamedTuple

from .. import stats
from ..measure import experiments
from ..measure import grid as grid_mod
from ..measure.protocol import point_key
from ..measure.sweep import Deadline, OutOfTime  # noqa: F401 - the run's clock, re-exported for the whole run

# how a timed run chooses the chapters it leaves out (a run's record names its own: one recorded
# before this rule names none, and chose by CHOSEN_BEFORE)
CHOICE = "the fewest rows the reference decides at the planned runs per minute first"
CHOSEN_BEFORE = "the fewest judged rows per minute first"
# the time between two samples where no run file says (starting the process, storing the row)
DEFAULT_OVERHEAD_S = 0.15
# a build id in a verdict row's condition ("3.9.2 vs 2.7.18", "3.11.2 (single, over 3.9.2)")
BUILD_ID = re.compile(r"^([a-z]+-)?\d+\.\d+\.\d+t?(-gil)?$")
# the methods whose interval stays valid when the number of runs is chosen from the data
SEQUENTIAL = (*stats.ORDER, stats.RATIO, stats.COUNT)
# a chapter whose claims' runs do not fit is measured at these (one run a point: its figures), not
# left out; its judged rows are then named as having too few runs
FEWEST = {"repeats": 1}


@dataclass
class Timing:
    """Seconds per sample of one chapter at one configuration: per (build, point), the chapter's
    median where a pair was not measured, the harness's time between samples, and where read."""
    per_point: dict = field(default_factory=dict)
    median: float = math.nan
    overhead: float = DEFAULT_OVERHEAD_S
    basis: str = ""
    paired: set = field(default_factory=set)    # the (build, point)s whose samples timed their own one thread
    # at other sizes: per (build, point) the work its samples did (:func:`gillab.measure.experiments.work`),
    # and the median sample's; empty where the times read are of the planned configuration
    work: dict = field(default_factory=dict)
    median_work: float = math.nan
    # at other sizes: per (build, point) what its samples waited out, and the median sample's
    waited: dict = field(default_factory=dict)
    median_waited: float = 0.0

    def seconds(self, cid: str, pk: str, work: float | None = None, waits: float | None = None) -> float:
        """A sample's seconds: this build's at this point, else those of a retired build it replaced
        (builds.toml ``[[retired]]``: a campaign measured before it was provisioned), else the median;
        where they were read at other sizes and the planned sample's ``work`` is known, in proportion
        to it (20 times the decrements, 20 times the seconds); where its ``waits`` are given too,
        only the time beyond what those samples waited out scales, and the planned waits are added
        (perf2's five seconds of counting do not grow with its long request)."""
        key = (cid, pk)
        if key not in self.per_point:          # the retired builds are read from builds.toml only on a miss
            from ..measure.interpreters import stands_for

            key = next(((b, pk) for b in stands_for(cid) if (b, pk) in self.per_point), None)
        s, done = (self.per_point[key], self.work.get(key)) if key else (self.median, self.median_work)
        waited = self.waited.get(key, 0.0) if key else self.median_waited
        if not math.isfinite(s):
            return 1.0 + self.overhead
        if work and done and math.isfinite(done):
            if waits is not None:
                s = max(s - waited, 0.0) * work / done + waits
            else:
                s *= work / done
        return s + self.overhead


@dataclass
class ChapterForecast:
    experiment: str
    samples: int
    seconds: float
    judged: list            # the judged claims x builds ("claim_id @ build") its runs can decide
    basis: str
    repeats: int
    error: str = ""         # why it cannot start ('' when it can)
    short: list = field(default_factory=list)   # judged rows its planned runs are too few for
    waits: float = 0.0      # of ``seconds``, those its samples wait out their protocol (windows)
    decided: list = field(default_factory=list)  # of ``judged``, those the reference decides at its runs
    figures: float = 0.0    # of ``seconds``, those of the points no claim reads (the figures' runs)
    figure_waits: float = 0.0   # of ``figures``, those its samples wait out
    fewest: "ChapterForecast | None" = None     # the same chapter at :data:`FEWEST`, where that is less

    def scale(self, factor: float) -> "ChapterForecast":
        """The forecast on a machine ``factor`` times slower: the work and the harness's time
        between samples scale, what samples wait out (a counting window, k6's duration) does not."""
        self.seconds = self.waits + (self.seconds - self.waits) * factor
        self.figures = self.figure_waits + (self.figures - self.figure_waits) * factor
        if self.fewest is not None:
            self.fewest.scale(factor)
        return self

    def measured(self, fewest=()) -> "ChapterForecast":
        """This chapter as a run measures it: at :data:`FEWEST` where it is one of ``fewest``."""
        return self.fewest if self.experiment in fewest and self.fewest is not None else self

    @property
    def claims(self) -> float:
        """The seconds of the points its claims read (every point where no claim grid sets them
        apart): what decides its judged rows."""
        return self.seconds - self.figures

    @property
    def rows_per_minute(self) -> float:
        return len(self.judged) / (self.claims / 60) if self.claims > 0 else math.inf

    @property
    def decided_per_minute(self) -> float:
        return len(self.decided) / (self.claims / 60) if self.claims > 0 else math.inf

    @property
    def rank(self) -> tuple[float, float, float]:
        """The order a short run measures chapters in (smallest first): the most rows the
        reference decides at the planned runs per minute of its claims, then the most judged rows
        per minute, then the shortest."""
        return (-self.decided_per_minute, -self.rows_per_minute, self.seconds)


def _sample_walls(rows):
    """Each sample's wall time, once: (its first row, seconds) for every sample of ``rows`` that
    has one (a sample stored as many rows, ccbench's pings or a server's windows, is one sample)."""
    seen = set()
    for r in rows:
        key = (r.get("config"), r.get("condition"), r.get("point"), r.get("repeat"))
        if key in seen:
            continue
        seen.add(key)
        try:
            w = float(r.get("process_wall_s") or "nan")
        except ValueError:
            continue
        if math.isfinite(w):
            yield r, w


def _read_samples(store, experiment: str = "", config: str | None = None) -> list[dict]:
    """The successful samples of ``store`` a page reads (not the ones measured again after the
    measuring code changed, :func:`gillab.judge.results.current_rows`), of ``config`` only where
    one is given: every time the forecast reads comes from these."""
    import pandas as pd

    from .results import current_rows

    rows = pd.DataFrame([r for r in store.rows()
                         if r.get("status") == "ok" and (config is None or r.get("config") == config)])
    return current_rows(rows, experiment).to_dict("records")


def _paired(r) -> bool:
    """Whether a stored sample timed its own one-thread countdown in its process (a paired run)."""
    v = r.get("one_thread_seconds")
    return v not in (None, "") and not (isinstance(v, float) and math.isnan(v))


def _work_of(name: str, samples) -> tuple[dict, float, dict, float]:
    """Per (build, point) the median work of ``samples`` ((row, wall) pairs: what each did,
    :func:`gillab.measure.experiments.work`) and the median of those, where the chapter says what a
    sample's work is and every sample says it; ({}, nan) otherwise: its times are then not scaled.
    Then the same of what they waited out (:func:`gillab.measure.experiments.waits_done`, 0 where a
    sample's row does not say), the part of their time that no size scales."""
    done: dict = {}
    waited: dict = {}
    for r, _ in samples:
        u = experiments.work(name, r, r) if name else None
        if u is None:
            return {}, math.nan, {}, 0.0
        key = (r.get("condition"), r.get("point"))
        done.setdefault(key, []).append(u)
        waited.setdefault(key, []).append(experiments.waits_done(name, r) or 0.0)   # as the sweep's estimate reads it
    per = {k: statistics.median(v) for k, v in done.items()}
    waits = {k: statistics.median(v) for k, v in waited.items()}
    return (per, (statistics.median(per.values()) if per else math.nan),
            waits, (statistics.median(waits.values()) if waits else 0.0))


def _timing_from(store, config: str, experiment: str = "") -> Timing | None:
    """Per (build, point) median wall time of ``config``'s current samples in ``store``
    (:func:`_read_samples`), their work (a point none of them measured is timed at the median, in
    proportion to its work: a switch interval grown to hold its intervals counts more) and the time
    its runs spent between samples; None where it holds no sample of ``config``."""
    from ..measure.campaigns import run_seconds

    per: dict = {}
    wall_by_run: dict = {}
    paired = set()
    samples = list(_sample_walls(_read_samples(store, experiment, config)))
    for r, w in samples:
        per.setdefault((r.get("condition"), r.get("point")), []).append(w)
        if _paired(r):
            paired.add((r.get("condition"), r.get("point")))
        run = wall_by_run.setdefault(r.get("run_id"), [0.0, 0])
        run[0] += w
        run[1] += 1
    if not per:
        return None
    gaps = []
    for run in store.runs():
        took, (wall, n) = run_seconds(run), wall_by_run.get(run.get("run_id"), (0.0, 0))
        if took and n and run.get("measured") == n:
            gaps.append(max(0.0, took - wall) / n)
    work, median_work, waited, median_waited = _work_of(experiment, samples)
    return Timing({k: statistics.median(v) for k, v in per.items()},
                  statistics.median([statistics.median(v) for v in per.values()]),
                  statistics.median(gaps) if gaps else DEFAULT_OVERHEAD_S, paired=paired,
                  work=work, median_work=median_work, waited=waited, median_waited=median_waited)


def timing(name: str, config: str, campaign: str | None = None, profile: str = "default") -> Timing:
    """The seconds per sample of chapter ``name`` at ``config`` (see the module's words)."""
    from ..measure import campaigns

    here, ref = campaigns.for_reading(name, campaign)     # without a campaign: yours, the newest here
    kind = (ref or here).fingerprint if (ref or here) is not None else None
    contributed = [c for c in campaigns.all_campaigns() if c.is_contributed and c.has(name)
                   and (kind is None or c.fingerprint == kind)]
    for c in [x for x in (here, ref) if x is not None] + sorted(contributed, key=lambda c: c.created, reverse=True):
        t = _timing_from(c.store(name), config, name)
        if t is not None:
            t.basis = f"campaign {c.id}"
            return t
    for c in [x for x in (here, ref) if x is not None]:
        walls = list(_sample_walls(_read_samples(c.store(name), name)))
        # the same profile's samples first: another profile's sizes (seed's) can be ten times longer
        same = [(r, w) for r, w in walls if r.get("profile") == profile] or walls
        if same:
            # each build and point at its own time where the other sizes had it: a chapter's points
            # differ by far more than its sizes do (ccbench's old-GIL pings wait out their bound);
            # with the work each sample did, where the chapter says what that is, so that the
            # planned size scales them (seed's switch interval counts 20 times default's decrements)
            per: dict = {}
            for r, w in same:
                per.setdefault((r.get("condition"), r.get("point")), []).append(w)
            work, median_work, waited, median_waited = _work_of(name, same)
            return Timing({k: statistics.median(v) for k, v in per.items()},
                          statistics.median(w for _, w in same), DEFAULT_OVERHEAD_S,
                          f"campaign {c.id}, other sizes (no sample of this configuration yet"
                          + ("; each point's time in proportion to its work)" if work else ")"),
                          {(r.get("condition"), r.get("point")) for r, _ in same if _paired(r)},
                          work, median_work, waited, median_waited)
    return Timing({}, math.nan, DEFAULT_OVERHEAD_S, "nothing measured yet: 1 s a sample")


def judged_rows(flat=None) -> dict[str, list[tuple[str, int]]]:
    """Per chapter, its judged claims x builds on the reference ("claim_id @ build"), each with the
    runs its interval needs at the points it reads (a best of 3: 3 per trial); not a row of a retired
    build that nothing replaces (builds.toml ``[[retired]]``): no run can measure it again."""
    from . import claims, verdicts

    flat = verdicts.reference_flat(flat)
    if flat is None:
        return {}
    j = _measurable(verdicts.judged(flat))
    known = claims.table().index
    out: dict[str, list[tuple[str, int]]] = {}
    for _, r in j.iterrows():
        need = stats.runs_needed(r["estimand"]) if r["estimand"] in stats.METHODS else None
        size = claims.trial_size(r["claim_id"]) if r["claim_id"] in known else 1
        out.setdefault(r["experiment"], []).append((f"{r['claim_id']} @ {r['condition']}",
                                                    (need or 1) * size))
    return out


def _measurable(j):
    """The judged rows a run can measure again: not those of a retired build nothing replaces."""
    from .claims import builds_in
    from ..measure.interpreters import retired

    gone = {b for b, r in retired().items() if not r.replaced_by}
    return j[[not (set(builds_in(str(c))) & gone) for c in j["condition"]]]


def decided_rows(flat=None) -> set[str]:
    """The judged rows ("claim_id @ build", as :func:`judged_rows` names them) whose interval on the
    reference campaign's own samples lies wholly inside or outside the band (agrees, higher, lower)."""
    from . import verdicts
    from .across import DEFINITE

    flat = verdicts.reference_flat(flat)
    if flat is None:
        return set()
    j = _measurable(verdicts.judged(flat))
    j = j[j["outcome"].isin(DEFINITE)]
    return {f"{c} @ {b}" for c, b in zip(j["claim_id"], j["condition"])}


def deciding_runs(flat=None) -> dict[str, int]:
    """Per judged row of the reference ("claim_id @ build") that its runs decide, the runs a point
    needs for it (a best of 3: 3 per trial): the fewest at which the spread of the reference's runs
    projects its interval wholly inside or outside the band (:func:`fewest_runs`: at most the runs
    it had where they decided it, more where its interval straddled the band); 0 for a row the
    reference decided with an interval no spread projects (a count of what was seen); a row no
    plausible number of runs decides is not here."""
    from . import claims, verdicts
    from .across import DEFINITE
    from ..measure import campaigns

    flat = verdicts.reference_flat(flat)
    if flat is None:
        return {}
    j = _measurable(verdicts.judged(flat))
    straddling = set(verdicts.straddling(j).index)    # not those with too few runs for an interval
    known = claims.table().index
    again = _measured_again()
    ref = campaigns.reference_id()
    out = {}
    for i, r in j.iterrows():
        key = f"{r['claim_id']} @ {r['condition']}"
        if r["experiment"] in again and r.get("campaign") == ref:
            # the reference measured this chapter with earlier code and sizes: its runs project
            # nothing about today's, so each row stands in as decided at the runs its interval
            # needs, as where there is no reference
            need = stats.runs_needed(r["estimand"]) if r["estimand"] in stats.METHODS else None
            out[key] = (need or 1) * (claims.trial_size(r["claim_id"]) if r["claim_id"] in known else 1)
            continue
        settled = r["outcome"] in DEFINITE          # as decided_rows reads the reference
        if not settled and i not in straddling:
            continue
        # a straddling row, only beyond the runs it had (a range of fewer runs is narrower on
        # average, but these runs straddled)
        runs = fewest_runs(r, start=None if settled else int(r["n"]) + 1)
        if runs is None and not settled:
            continue
        size = claims.trial_size(r["claim_id"]) if r["claim_id"] in known else 1
        out[key] = 0 if runs is None else runs * size
    return out


def _measured_again() -> set[str]:
    """The chapters of the reference declared to be measured again (MEASURE_AGAIN.toml): what it
    holds of them was measured at another configuration."""
    from ..measure import campaigns

    ref = campaigns.reference_id()
    return {d.chapter for d in campaigns.declared() if d.reference == ref}


def forecast_chapter(name: str, profile: str, campaign: str | None, judged: list[tuple[str, int]],
                     overrides: dict | None = None, new_campaign: bool = False,
                     decided: dict[str, int] | None = None, resolve=None) -> ChapterForecast:
    """What ``name``'s sweep of ``profile`` would measure in ``campaign`` and how long it takes;
    its judged rows split into those its claims' points get the runs for and the rest, and of the
    first those the reference decides at the planned runs (``decided``: :func:`deciding_runs`).
    ``resolve(name, overrides)``: the parameters, where a whole run's plan resolves them
    (:meth:`gillab.judge.plan.Plan.params`); else ``profile`` and ``overrides`` are resolved here."""
    from ..measure import sweep
    from ..measure.interpreters import now_of
    from ..measure.profiles import ParameterError

    exp = experiments.get(name)
    try:
        p = exp.resolve(profile, overrides) if resolve is None else resolve(name, overrides)
        pl = sweep.plan(name, profile, campaign=campaign, new_campaign=new_campaign, params=p)
    except ParameterError as exc:
        return ChapterForecast(name, 0, 0.0, [], "", 0, str(exc))
    t = timing(name, pl.config_id, None if pl.campaign_is_new else pl.campaign,
               "default" if profile == "verdicts" else profile)   # verdicts: default's sizes
    g = grid_mod.of(exp, p)
    also = getattr(exp, "also_times", None)     # the one-thread countdown a paired run also times
    seconds = waits = figures = figure_waits = 0.0
    for _, pt, cid in pl.todo:
        waited = experiments.waits(name, p, pt)
        took = t.seconds(cid, point_key(pt), experiments.work(name, p, pt), waited)
        one = also({**p, "paired": True}, pt) if also is not None else None
        if one is not None and bool(p.get("paired")) != ((cid, point_key(pt)) in t.paired):
            # the times read were of runs measured the other way: add the one-thread countdown, or take it off
            took += (1 if p.get("paired") else -1) * (t.seconds(cid, point_key(one), experiments.work(name, p, one))
                                                      - t.overhead)
        # a sample lasts at least what it waits out: times read at other sizes (seed's 5 s heartbeats
        # and 1 s windows against default's 0.1 and 0.5) can be shorter than the planned waits alone
        took = max(took, waited + t.overhead)
        seconds += took
        waits += waited
        if g.unclaimed(cid, point_key(pt)):
            figures += took
            figure_waits += waited

    def enough(row: str, need: int) -> bool:
        """The row's runs are planned: enough repeats, and every build it names is measured and
        gets them somewhere (a claim tier or claim_builds holds it)."""
        named = [w for w in row.split(" @ ", 1)[-1].replace("(", " ").replace(")", " ").replace(",", " ").split()
                 if BUILD_ID.match(w)]
        # a row the reference judged on a retired build counts for the build that plays its part now
        return need <= p["repeats"] and all(now_of(c) in pl.conditions and g.every_repeat_somewhere(now_of(c)) for c in named)
    ok = [enough(k, need) for k, need in judged]
    planned = [k for (k, _), fits in zip(judged, ok) if fits]
    return ChapterForecast(name, len(pl.todo), seconds, planned, t.basis, p["repeats"],
                           short=[k for (k, _), fits in zip(judged, ok) if not fits], waits=waits,
                           decided=[k for k in planned if (decided or {}).get(k, math.inf) <= p["repeats"]],
                           figures=figures, figure_waits=figure_waits)


def forecast(profile: str, campaign: str | None = None, flat=None, new_campaign: bool = False,
             factor: float = 1.0, resolve=None) -> list[ChapterForecast]:
    """Every chapter's forecast, in the report's order, on a machine ``factor`` times slower than
    the times read (:func:`gillab.judge.speed.speed_factor`; :meth:`ChapterForecast.scale`);
    ``resolve``: as :func:`forecast_chapter`'s."""
    from . import verdicts

    flat = verdicts.reference_flat(flat)
    rows, decided = judged_rows(flat), deciding_runs(flat)
    out = []
    for n in experiments.names():
        c = forecast_chapter(n, profile, campaign, rows.get(n, []), new_campaign=new_campaign, decided=decided,
                             resolve=resolve)
        if not c.error and c.repeats > FEWEST["repeats"]:
            least = forecast_chapter(n, profile, campaign, rows.get(n, []), overrides=FEWEST,
                                     new_campaign=new_campaign, decided=decided, resolve=resolve)
            c.fewest = least if not least.error and least.seconds < c.seconds else None
        out.append(c.scale(factor))
    return out


def by_yield(chapters: list[ChapterForecast], names: list[str]) -> list[str]:
    """``names`` in the order a timed run measures them (:attr:`ChapterForecast.rank`: the most rows
    the reference decides at the planned runs per minute first), so that a run the clock stops early
    has decided the most it could."""
    rank = {c.experiment: c.rank for c in chapters}
    return sorted(names, key=lambda n: rank.get(n, (0.0, 0.0, 0.0)))


def whole_fits(chapters: list[ChapterForecast], minutes: float | None) -> bool:
    """Whether every chapter that can start fits ``minutes`` whole (claims and figures)."""
    return minutes is None or sum(c.seconds for c in chapters if not c.error) <= minutes * 60


class Choice(NamedTuple):
    """What a run within a budget measures: the chapters chosen (in the report's order), those left
    out, and of the chosen those measured at :data:`FEWEST` (their claims' runs did not fit)."""
    chosen: list
    left_out: list
    fewest: list = []


def choose(chapters: list[ChapterForecast], minutes: float | None) -> Choice:
    """The chapters to measure within ``minutes`` (None: every one), in the report's order, and
    those left out.  Where they do not all fit whole, their claims come first and their figures
    after (:func:`whole_fits`): the claims of the chapters that decide the most rows per minute
    first (:attr:`ChapterForecast.rank`), then any chapter whose claims still fit; then, in the
    same order, a chapter whose claims did not fit is measured at one run a point (its figures,
    :attr:`ChapterForecast.fewest`) where that fits, so that every chapter is measured while it can
    be; only a chapter that does not fit even so is left out."""
    ok = [c for c in chapters if not c.error]
    if whole_fits(ok, minutes):
        return Choice([c.experiment for c in ok], [], [])
    left, chosen, fewest = minutes * 60, set(), set()
    for c in sorted(ok, key=lambda c: c.rank):
        if c.claims <= left:
            chosen.add(c.experiment)
            left -= c.claims
    for c in sorted(ok, key=lambda c: c.rank):
        if c.experiment not in chosen and c.fewest is not None and c.fewest.claims <= left:
            fewest.add(c.experiment)
            left -= c.fewest.claims
    return Choice([c.experiment for c in ok if c.experiment in chosen | fewest],
                  [c for c in ok if c.experiment not in chosen | fewest],
                  [c.experiment for c in ok if c.experiment in fewest])


def effective(chapters: list[ChapterForecast], fewest=()) -> list[ChapterForecast]:
    """``chapters`` as they will be measured: those in ``fewest`` at :data:`FEWEST`."""
    return [c.measured(fewest) for c in chapters]


def describe(chapters: list[ChapterForecast], chosen: list[str], minutes: float | None, fewest=()) -> str:
    """The forecast as the reader sees it before anything is measured (``fewest``: the chosen
    chapters measured at one run a point, :func:`choose`)."""
    lines = [f"{'chapter':<16} {'samples':>7} {'minutes':>7} {'judged rows':>11} {'ref. decides':>12} "
             f"{'too few runs':>12}  basis"]
    for c in effective(chapters, fewest):
        mark = ("  (one run a point: its claims' runs do not fit)" if c.experiment in fewest else
                "" if c.experiment in chosen else "  (cannot start)" if c.error else "  (left out: no time)")
        lines.append(f"{c.experiment:<16} {c.samples:>7} {c.seconds / 60:>7.1f} {len(c.judged):>11} "
                     f"{len(c.decided):>12} {len(c.short):>12}  {c.basis}{mark}")
    use = [c for c in effective(chapters, fewest) if c.experiment in chosen]
    total = sum(c.seconds for c in use) / 60
    rows = sum(len(c.judged) for c in use)
    decided = sum(len(c.decided) for c in use)
    every = sum(len(c.judged) + len(c.short) for c in chapters)
    budget = f" of a {minutes:g}-minute budget" if minutes is not None else ""
    lines.append(f"expected: {total:.1f} minutes{budget} for the planned runs, at which {rows} of the {every} judged "
                 f"claims x builds have the runs a 95% interval needs; at those runs the reference decides {decided} of "
                 "them (agrees, higher or lower: its runs did, or their spread projects it), a guide to what this "
                 "run can decide, not a promise")
    if not whole_fits(chapters, minutes):
        claims = sum(c.claims for c in use) / 60
        lines.append(f"the planned runs do not all fit: every chapter's claims first ({claims:.1f} minutes), then the "
                     f"points no claim reads (the figures' runs, {total - claims:.1f} minutes) while time is left")
    if fewest:
        lines.append("measured at one run a point, their claims' runs not fitting (their figures; the judged rows "
                     "left to a longer run): " + ", ".join(fewest))
    out = [c for c in chapters if c.experiment not in chosen and not c.error]
    if out:
        lines.append("not judged in this budget (their chapters do not fit): "
                     + "; ".join(f"{c.experiment}: {', '.join(c.judged + c.short) or 'no judged row'}" for c in out))
    short = [k for c in use for k in c.short]
    if short:
        lines.append(f"too few runs planned for {len(short)} judged rows (left to more rounds, if time is left, "
                     "or to the `verdicts` profile; 3.6-3.11 to `history`): " + ", ".join(short))
    return "\n".join(lines)


# -- how many runs decide a row (the forecast's yield, and the rounds after the plan: judge.rounds)
def fewest_runs(row, most: int | None = None, start: int | None = None) -> int | None:
    """The fewest runs (pairs, trials), from ``start`` (the runs its interval needs) to ``most``
    (the confidence sequence's 20), at which a row's interval, at the spread of its runs so far
    (:func:`gillab.stats.spread_factor`: narrower with more runs, wider with fewer), lies wholly
    inside or outside its band; None where none does, or the row has no such interval."""
    from . import claims
    from .across import DEFINITE

    most = stats.ADAPTIVE_MAX if most is None else most
    method, m, lo, hi = row["estimand"], row["measured"], row["ci_low"], row["ci_high"]
    try:
        n = int(row["n"])
        comparison = claims.get(row["claim_id"])["comparison"]
    except (KeyError, TypeError, ValueError):
        return None
    if method not in (*stats.ORDER, stats.RATIO) or any(math.isnan(float(x)) for x in (m, lo, hi)) or n < 1:
        return None
    need = stats.runs_needed(method) or 1
    for later in range(max(start or need, need), most + 1):
        f = stats.spread_factor(method, max(n, need), later)
        out = claims.compare(comparison, float(row["published"]), row["band"], m - (m - lo) * f, m + (hi - m) * f,
                             (later, later) if method == stats.RATIO else later, method=method)
        if out in DEFINITE:
            return later
    return None
