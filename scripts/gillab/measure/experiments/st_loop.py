"""Document 002's first benchmark: a single-threaded loop under timeit, GIL build against free-threaded."""
from __future__ import annotations

from ..protocol import Experiment
from ..profiles import Param, positive_int


class SingleThread(Experiment):
    name = "st_loop"
    adaptive_metric = "seconds"
    notebook = "08_st_loop.md"
    workload = "st_loop"
    title = "The single-threaded loop"
    document = "002_238bc8ef41f65af2.txt (Goodbye GIL), first benchmark"
    params = {"number": Param("number", positive_int, "timeit number, 100 in the document")}

    def points(self, p):
        return [{"number": p["number"]}]


def work(p: dict, point: dict) -> float:
    """The loops a run times (the forecast's measure of a size)."""
    return float(p["number"])


EXPERIMENT = SingleThread()
