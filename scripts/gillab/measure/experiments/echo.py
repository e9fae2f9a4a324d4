"""The echo family: what the experiments built on document 000's echo server measure alike.

convoy, affinity and fib_server measure a server with a client beside it (:func:`echo_sample`,
:func:`client_condition`, the client always the same interpreter; convoy and affinity the same
programs and helpers, :data:`SERVER_WORKLOADS` and :data:`SERVER_CODE`); switch_interval and
affinity sweep the same parameters (:func:`intervals`, :func:`counts`, :data:`ECHO_PARAMS`).  How
their chapters read the samples alike is :mod:`gillab.chapters.echo`."""
from __future__ import annotations

import os
import time

from .. import interpreters, runner, servers
from .. import placement as placement_mod
from ..profiles import Param, as_list, positive_float, positive_int, switch_interval


CLIENT_CONDITION = "3.13.5"


def intervals(value) -> list[float]:
    """A list of switch intervals in seconds (at least one)."""
    out = [switch_interval(v) for v in as_list(value)]
    if not out:
        raise ValueError("needs at least one switch interval")
    return out


def counts(value) -> list[int]:
    """A list of counts of threads or processes, each >= 0."""
    out = [int(v) for v in as_list(value)]
    if any(v < 0 for v in out):
        raise ValueError(f"counts must be >= 0, got {out}")
    return out


ECHO_PARAMS = {
    "warmup_s": Param("warmup_s", positive_float, "seconds before the first counted window"),
    "windows": Param("windows", positive_int, "counting windows per sample (each window_s long)"),
    "window_s": Param("window_s", positive_float, "length of a counting window in seconds"),
}


def client_condition(server_cond):
    """The fixed client interpreter: the GIL build when available, else the server's own."""
    for c in interpreters.discover():
        if c.id == CLIENT_CONDITION and interpreters.identify(c).available:
            return c
    return server_cond


def echo_sample(p: dict, cond, *, cpu_threads: int, cpu_processes: int, switch: float | None,
                server_affinity=None, client_affinity=None, placement: str = "os",
                timer_slack_ns: int | None = None) -> runner.Sample:
    """One server (with its CPU-bound neighbours) and one client run against it, and where their
    threads ran (:mod:`gillab.measure.placement`).  ``placement="pinned"`` puts the CPU threads on
    a CPU of their own and the server's other threads and the client on another
    (:func:`gillab.measure.placement.pin`), before the client connects.  With ``timer_slack_ns`` the
server's threads wait with that timer slack (None: the OS's own)."""
    if placement not in placement_mod.PLACEMENTS:
        raise ValueError(f"placement must be one of {placement_mod.PLACEMENTS}, got {placement!r}")
    client = client_condition(cond)
    span = p["warmup_s"] + p["windows"] * p["window_s"]
    t0 = time.perf_counter()
    server = {"cpu_threads": cpu_threads, "cpu_processes": cpu_processes, "timer_slack_ns": timer_slack_ns}
    with servers.workload_server(cond, "echo_server", server, switch_interval=switch, affinity=server_affinity) as srv:
        cpu_tids = list(srv.ready.get("cpu_tids", []))
        pinned_cpus = None
        if placement == "pinned":
            home, away = placement_mod.pin(srv.proc.pid, cpu_tids, sorted(os.sched_getaffinity(0)))
            client_affinity, pinned_cpus = home, {"server": home, "cpu_threads": away, "client": home}
        with placement_mod.Sampler(srv.proc.pid) as where:
            cs = runner.run(client, "echo_client", {"port": srv.port, "warmup_s": p["warmup_s"],
                                                    "windows": p["windows"], "window_s": p["window_s"]},
                            timeout=span + 30, affinity=client_affinity)
        sdata = srv.result(timeout=60)
        handler_tid = sdata["result"]["handler_tid"]
        handler = srv.thread_stats(handler_tid)
        cpu = [srv.thread_stats(t) for t in cpu_tids]
    result = {**cs.result, **sdata["result"], "client_condition": client.id,
              "client_affinity": ",".join(map(str, cs.runtime.get("affinity") or [])),
              "handler_ctx_voluntary": handler.get("ctx_voluntary"),
              "handler_ctx_involuntary": handler.get("ctx_involuntary"), "handler_cpu_s": handler.get("cpu_s"),
              "handler_last_cpu": handler.get("last_cpu"),
              "server_affinity": ",".join(map(str, sdata["runtime"].get("affinity") or [])),
              "cpu_threads_ctx_involuntary": sum(c.get("ctx_involuntary", 0) for c in cpu),
              "cpu_threads_cpu_s": sum(c.get("cpu_s", 0.0) for c in cpu),
              "cpu_tids": ",".join(map(str, cpu_tids)), "server_pid": srv.proc.pid,
              **placement_mod.summary(where, handler_tid, cpu_tids, placement)}
    if pinned_cpus:
        result["pinned_cpus"] = ";".join(f"{k}={','.join(map(str, v))}" for k, v in pinned_cpus.items())
    return runner.Sample(result=result, runtime=sdata["runtime"] | {"gil_enabled_after": None},
                         rusage={}, wall_s=time.perf_counter() - t0)


def request_cost(rps_busy: float, rps_alone: float, interval: float) -> float:
    """The extra time a request costs next to CPU threads, in switch intervals:
    ``(1/RPS busy - 1/RPS alone) / interval`` (nan unless both rates are positive).  The convoy's
    mechanism rows, its placements, its traces' untraced twins and the affinity chapter read it."""
    if not (rps_busy > 0 and rps_alone > 0):
        return float("nan")
    return (1.0 / rps_busy - 1.0 / rps_alone) / interval


def echo_waits(p: dict, point: dict) -> float:
    """The seconds an echo sample waits whatever the machine's speed: the client's warm-up and
    counting windows (convoy's and affinity's ``waits``, :func:`gillab.measure.experiments.waits`)."""
    return p["warmup_s"] + p["windows"] * p["window_s"]


# what a sample of the echo server beside its client runs: its two programs (and the module the
# server reads the GIL's hand-offs and the timer slack with) and the helpers that
# shape it (the convoy and affinity chapters measure it so)
SERVER_WORKLOADS = ("echo_server", "echo_client", "_gil")
SERVER_CODE = (echo_sample, client_condition, servers.workload_server, servers.Server, placement_mod.pin,
               placement_mod.Sampler)
