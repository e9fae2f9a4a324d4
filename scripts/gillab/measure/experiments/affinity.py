"""Restricting the server to one core, with the client on the same core or the other one
(document 000's affinity table, pbts13_t5, and the author's update of October 7, 2021)."""
from __future__ import annotations

import os

from ..protocol import Experiment
from ..profiles import Param, ParameterError
from .echo import ECHO_PARAMS, SERVER_CODE, SERVER_WORKLOADS, counts, echo_sample, echo_waits


PLACEMENTS = ("same", "other")


def _placements(value) -> list[str]:
    from ..profiles import as_list

    out = [str(v) for v in as_list(value)]
    bad = [v for v in out if v not in PLACEMENTS]
    if not out or bad:
        raise ValueError(f"client placements must be among {PLACEMENTS}, got {out}")
    return out


class Affinity(Experiment):
    name = "affinity"
    notebook = "05_affinity.md"
    workload = "echo_server"
    title = "CPU affinity: every server thread on one core"
    document = "000_7286df4c8fefdbad.txt (Python behind the scenes #13), CPU affinity table and update"
    params = {
        "cpu_threads": Param("cpu_threads", counts, "CPU-bound threads next to the server, e.g. [0, 1, 2, 4, 8]"),
        "client": Param("client", _placements, "where the client runs: same (core as the server), other"),
        "server_cpu": Param("server_cpu", int, "the core every server thread is restricted to"),
        **ECHO_PARAMS,
    }
    point_keys = ("cpu_threads", "client")
    workloads = SERVER_WORKLOADS
    measuring_code = SERVER_CODE

    def points(self, p):
        return [{"cpu_threads": n, "client": c} for n in p["cpu_threads"] for c in p["client"]]

    def check(self, p):
        cpus = sorted(os.sched_getaffinity(0))
        if p["server_cpu"] not in cpus:
            raise ParameterError(f"affinity: server_cpu {p['server_cpu']} is not one of this machine's CPUs {cpus}")
        if "other" in p["client"] and len(cpus) < 2:
            raise ParameterError("affinity: a client on the other core needs at least 2 CPUs")
        if p["affinity"] is not None:
            raise ParameterError("affinity: set server_cpu and client instead of affinity")

    def other_cpu(self, p) -> int:
        return next(c for c in sorted(os.sched_getaffinity(0)) if c != p["server_cpu"])

    def run_sample(self, p, point, cond):
        server = [p["server_cpu"]]
        client = server if point["client"] == "same" else [self.other_cpu(p)]
        return echo_sample(p, cond, cpu_threads=point["cpu_threads"], cpu_processes=0,
                           switch=p["switch_interval"], server_affinity=server, client_affinity=client)


waits = echo_waits      # what a sample waits out: the client's windows


EXPERIMENT = Affinity()
