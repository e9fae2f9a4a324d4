"""Document 003's memory overhead of threads (1,000 blocked threads: virtual size, resident set
and Python's allocations per thread, with the default stack and a smaller one) and the depth a
thread can recurse to (in a child process: a crash is a result)."""
from __future__ import annotations

from ..protocol import Experiment
from ..profiles import Param, ParameterError, as_list, positive_int


def _stack_kbs(value) -> list[int]:
    out = [int(v) for v in as_list(value)]
    if any(v < 64 for v in out):
        raise ValueError(f"thread stacks below 64 KiB are refused by many platforms; got {out}")
    return out


class ThreadMemory(Experiment):
    name = "thread_memory"
    notebook = "13_thread_memory.md"
    workload = "thread_memory"
    title = "Threads' memory and how deep a thread recurses"
    document = "003_183ea1c9148374f9.txt (A Tale of Two Concurrencies, Part 1), Memory Overhead of Threads"
    params = {
        "threads": Param("threads", positive_int, "threads started and blocked; 1,000 in the document"),
        "stack_kbs": Param("stack_kbs", _stack_kbs, "smaller stacks to try with threading.stack_size, in KiB"),
        "cap": Param("cap", positive_int, "recursion stops here (the limit is raised above it)"),
    }
    point_keys = ("mode", "stack_kb")

    def points(self, p):
        return ([{"mode": "threads", "stack_kb": 0}] + [{"mode": "threads", "stack_kb": k} for k in p["stack_kbs"]]
                + [{"mode": "recursion", "stack_kb": 0}])

    def workload_params(self, p, point):
        return {"mode": point["mode"], "stack_kb": point["stack_kb"], "threads": p["threads"], "cap": p["cap"]}

    def check(self, p):
        if p["threads"] > 20_000:
            raise ParameterError("thread_memory: more than 20,000 threads is past most systems' limits")
        if p["cap"] > 5_000_000:
            raise ParameterError("thread_memory: a recursion cap above 5,000,000 needs gigabytes of frames")


EXPERIMENT = ThreadMemory()
