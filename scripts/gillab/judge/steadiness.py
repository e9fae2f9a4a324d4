"""Whether a sitting was steady: the one rule that says whether a whole run may become the reference,
and the probes (:class:`Probes`) it reads.

A whole run (``gillab reproduce``) takes a pace probe (:func:`gillab.judge.speed.pace_probe`: a few
one-thread countdown samples, the same that tell the forecast how fast this machine runs) at its
start, between chapters or rounds once :data:`PROBE_EVERY_S` have passed since the last one, and
at its end, each with the load average and the share of CPU time the hypervisor gave to other
guests (*steal*) over the probe's samples and over the stretch since the probe before it.  They
are kept in the run's record (``probes``).

The rule (:func:`of`), fixed before any sitting was read against it:

* **pace**: the slowest probe's median at most :data:`MOST_PACE_SPREAD` times the fastest's (a
  machine that slowed down or sped up by more while it measured did not measure one thing);
* **steal**: no stretch of the sitting (a probe's samples, or the time between two probes) lost
  more than :data:`MOST_STEAL` of its CPU time to the hypervisor, nor the run as a whole;
* at least :data:`FEWEST_PROBES` probes (its start and its end).

It reads the record alone: it never names a CPU model, a machine or a campaign.  A record written
before the probe existed holds none: its steadiness is *not recorded*, never inferred from its load
or its steal alone.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

from ..record import RunRecord

# -- the rule, fixed before any sitting was judged by it -----------------------------------------
MOST_PACE_SPREAD = 1.25    # the slowest probe's median over the fastest's, at most
MOST_STEAL = 0.05          # the share of CPU time stolen over any stretch of the sitting, at most
FEWEST_PROBES = 2          # a start and an end: one probe says nothing of drift
PROBE_EVERY_S = 300.0      # between chapters or rounds, a probe once this long has passed since the last

STEADY, NOT_STEADY, NOT_RECORDED = "steady", "not steady", "not recorded"


@dataclass
class Steadiness:
    """What :func:`of` says of one whole run's record."""
    outcome: str                 # STEADY, NOT_STEADY or NOT_RECORDED
    probes: int                  # the probes that measured a pace
    spread: float | None         # slowest probe median / fastest (None: fewer than two)
    steal: float | None          # the largest steal share of any stretch (None: none recorded)
    why: str                     # the rule's words for this record
    cpu_gap: float | None = None  # the widest gap between the CPUs' paces a probe saw (recorded, not ruled)

    @property
    def may_be_reference(self) -> bool:
        return self.outcome == STEADY


def _positive(record, key: str) -> list[float]:
    """Each probe's ``key`` in ``record`` that is a positive finite number, in the order taken."""
    vals = (p.get(key) for p in RunRecord.of(record).probes)
    return [float(v) for v in vals if isinstance(v, (int, float)) and math.isfinite(v) and v > 0]


def medians(record) -> list[float]:
    """The probes' medians (seconds) in ``record``, in the order they were taken; a probe that
    failed (no build to probe, a sample that broke) has none."""
    return _positive(record, "median_s")


def cpu_gaps(record) -> list[float]:
    """Each probe's gap between its CPUs' paces in ``record`` (the slowest CPU's median over the
    fastest's, :func:`gillab.judge.speed.pace_probe`), in the order they were taken; a probe taken
    before probes were pinned to each CPU, or on one CPU, has none.  The rule does not read it: it
    was fixed before the gap was recorded; the pages show it beside the pace."""
    return _positive(record, "cpu_gap")


def steal_shares(record) -> list[float]:
    """Every steal share ``record`` holds for a stretch of its sitting: each probe's own samples,
    each stretch between two probes, and the run as a whole."""
    rec = RunRecord.of(record)
    out = []
    for p in rec.probes:
        for key in ("cpu_steal_share", "cpu_steal_share_since"):
            if isinstance(p.get(key), (int, float)):
                out.append(float(p[key]))
    if isinstance(rec.cpu_steal_share, (int, float)):
        out.append(float(rec.cpu_steal_share))
    return out


