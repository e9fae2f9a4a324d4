"""Countdown over threads: document 000's first table (pbts13_t1)."""
from __future__ import annotations

from ..profiles import Param, ParameterError, positive_int, positive_ints
from ..protocol import Experiment


class Countdown(Experiment):
    name = "countdown"
    adaptive_metric = "seconds"
    notebook = "01_countdown.md"
    workload = "countdown"
    workloads = ("countdown", "_gil")
    title = "Countdown over threads"
    document = "000_7286df4c8fefdbad.txt (Python behind the scenes #13), first table"
    params = {
        "threads": Param("threads", positive_ints, "thread counts to sweep, e.g. [1, 2, 4, 8]"),
        "total_decrements": Param("total_decrements", positive_int,
                                  "decrements in all, split evenly over the threads"),
    }
    point_keys = ("threads",)
    also_conditions = ("2.7.18",)   # the old GIL: where two threads were slower than one

    def points(self, p):
        return [{"threads": t} for t in p["threads"]]

    def check(self, p):
        too_many = [t for t in p["threads"] if t > p["total_decrements"]]
        if too_many:
            raise ParameterError(f"countdown: threads {too_many} exceed total_decrements "
                                 f"{p['total_decrements']}: some threads would have nothing to do")


EXPERIMENT = Countdown()
