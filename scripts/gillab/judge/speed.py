"""The pace of the machine a run measures on: how much slower or faster than the times its forecast
reads (:mod:`gillab.judge.budget`) it runs now.

A *probe* (:func:`pace_probe`) is a few one-thread countdown samples, after one that warms the
machine up; its median against the same build's and point's in the campaign the forecast reads its
times from is the machine's *speed factor* (:func:`speed_factor`).  Over a whole run the pace is
the median of every probe's median so far (:func:`pace`), read against the first plan's yardstick
(:func:`probe_reference`), so that no single moment (the first probe, right after the builds) plans
the whole run (:class:`gillab.judge.plan.Plan`).
"""
from __future__ import annotations

import os
import statistics
from dataclasses import dataclass

from ..measure import alone, experiments
from ..measure.protocol import point_key
from .budget import timing


PROBE_RUNS = 3          # samples of the probe: their median against the same point's in the times' campaign
PROBE_POINT = {"threads": 1}
PROBE_BUILDS = "3.13.5,3.9.2"      # the first of these built here is probed (today's GIL, else the era's)
PROBE_CPU_ROUNDS = 2    # one-thread samples pinned to each CPU, in the order 0, 1, ..., 1, 0


@dataclass(frozen=True)
class ProbeSize:
    """The countdown a run probes at, resolved once for the whole run: the profile whose size it is
    (:func:`probe_size`), its parameters and their configuration id."""
    profile: str
    params: dict
    config_id: str


def probe_size(profile: str) -> ProbeSize:
    """The countdown size a run of ``profile`` probes at: its own where countdown has one, else
    (and for `verdicts`, whose countdown is `default`'s) `default`'s."""
    from ..measure.profiles import ParameterError

    exp = experiments.get("countdown")
    try:
        prof = "default" if profile == "verdicts" else profile
        p = exp.resolve(prof)
    except ParameterError:
        prof, p = "default", exp.resolve("default")
    return ProbeSize(prof, p, exp.config_id(p))


def pace_probe(size: ProbeSize, build: str | None = None) -> dict:
    """One pace probe: :data:`PROBE_RUNS` one-thread countdown samples at ``size`` on
    ``build`` (default: the first of :data:`PROBE_BUILDS` built here), after one more that warms
    the machine up (a CPU waking from idle, a build's files read from disk: ``warmup_s``, not
    counted), with the load average, the share of CPU time stolen over them (a few seconds) and
    the most CPU other processes used while one ran (``foreign_cpus``, ``alone``:
    :mod:`gillab.measure.alone`).  The record a whole run keeps
    (:mod:`gillab.judge.steadiness`): ``build``, ``point``, ``runs`` (seconds), ``median_s``,
    ``loadavg``, ``cpu_steal_share``, ``at``, and ``cpu_times`` (where the stretch to the next
    probe starts); ``error`` instead of runs where it could not measure.

    On a machine of two CPUs or more it also times the same sample pinned to each CPU
    (:data:`PROBE_CPU_ROUNDS` each, in the order 0, 1, ..., 1, 0, so that a pace that drifts over
    the probe falls on every CPU alike): ``cpu_runs`` (CPU -> seconds), ``cpu_median_s`` and
    ``cpu_gap``, the slowest CPU's median over the fastest's.  A one-thread run rides one CPU, and
    threads that hand the GIL to each other ride both: where a VM's CPUs run at different paces at
    once, a ratio of the two carries that gap, which the record keeps beside the pace."""
    from ..measure import interpreters, metadata

    exp, p = experiments.get("countdown"), size.params
    conds = [c for c in interpreters.select(build or PROBE_BUILDS) if interpreters.identify(c).available]
    out = {"at": metadata.now(), "profile": size.profile, "point": dict(PROBE_POINT),
           "config_id": size.config_id, "build": conds[0].id if conds else build, "loadavg": metadata.loadavg()}
    start = metadata.cpu_times()
    if not conds:
        return out | {"error": f"none of {build or PROBE_BUILDS} is built here", "cpu_times": start}
    runs, foreign = [], []
    cpus = sorted(os.sched_getaffinity(0))
    order = [c for i in range(PROBE_CPU_ROUNDS) for c in (cpus if i % 2 == 0 else cpus[::-1])] if len(cpus) > 1 else []
    pinned = {str(c): [] for c in cpus} if order else {}
    try:
        warm = exp.run_sample(p, dict(PROBE_POINT), conds[0]).wall_s    # the first after a pause: not the pace
        for _ in range(PROBE_RUNS):
            with alone.Window() as w:
                runs.append(exp.run_sample(p, dict(PROBE_POINT), conds[0]).wall_s)
            foreign.append(w.reading)
        for c in order:
            with alone.Window() as w:
                pinned[str(c)].append(exp.run_sample({**p, "affinity": [c]}, dict(PROBE_POINT), conds[0]).wall_s)
            foreign.append(w.reading)
    except Exception as exc:   # noqa: BLE001 - a probe that breaks is recorded, the run goes on
        return out | {"error": f"{type(exc).__name__}: {exc}", "cpu_times": metadata.cpu_times()}
    end = metadata.cpu_times()
    most = max((r.foreign_cpus or 0.0 for r in foreign), default=0.0)
    each = {c: round(statistics.median(v), 4) for c, v in pinned.items()}
    gap = {"cpu_runs": {c: [round(r, 4) for r in v] for c, v in pinned.items()}, "cpu_median_s": each,
           "cpu_gap": round(max(each.values()) / min(each.values()), 3)} if each else {}
    return out | {"runs": [round(r, 4) for r in runs], "median_s": round(statistics.median(runs), 4),
                  "warmup_s": round(warm, 4), "foreign_cpus": round(most, 3),
                  "alone": all(r.alone for r in foreign), **gap,
                  "cpu_steal_share": metadata.steal_share(start, end), "cpu_times": end}


