"""Document 002's CPU-bound benchmark: counting primes in one thread and over a thread pool."""
from __future__ import annotations

from ..protocol import Experiment
from ..profiles import Param, ParameterError, positive_int


class Primes(Experiment):
    name = "primes"
    adaptive_metric = "seconds"
    notebook = "10_primes.md"
    workload = "primes"
    title = "Primes over a thread pool"
    document = "002_238bc8ef41f65af2.txt (Goodbye GIL), CPU-bound benchmark"
    params = {
        "upper": Param("upper", positive_int, "count primes in [2, upper); 2,000,000 in the document"),
        "chunk": Param("chunk", positive_int, "numbers per task on the pool; 50,000 in the document"),
        "workers": Param("workers", positive_int, "pool size; the document's max(2, os.cpu_count())", optional=True),
    }

    def points(self, p):
        return [{"mode": "single"}, {"mode": "threads"}]

    def workload_params(self, p, point):
        return {"upper": p["upper"], "chunk": p["chunk"], "workers": p["workers"], "mode": point["mode"]}

    def check(self, p):
        if p["upper"] < 3:
            raise ParameterError("primes: upper must be at least 3")


def work(p: dict, point: dict) -> float:
    """The range a run searches (the forecast's measure of a size; trial division grows a little
    faster than the range, which this ignores)."""
    return float(p["upper"])


EXPERIMENT = Primes()
