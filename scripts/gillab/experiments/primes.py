"""Document 002's CPU-bound benchmark: counting primes in one thread and over a thread pool."""
from __future__ import annotations

from ..analysis import ModuleAnalysis
from ..experiment import Experiment
from ..profiles import Param, ParameterError, positive_int
from . import doc002


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


EXPERIMENT = Primes()
def prose(df) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``."""
    from ..prose import Check, cores_of, gil_by_condition, ok_rows

    ok = ok_rows(df)
    med = ok.groupby(["condition", "mode"])["seconds"].median()
    gil_on = gil_by_condition(df)
    speed = {c: float(med[(c, "single")] / med[(c, "threads")]) for c in gil_on
             if (c, "single") in med.index and (c, "threads") in med.index}
    out = []
    gil = {c: v for c, v in speed.items() if gil_on[c]}
    if gil:
        out.append(Check("With the GIL, the pool is no faster than one thread, as the document found",
                         all(v <= 1.05 for v in gil.values()),
                         "speedup of the pool over one thread: " + "; ".join(f"{c} {v:.2f}" for c, v in gil.items())))
    free = {c: v for c, v in speed.items() if not gil_on[c]}
    cores = cores_of(df, "primes")
    if free and cores:
        out.append(Check(f"Without the GIL the pool is faster, but its speedup is bounded by the {cores} cores of "
                         "the machine that measured it",
                         all(1.2 <= v <= cores * 1.05 for v in free.values()),
                         "speedup of the pool over one thread: " + "; ".join(f"{c} {v:.2f}" for c, v in free.items()),
                         "The document's machine had more cores, so its pool's speedup cannot be reached here."))
    return out



# why the document's own sizes (seed) may judge a claim otherwise than default's (the verdicts page)
SIZE_NOTE = (
    "The document's larger bound in as many chunks, each with more work: the pool's overhead "
    "weighs less."
)

ANALYSIS = ModuleAnalysis(__name__, shared=doc002, extras=("ratio_figure",))
