"""Countdown over threads: document 000's first table (pbts13_t1)."""
from __future__ import annotations

from ..profiles import PAIRED, Param, ParameterError, positive_int, positive_ints
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
        "paired": PAIRED,
    }
    point_keys = ("threads",)
    also_conditions = ("2.7.18",)   # the old GIL: where two threads were slower than one

    def config(self, p):
        # how a run is measured, not what: out of the configuration, as a change of the measuring code
        # is (the code key tells the samples apart); each run records its way (one_thread_seconds)
        return {k: v for k, v in super().config(p).items() if k != "paired"}

    def points(self, p):
        return [{"threads": t} for t in p["threads"]]

    def also_times(self, p, point):
        """The point whose time a sample at ``point`` spends besides its own where ``p`` pairs it, its
        one-thread countdown (the forecast adds it, or takes it off, where the times it reads were
        of runs measured the other way); None unpaired or at one thread."""
        return {**point, "threads": 1} if p["paired"] and point["threads"] > 1 else None

    def workload_params(self, p, point):
        return {"threads": point["threads"], "total_decrements": p["total_decrements"],
                "paired": p["paired"] and point["threads"] > 1}

    def check(self, p):
        too_many = [t for t in p["threads"] if t > p["total_decrements"]]
        if too_many:
            raise ParameterError(f"countdown: threads {too_many} exceed total_decrements "
                                 f"{p['total_decrements']}: some threads would have nothing to do")


def work(p: dict, point: dict) -> float:
    """The decrements a run counts over all its threads (the forecast's measure of a size)."""
    return float(p["total_decrements"])


EXPERIMENT = Countdown()