def speed_factor(size: ProbeSize, probe: dict | None = None) -> tuple[float, str]:
    """How much slower (above 1) or faster this machine runs now than the campaign the forecast reads
    its times from: a pace probe (:func:`pace_probe`: three countdown samples of one thread at
    ``size``, on the first GIL build of today's pair or the era built here; ``probe``, one
    already taken, where its build is that one) against that campaign's median at the same point (a
    few seconds).  (1.0, why) where nothing can be compared."""
    from ..measure import interpreters

    t = timing("countdown", size.config_id, None, size.profile)
    for cond in interpreters.select(PROBE_BUILDS):
        if not interpreters.identify(cond).available:
            continue
        ref = t.per_point.get((cond.id, point_key(PROBE_POINT)))
        if not ref:
            continue
        got = probe if probe and probe.get("build") == cond.id and probe.get("median_s") else pace_probe(size, cond.id)
        if not got.get("median_s"):
            continue
        factor = got["median_s"] / ref
        return factor, (f"{cond.id}'s one-thread countdown ran {factor:.2f} x the time it took in {t.basis} "
                        f"(median of {PROBE_RUNS})")
    return 1.0, "no build and point to compare with: the times are read as they are"


def pace(probes: list[dict], size: ProbeSize, ref_s: float | None = None) -> tuple[float, str]:
    """The machine's pace over a whole run so far: the median of every probe's median among
    ``probes`` (those taken on the first probe's build, alone where any was), so that one slow or
    fast moment (the first probe, right after the builds) does not set the plan for the whole run;
    against ``ref_s`` (the time the first plan's pace was read against, :func:`probe_reference`)
    where given, else against the times the forecast reads (:func:`speed_factor`).  Within one run
    the yardstick stays the first plan's: once the run has measured the countdown, the forecast
    would read the run's own times, and a pace against those is no pace of the plan's forecast.
    (1.0, why) where no probe can be compared."""
    got = [p for p in probes if p.get("median_s")]
    if not got:
        return speed_factor(size, probes[0] if probes else None) if probes else (1.0, "no probe taken")
    build = got[0].get("build")
    same = [p for p in got if p.get("build") == build]
    quiet = [p for p in same if p.get("alone", True)] or same
    median = statistics.median(p["median_s"] for p in quiet)
    of = f"the median of {len(quiet)} probes' medians" if len(quiet) > 1 else f"median of {PROBE_RUNS}"
    if ref_s:
        return median / ref_s, (f"{build}'s one-thread countdown ran {median / ref_s:.2f} x the time the run's plan "
                                f"reads ({of})")
    factor, words = speed_factor(size, {"build": build, "median_s": median})
    return factor, words.replace(f"(median of {PROBE_RUNS})", f"({of})")


def probe_reference(probe: dict | None, factor: float) -> float | None:
    """The time a probe's pace was read against (its median over its pace), to read later probes
    against the same; None where the pace compared nothing."""
    if not probe or not probe.get("median_s") or not factor or factor <= 0:
        return None
    return probe["median_s"] / factor
