"""Countdown time against the switch interval and the number of threads (document 000's second
countdown table, pbts13_t4).

A switch interval asked for is in force only where the machine applies it: a thread waiting for
the GIL sleeps in a timed wait that Linux stretches by the thread's timer slack (50 us by
default), and a run of a few intervals holds a few hand-offs.  So every point runs with the
smallest timer slack (``timer_slack_ns = 1``, recorded as each thread had it), each point's work
grows until a run holds ``min_intervals`` intervals on a fast machine, and the workload counts the
GIL's hand-offs (:mod:`gillab.measure.workloads.countdown`); the chapter reads a row as "not in
force here" where they fall short.  The points at ``os_slack_intervals`` x ``os_slack_threads``
are measured once more with the OS's own slack, for the chapter's finding about Linux."""
from __future__ import annotations

import math

from ..profiles import (OS_SLACK, PAIRED, TIMER_SLACK, Param, ParameterError, as_list, non_negative_int, positive_int,
                        positive_ints, slack_asked)
from ..protocol import Experiment
from .echo import intervals


# a fast machine's countdown (this project's 2-core machines count 30-37 million a second): a
# point sized for it holds min_intervals on every machine that counts no faster
FAST_DECREMENTS_PER_S = 40_000_000


def decrements(p: dict, si: float) -> int:
    """The decrements a point at the switch interval ``si`` counts: ``total_decrements``, or where
    that holds fewer than ``min_intervals`` intervals on a machine counting FAST_DECREMENTS_PER_S,
    one grown size shared by every such interval of the grid: the most any of them needs, up to
    ``max_decrements``.  Two sizes, not one a point: a machine's speed depends on how long it has
    been busy (a 2-core VM counted a 25 M-decrement run 16% faster per decrement than a 5 M one),
    so the one-thread runs the chapter compares across intervals are compared within one size."""
    def needs(x: float) -> int:         # to hold min_intervals at x on a fast machine
        return math.ceil(p["min_intervals"] * x * FAST_DECREMENTS_PER_S)

    if needs(si) <= p["total_decrements"]:
        return p["total_decrements"]
    grown = max(needs(x) for x in p["switch_intervals"])
    return max(p["total_decrements"], min(grown, p["max_decrements"]))


def some_intervals(value) -> list[float]:
    """Switch intervals, or none."""
    return intervals(value) if as_list(value) else []


def some_ints(value) -> list[int]:
    """Thread counts, or none."""
    return positive_ints(value) if as_list(value) else []


class SwitchInterval(Experiment):
    name = "switch_interval"
    adaptive_metric = "seconds"
    notebook = "04_switch_interval.md"
    workload = "countdown"
    workloads = ("countdown", "_gil")
    measuring_code = (decrements, slack_asked)
    title = "Countdown against the switch interval"
    document = "000_7286df4c8fefdbad.txt (Python behind the scenes #13), countdown vs switch interval table"
    params = {
        "switch_intervals": Param("switch_intervals", intervals, "switch intervals in seconds to sweep"),
        "threads": Param("threads", positive_ints, "thread counts, e.g. [1, 2, 4, 8]"),
        "total_decrements": Param("total_decrements", positive_int, "decrements in all, split over the threads "
                                  "(the least: a point grows to hold min_intervals)"),
        "min_intervals": Param("min_intervals", non_negative_int, "switch intervals a run holds at the least, on a "
                               f"machine counting {FAST_DECREMENTS_PER_S:,} decrements a second: the point's "
                               "decrements grow to that (0: total_decrements everywhere)"),
        "max_decrements": Param("max_decrements", positive_int, "the most decrements a point grows to (a run's "
                                "time bounded: a point that would need more holds fewer intervals, and its rows "
                                "say so)"),
        "timer_slack_ns": TIMER_SLACK,
        "paired": PAIRED,
        "os_slack_intervals": Param("os_slack_intervals", some_intervals, "which of switch_intervals are measured once "
                                    "more with the OS's own timer slack ([]: none)"),
        "os_slack_threads": Param("os_slack_threads", some_ints, "which of threads are measured once more with the OS's "
                                  "own timer slack at os_slack_intervals ([]: none)"),
    }
    point_keys = ("switch_interval", "threads", "timer_slack_ns")

    def config(self, p):
        # how a run is measured, not what: out of the configuration, as a change of the measuring code
        # is (the code key tells the samples apart); each run records its way (one_thread_seconds)
        return {k: v for k, v in super().config(p).items() if k != "paired"}

    def points(self, p):
        out = [{"switch_interval": si, "threads": t, "timer_slack_ns": p["timer_slack_ns"]}
               for si in p["switch_intervals"] for t in p["threads"]]
        if p["timer_slack_ns"] != OS_SLACK:     # a grid narrowed (-p threads=1,2) narrows these alike
            out += [{"switch_interval": si, "threads": t, "timer_slack_ns": OS_SLACK}
                    for si in p["switch_intervals"] if si in p["os_slack_intervals"]
                    for t in p["threads"] if t in p["os_slack_threads"]]
        return out

    def also_times(self, p, point):
        """The point whose time a sample at ``point`` spends besides its own where ``p`` pairs it, its
        one-thread countdown (the forecast adds it, or takes it off, where the times it reads were
        of runs measured the other way); None unpaired or at one thread."""
        return {**point, "threads": 1} if p["paired"] and point["threads"] > 1 else None

    def workload_params(self, p, point):
        return {"threads": point["threads"], "total_decrements": decrements(p, point["switch_interval"]),
                "timer_slack_ns": slack_asked(point["timer_slack_ns"]),
                "paired": p["paired"] and point["threads"] > 1}

    def check(self, p):
        if p["switch_interval"] is not None:
            raise ParameterError("switch_interval: use switch_intervals (a list) instead of switch_interval")
        if 1 not in p["threads"]:
            raise ParameterError("switch_interval: threads must include 1 (the ratios are to one thread)")
        if p["os_slack_intervals"] and 1 not in p["os_slack_threads"]:
            raise ParameterError("switch_interval: os_slack_threads must include 1 (the ratios are to one thread)")


def work(p: dict, point: dict) -> float:
    """The decrements a run counts over all its threads (the forecast's measure of a size): a stored
    sample's own (its ``decrements_per_thread`` times its threads), else what :func:`decrements`
    sizes the point's switch interval to (the grown points count many times ``total_decrements``)."""
    if p.get("decrements_per_thread") not in (None, ""):
        return float(p["decrements_per_thread"]) * float(point["threads"])
    return float(decrements(p, float(point["switch_interval"])))


EXPERIMENT = SwitchInterval()
