"""Document 003's uninterruptible instruction: ``'spam' in range(n)`` beside a heartbeat thread,
and a SIGINT (what Ctrl-C sends) part-way through it."""
from __future__ import annotations

from ..protocol import Experiment
from ..profiles import Param, ParameterError, as_list, positive_float


def _sizes(value) -> list[int]:
    out = [int(str(v).replace("_", "")) if isinstance(v, str) else int(v) for v in as_list(value)]
    if not out or any(v < 1000 for v in out):
        raise ValueError(f"range sizes of at least 1,000; got {out}")
    return out


class Stall(Experiment):
    name = "stall"
    notebook = "14_stall.md"
    workload = "stall"
    title = "The uninterruptible instruction: 'spam' in range(n)"
    document = "003_183ea1c9148374f9.txt (A Tale of Two Concurrencies, Part 1), Lesser Known Evils of the GIL"
    params = {
        "ns": Param("ns", _sizes, "range sizes; 1,000,000,000 in the document"),
        "heartbeat_s": Param("heartbeat_s", positive_float, "the heartbeat thread's period; 5 s in the document"),
        "sigint_after_s": Param("sigint_after_s", positive_float,
                                "SIGINT this long into the largest size (the document's Ctrl-C)"),
    }
    point_keys = ("n", "signal")

    def points(self, p):
        return [{"n": n, "signal": False} for n in p["ns"]] + [{"n": max(p["ns"]), "signal": True}]

    def workload_params(self, p, point):
        return {"n": point["n"], "heartbeat_s": p["heartbeat_s"],
                "sigint_after_s": p["sigint_after_s"] if point["signal"] else None}

    def check(self, p):
        if max(p["ns"]) > 2 * 10**9:
            raise ParameterError("stall: sizes above 2,000,000,000 take minutes per sample")
        if p["heartbeat_s"] < 0.001:
            raise ParameterError("stall: a heartbeat shorter than 1 ms measures the sleep, not the stall")


EXPERIMENT = Stall()


def waits(p, point) -> float:
    """Seconds a sample waits out its protocol (:func:`gillab.measure.experiments.waits`): the
    workload sleeps until a few heartbeats have passed before the scan (three, at least half a
    second: their normal spacing) and three heartbeats after it (the ones that show it ended)."""
    return max(3 * p["heartbeat_s"], 0.5) + 3 * p["heartbeat_s"]
