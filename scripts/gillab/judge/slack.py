"""Whether a short switch interval was applied: the timer slack its threads waited with.

A thread waiting for the GIL sleeps in a timed wait of one switch interval, and Linux ends that
wait up to the thread's timer slack late (50 us unless something set it).  An interval shorter
than the slack in force is asked and not applied: every wait lasts about the slack whatever the
interval.  The workloads that judge short intervals set the slack to 1 ns and read back what each
thread had (``timer_slack_ns_max``, :mod:`gillab.measure.workloads._gil`); a sample stored
before that has none recorded, and its threads waited with the OS's own.

The rule is fixed before any sample is read and is the same for every chapter that uses it: on
a build with a GIL, a point whose threads contend for it reads "not in force here" where the
largest slack any of its threads had exceeds the interval asked, or where no slack was recorded
and the interval is shorter than Linux's own.  (How often the GIL then changed hands is what the
interval achieved: the chapters show it beside, in hand-offs a second.)
"""
from __future__ import annotations

import math

import pandas as pd

LINUX_SLACK_NS = 50_000      # a thread's timer slack on Linux unless something set it


def in_force_ns(g: pd.DataFrame) -> float:
    """The largest timer slack any thread of ``g``'s samples had (ns); nan where none recorded."""
    if "timer_slack_ns_max" not in g.columns:
        return math.nan
    had = pd.to_numeric(g["timer_slack_ns_max"], errors="coerce")
    return float(had.max()) if had.notna().any() else math.nan


def stretched(g: pd.DataFrame, interval_s: float) -> str | None:
    """Why ``g``'s samples at a switch interval of ``interval_s`` did not have it applied (their
    slack was longer than the interval), or None where it was applied."""
    asked_ns = interval_s * 1e9
    had = in_force_ns(g)
    if math.isnan(had):
        if asked_ns < LINUX_SLACK_NS:
            return (f"no timer slack recorded at {interval_s:g} s (measured before the slack was set): its threads "
                    f"waited with the OS's own, {LINUX_SLACK_NS / 1000:g} us on Linux, longer than the interval")
        return None
    if had > asked_ns:
        return (f"its threads waited with a timer slack of {had / 1000:g} us, longer than the interval of "
                f"{interval_s:g} s: every wait for the GIL ends about the slack late")
    return None
