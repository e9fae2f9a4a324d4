"""Document 003: Beazley's fib server under perf1, perf2 and a lock-out test, in four shapes
(thread per connection, process pool, threshold, pre-forked).

A sample is one server process under the condition measured and one client process under a
fixed interpreter (the GIL build ``3.13.5``, as in the convoy chapter), so that only the server
changes.  The client's rows are stored one per response (perf1), per bin of ``bin_s`` seconds
(perf2) or per request (lockout).  Each repeat is an independent server run; the statistics are
computed per run and their CIs are over runs."""
from __future__ import annotations

import time

from .. import runner, servers
from ..protocol import Experiment
from ..profiles import Param, ParameterError, choices, positive_float, positive_int
from .echo import client_condition


KINDS = ("thread", "pool", "threshold", "prefork")


SCENARIOS = ("perf1", "perf2", "lockout")


def _fib_n(value) -> int:
    n = positive_int(value)
    if n > 45:
        raise ValueError(f"fib({n}) would take hours in pure Python; at most 45")
    return n


def fib_sample(p: dict, point: dict, cond) -> runner.Sample:
    """One server of ``point['kind']`` under ``cond``, one client scenario against it."""
    client = client_condition(cond)
    kind, scenario = point["kind"], point["scenario"]
    nprocs = p["prefork_procs"] if kind == "prefork" else p["pool_procs"]
    server_params = {"kind": kind, "nprocs": nprocs, "threshold": p["threshold"]}
    if scenario == "perf1":
        cp = {"n": p["fib_n"], "before": p["perf1_before"], "after": p["perf1_after"]}
    elif scenario == "perf2":
        cp = {"bin_s": p["bin_s"], "before_s": p["before_s"], "after_s": p["after_s"], "long_n": p["long_n"],
              "max_long_s": p["max_long_s"]}
    else:
        cp = {"long_n": p["lockout_n"], "nlong": p["prefork_procs"] + 1}
    t0 = time.perf_counter()
    with servers.workload_server(cond, "fib_server", server_params, switch_interval=p["switch_interval"],
                                 affinity=p["affinity"]) as srv:
        cs = runner.run(client, "fib_client", {"scenario": scenario, "port": srv.port, **cp},
                        timeout=p["timeout"], affinity=p["affinity"])
        acceptors = srv.ready.get("acceptors")
    result = {**cs.result, "client_condition": client.id, "acceptors": acceptors, "nprocs": nprocs}
    return runner.Sample(result=result, runtime=srv.ready["runtime"] | {"gil_enabled_after": None},
                         rusage={}, wall_s=time.perf_counter() - t0)


class FibServer(Experiment):
    name = "fib_server"
    notebook = "12_fib_server.md"
    workload = "fib_server"
    title = "Beazley's fib server: perf1, perf2 and the lock-out"
    document = "003_183ea1c9148374f9.txt (A Tale of Two Concurrencies, Part 1)"
    params = {
        "kinds": Param("kinds", choices(KINDS), "servers: thread, pool, threshold, prefork"),
        "scenarios": Param("scenarios", choices(SCENARIOS), "clients: perf1, perf2, lockout"),
        "fib_n": Param("fib_n", _fib_n, "perf1 asks for fib(fib_n); 30 in the document"),
        "perf1_before": Param("perf1_before", positive_int, "perf1 answers to client A alone"),
        "perf1_after": Param("perf1_after", positive_int, "perf1 answers to A once client B runs beside it"),
        "long_n": Param("long_n", _fib_n, "perf2's long request fib(long_n); 40 in the document"),
        "bin_s": Param("bin_s", positive_float, "perf2 counts answers in bins of this many seconds"),
        "before_s": Param("before_s", positive_float, "perf2 seconds before the long request"),
        "after_s": Param("after_s", positive_float, "perf2 seconds after its answer"),
        "max_long_s": Param("max_long_s", positive_float, "perf2 waits at most this long for the long answer"),
        "lockout_n": Param("lockout_n", _fib_n, "the lock-out test's long requests fib(lockout_n)"),
        "pool_procs": Param("pool_procs", positive_int, "ProcessPoolExecutor size; NPROCS 4 in the document"),
        "prefork_procs": Param("prefork_procs", positive_int, "forked copies; NPROCS 8 in the document"),
        "threshold": Param("threshold", positive_int, "the threshold server computes n up to threshold inline; 15"),
    }
    point_keys = ("kind", "scenario")
    workloads = ("fib_server", "fib_client")
    measuring_code = (fib_sample, client_condition, servers.workload_server, servers.Server)

    def points(self, p):
        out = []
        for s in p["scenarios"]:
            for k in p["kinds"]:
                if s == "perf1" and k == "threshold":
                    continue      # fib_n > threshold: the same as the pool
                if s == "lockout" and k not in ("prefork", "thread"):
                    continue      # the document's warning is about the pre-forked server
                out.append({"kind": k, "scenario": s})
        return out

    def check(self, p):
        if "perf1" in p["scenarios"] and p["fib_n"] <= p["threshold"] and "threshold" in p["kinds"]:
            raise ParameterError("fib_server: fib_n must be above threshold (else the threshold server is the "
                                 "thread server)")
        if p["bin_s"] > p["before_s"]:
            raise ParameterError("fib_server: bin_s must not be longer than before_s (no bin before the long request)")
        if p["pool_procs"] > 64 or p["prefork_procs"] > 64:
            raise ParameterError("fib_server: more than 64 pool or forked processes is not a meaningful point")

    def run_sample(self, p, point, cond):
        return fib_sample(p, point, cond)


def waits(p, point) -> float:
    """Seconds a sample waits whatever the machine's speed (:func:`gillab.measure.experiments.waits`):
    perf2 counts for ``before_s`` before its long request and ``after_s`` after the answer; perf1
    and the lockout last as long as their requests."""
    return p["before_s"] + p["after_s"] if point["scenario"] == "perf2" else 0.0


def calls(n: int) -> int:
    """The calls the workload's recursive ``fib(n)`` makes (``fib(1)`` and ``fib(2)`` return 1):
    twice the n-th Fibonacci number, less one."""
    a, b = 1, 1
    for _ in range(max(int(n), 1) - 1):
        a, b = b, a + b
    return 2 * a - 1


def work(p: dict, point: dict) -> float:
    """The ``fib`` calls a sample's server makes for its clients' timed requests (the forecast's
    measure of a size, :func:`gillab.measure.experiments.work`): perf1's requests of
    ``fib(fib_n)`` before and after its second client starts, perf2's long ``fib(long_n)``, the
    lock-out's long ``fib(lockout_n)`` one more than there are forked copies."""
    scenario = point["scenario"]
    if scenario == "perf1":
        return (int(p["perf1_before"]) + int(p["perf1_after"])) * calls(p["fib_n"])
    if scenario == "perf2":
        return float(calls(p["long_n"]))
    return (int(p["prefork_procs"]) + 1) * calls(p["lockout_n"])


EXPERIMENT = FibServer()