def of(record) -> Steadiness:
    """The rule (see the module's words) applied to one whole run's record (a
    :class:`gillab.record.RunRecord` or its dict)."""
    if not RunRecord.of(record).probes:
        return Steadiness(NOT_RECORDED, 0, None, None,
                          "no pace probe in its record (written before the probe existed)")
    ms, steals, gaps = medians(record), steal_shares(record), cpu_gaps(record)
    spread = max(ms) / min(ms) if len(ms) >= 2 else None
    gap = max(gaps) if gaps else None
    steal = max(steals) if steals else None
    faults = []
    if len(ms) < FEWEST_PROBES:
        faults.append(f"{len(ms)} probe{'s' if len(ms) != 1 else ''} measured a pace, fewer than {FEWEST_PROBES}")
    if spread is not None and spread > MOST_PACE_SPREAD:
        faults.append(f"the slowest probe took {spread:.2f}x the fastest's time (at most {MOST_PACE_SPREAD:g}x)")
    if steal is None:
        faults.append("no steal share recorded")
    elif steal > MOST_STEAL:
        faults.append(f"{steal:.1%} of the CPU time was stolen over a stretch (at most {MOST_STEAL:.0%})")
    if faults:
        return Steadiness(NOT_STEADY, len(ms), spread, steal, "; ".join(faults), gap)
    return Steadiness(STEADY, len(ms), spread, steal,
                      f"{len(ms)} probes within {spread:.2f}x of each other (at most {MOST_PACE_SPREAD:g}x), "
                      f"at most {steal:.1%} stolen (at most {MOST_STEAL:.0%})", gap)


ALONE, NOT_ALONE = "alone", "not alone"


@dataclass
class Alone:
    """Whether a whole run's samples were measured alone (:mod:`gillab.measure.alone`): every sample
    that was not is kept aside and measured again; the run is *alone* when each was measured again
    alone, so that no verdict reads fewer runs for foreign load."""
    outcome: str                 # ALONE, NOT_ALONE or NOT_RECORDED
    kept_aside: int              # samples measured beside foreign load
    left: int                    # of them, not measured again alone by the run's end
    chapters: dict               # chapter -> samples kept aside
    why: str


def alone_of(record) -> Alone:
    """Whether ``record``'s run was alone (see :class:`Alone`); a record written before samples
    were checked (version 1) is *not recorded*."""
    from ..measure import alone

    rec = RunRecord.of(record)
    if rec.version < 2:
        return Alone(NOT_RECORDED, 0, 0, {}, "written before each sample recorded the load beside it")
    if rec.foreign_limit is not None and rec.foreign_limit != alone.MOST_FOREIGN_CPUS:
        return Alone(NOT_RECORDED, 0, 0, {}, f"measured with ${alone.LIMIT_ENV}={rec.foreign_limit:g}, not the "
                                            f"rule's {alone.MOST_FOREIGN_CPUS:g}: no sample was kept aside by the rule")
    kept = rec.samples_not_alone()
    n = sum(kept.values())
    again = sum(e.get("measured_again", 0) for e in rec.experiments)
    left = max(n - again, 0)
    if not n:
        return Alone(ALONE, 0, 0, {}, "no sample was measured beside other processes' load")
    where = ", ".join(f"{k} {v}" for k, v in kept.items())
    if not left:
        return Alone(ALONE, n, 0, kept, f"{n} sample(s) measured beside other processes' load ({where}), "
                                        "each measured again alone")
    return Alone(NOT_ALONE, n, left, kept, f"{n} sample(s) measured beside other processes' load ({where}); "
                                           f"{left} not measured again alone, so their points have fewer runs")


HELD, WIDE, FAILED = "held", "wider than their band", "failed"


@dataclass
class Controls:
    """What a campaign's controls (claims.csv ``role`` control: rows only noise can fail, such as
    one thread against one thread) say of its pace from run to run, the grain a verdict reads, where
    the probes read it every few minutes.  A control with runs enough for its 95% interval *held*
    when that interval lies in its band; it is *wider than its band* when identical runs spread more
    than the band allows (:func:`gillab.judge.claims.too_wide`: the rows it guards carry the machine's
    spread); it *failed* outside its band (the rows it guards read "control failed")."""
    outcome: str                 # HELD, WIDE or FAILED (the worst of its controls), NOT_RECORDED
    judged: int                  # control x build rows with runs enough for an interval
    wide: list                   # "claim on build [lo, hi]" of those wider than their band
    failed: list                 # the same, of those outside it
    why: str

    @property
    def held(self) -> bool:
        return self.outcome == HELD


