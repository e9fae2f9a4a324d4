"""Countdown time against the switch interval and the number of threads (document 000's second
countdown table, pbts13_t4)."""
from __future__ import annotations

from ..profiles import Param, ParameterError, positive_int, positive_ints
from ..protocol import Experiment
from .echo import intervals


class SwitchInterval(Experiment):
    name = "switch_interval"
    adaptive_metric = "seconds"
    notebook = "04_switch_interval.md"
    workload = "countdown"
    title = "Countdown against the switch interval"
    document = "000_7286df4c8fefdbad.txt (Python behind the scenes #13), countdown vs switch interval table"
    params = {
        "switch_intervals": Param("switch_intervals", intervals, "switch intervals in seconds to sweep"),
        "threads": Param("threads", positive_ints, "thread counts, e.g. [1, 2, 4, 8]"),
        "total_decrements": Param("total_decrements", positive_int, "decrements in all, split over the threads"),
    }
    point_keys = ("switch_interval", "threads")

    def points(self, p):
        return [{"switch_interval": si, "threads": t} for si in p["switch_intervals"] for t in p["threads"]]

    def workload_params(self, p, point):
        return {"threads": point["threads"], "total_decrements": p["total_decrements"]}

    def check(self, p):
        if p["switch_interval"] is not None:
            raise ParameterError("switch_interval: use switch_intervals (a list) instead of switch_interval")
        if 1 not in p["threads"]:
            raise ParameterError("switch_interval: threads must include 1 (the ratios are to one thread)")


EXPERIMENT = SwitchInterval()
