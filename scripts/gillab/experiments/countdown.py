"""Countdown over threads: document 000's first table (pbts13_t1)."""
from __future__ import annotations

from ..profiles import Param, ParameterError, positive_int, positive_ints
from ..analysis import ModuleAnalysis
from ..experiment import Experiment
from . import over_threads

SPEC = over_threads.Spec(
    experiment="countdown", table="pbts13_t1_countdown_threads", published_col="time_s_best_of_3",
    size=lambda g: float(g["total_decrements"].iloc[0]), seed_size=100_000_000,
    size_words=lambda n: f"{n:,.0f} decrements", explorer_title="Explore the countdown samples",
    per_unit=lambda r: f"{r['median'] / r['work'] * 1e9:.1f} ns per decrement in one thread",
    printed=(("threads", "threads"), ("decrements_per_thread_n", "decrements per thread"),
             ("time_s_best_of_3", "time in seconds (best of 3)"), ("machine", "machine"), ("python", "python")),
    speed=("ns_per_decrement", lambda s: s["median"] / s["work"] * 1e9))


class Countdown(Experiment):
    name = "countdown"
    adaptive_metric = "seconds"
    notebook = "01_countdown.ipynb"
    workload = "countdown"
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
ANALYSIS = ModuleAnalysis(__name__, shared=over_threads, spec=SPEC)