def controls_of(flat) -> Controls:
    """:class:`Controls` of a campaign's flat verdict rows (:func:`gillab.judge.verdicts.flat`)."""
    from .claims import MACHINE_PACE

    if flat is None or len(flat) == 0 or "role" not in flat.columns:
        return Controls(NOT_RECORDED, 0, [], [], "no control was measured")
    c = flat[(flat["role"] == "control") & flat["outcome"].isin(["agrees", "higher", "lower", "inconclusive"])]
    c = c[~c["why"].fillna("").map(lambda w: bool(w) and not w.startswith(MACHINE_PACE))]

    def name(r) -> str:
        return f"{r['claim_id']} on {r['build']} [{r['ci_low']:.3g}, {r['ci_high']:.3g}]"

    wide = [name(r) for _, r in c.iterrows() if str(r["why"] or "").startswith(MACHINE_PACE)]
    failed = [name(r) for _, r in c.iterrows() if r["outcome"] in ("higher", "lower")]
    if not len(c):
        return Controls(NOT_RECORDED, 0, [], [], "no control had runs enough for an interval")
    outcome = FAILED if failed else WIDE if wide else HELD
    parts = ([f"{len(wide)} wider than their band (identical runs spread more than it allows)"] if wide else []) + (
        [f"{len(failed)} outside {'it' if wide else 'their band'}"] if failed else [])
    why = f"{len(c)} control x build rows with runs enough: " + ("; ".join(parts) or "each inside its band")
    return Controls(outcome, len(c), wide, failed, why)


def rule_words() -> str:
    """The rule in one sentence, for the pages that show it."""
    return (f"a sitting may become the reference when its pace probes (taken at its start, at least every "
            f"{PROBE_EVERY_S / 60:g} minutes between chapters, and at its end) are at least {FEWEST_PROBES}, the "
            f"slowest one's median at most {MOST_PACE_SPREAD:g}x the fastest's, and no stretch of it, nor the "
            f"whole run, lost more than {MOST_STEAL:.0%} of its CPU time to the hypervisor")


def due(last_probe_at: float, now: float) -> bool:
    """Whether a probe is due between two chapters or rounds (monotonic seconds)."""
    return now - last_probe_at >= PROBE_EVERY_S


class Probes:
    """The pace probes of one run (:func:`gillab.judge.speed.pace_probe`), kept in its record for
    :func:`of`: one at the start, one between chapters, rounds or samples once :data:`PROBE_EVERY_S`
    have passed since the last (never inside a sample), one at the end.  A whole run takes them
    (:func:`gillab.reproduce.reproduce`), and so does a chapter measured on its own
    (:func:`gillab.measure.sweep.measure`'s ``probes``).  Each is taken on the first probe's build,
    and holds, besides its samples, the steal share of the stretch since the probe before it."""

    def __init__(self, profile: str):
        from . import speed

        self.size = speed.probe_size(profile)     # resolved once: every probe of the run is this size
        self.taken: list[dict] = []
        self.t0 = time.monotonic()
        self.last = self.t0
        self.times: dict = {}           # the CPU times where the last probe ended

    def take(self, when: str) -> dict:
        from ..measure import metadata
        from . import speed

        t = time.monotonic()
        build = next((p["build"] for p in self.taken if p.get("build")), None)
        got = speed.pace_probe(self.size, build)
        end = got.pop("cpu_times", {})
        got = {"when": when, "after_s": round(t - self.t0, 1), **got, "seconds": round(time.monotonic() - t, 2)}
        if self.times:
            got["cpu_steal_share_since"] = metadata.steal_share(self.times, end)
        self.times, self.last = end, time.monotonic()
        self.taken.append(got)
        return got

    def between(self, deadline=None) -> None:
        """A probe between two chapters, rounds or samples, where one is due and the run's time (if
        it has a ``deadline``) is not spent."""
        if due(self.last, time.monotonic()) and (deadline is None or deadline.left() > 0):
            self.take("between")

    def pace(self, ref_s: float | None = None) -> tuple[float, str]:
        """The machine's pace over the probes so far (:func:`gillab.judge.speed.pace`), against
        ``ref_s`` where given."""
        from . import speed

        return speed.pace(self.taken, self.size, ref_s)

    @property
    def reserve(self) -> float:
        """The seconds a timed run keeps back for its end probe: the first probe's, and half again."""
        return 1.5 * (self.taken[0]["seconds"] if self.taken else 0.0)
