"""The convoy effect: an echo server's requests/second next to CPU-bound threads (document 000,
pbts13_t3 and the in-text numbers of pbts13_t6), and the variant with the CPU work in processes.

A sample is one server process (under the condition measured) and one client process (always
the same interpreter, the GIL build ``3.13.5`` when it exists, so that only the server
changes); the client counts requests in windows (``window_s``) after a warm-up window, and every
window is stored as a row.  A point's rate is the median over its **runs** (each run's median
window) with its interval over runs: windows of one process are not independent samples."""
from __future__ import annotations

import os

from ..protocol import Experiment
from ..profiles import (TIMER_SLACK, Param, ParameterError, as_list, non_negative_int, positive_float, slack_asked,
                        switch_interval)
from ..placement import PLACEMENTS
from .echo import ECHO_PARAMS, SERVER_CODE, SERVER_WORKLOADS, counts, echo_sample, echo_waits, intervals


def pinned_intervals(value) -> list[float]:
    """A list of switch intervals (possibly empty: no pinned point)."""
    return [switch_interval(v) for v in as_list(value)] if value not in (None, "", []) else []


def placements(value) -> list[str]:
    """Which placements to measure: ``os`` (where the operating system puts the threads) and/or
    ``pinned`` (the document's setting, :func:`gillab.measure.placement.pin`)."""
    out = [str(v) for v in as_list(value)]
    bad = [v for v in out if v not in PLACEMENTS]
    if not out or bad:
        raise ValueError(f"placements must be among {PLACEMENTS}, got {out}")
    return out


def window(p: dict, point: dict) -> float:
    """A point's counting window: ``window_s``, grown so that a window counts ``min_requests`` at
    the document's model of the convoy (each request waits one switch interval for its recv and
    one for its send per CPU thread: 2 x threads x interval a request), growing up to
    ``max_window_s`` (never below ``window_s``).
    The model is the document's slowest: where requests wait less, a window counts more."""
    per_request = 2 * point["cpu_threads"] * point["switch_interval"]
    return max(p["window_s"], min(p["min_requests"] * per_request, p["max_window_s"]))


class Convoy(Experiment):
    name = "convoy"
    notebook = "03_convoy.md"
    workload = "echo_server"
    title = "The convoy effect: echo server requests/second"
    document = "000_7286df4c8fefdbad.txt (Python behind the scenes #13), RPS vs switch interval table"
    params = {
        "switch_intervals": Param("switch_intervals", intervals, "switch intervals in seconds to sweep"),
        "cpu_threads": Param("cpu_threads", counts, "CPU-bound threads next to the server, e.g. [0, 1, 2, 4]"),
        "cpu_processes": Param("cpu_processes", counts,
                               "CPU-bound processes instead (at the default 5 ms interval), e.g. [1, 2, 3, 4]"),
        "placements": Param("placements", placements, "os (the threads where the OS puts them), pinned, or both"),
        "pinned_intervals": Param("pinned_intervals", pinned_intervals,
                                  "which of switch_intervals are also measured pinned (CPU threads on a CPU of their "
                                  "own), e.g. [0.01, 0.005, 0.001]; [] for none"),
        "pinned_threads": Param("pinned_threads", counts,
                                "which of cpu_threads are measured at the pinned points, e.g. [0, 1, 2]"),
        **ECHO_PARAMS,
        "min_requests": Param("min_requests", non_negative_int, "requests a window should count at the least: a "
                              "window grows from window_s to hold that many at the document's model (two switch "
                              "intervals a request per CPU thread; 0: window_s everywhere)"),
        "max_window_s": Param("max_window_s", positive_float, "the longest a window grows to (a point that would need "
                              "more counts fewer requests, and its rows say so)"),
        "timer_slack_ns": TIMER_SLACK,
    }
    point_keys = ("switch_interval", "cpu_threads", "cpu_processes")
    # the pinned points add points of their own without changing what any other point's sample is:
    # how much is measured, so (like a small grid) not part of the configuration id
    extent_params = ("placements", "pinned_intervals", "pinned_threads")
    workloads = SERVER_WORKLOADS
    measuring_code = (*SERVER_CODE, window, slack_asked)

    def points(self, p):
        pts = []
        if "os" in p["placements"]:
            pts += [{"switch_interval": si, "cpu_threads": n, "cpu_processes": 0}
                    for si in p["switch_intervals"] for n in p["cpu_threads"]]
            pts += [{"switch_interval": 0.005, "cpu_threads": 0, "cpu_processes": m} for m in p["cpu_processes"] if m]
        if "pinned" in p["placements"]:
            # the grid's own intervals and counts that pinned_* name: a grid narrowed on the command
            # line (or a claim tier) narrows the pinned points alike
            pts += [{"switch_interval": si, "cpu_threads": n, "cpu_processes": 0, "placement": "pinned"}
                    for si in p["switch_intervals"] if si in p["pinned_intervals"]
                    for n in p["cpu_threads"] if n in p["pinned_threads"]]
        return pts

    def config(self, p):
        return {k: v for k, v in super().config(p).items() if k not in self.extent_params}

    def check(self, p):
        if p["switch_interval"] is not None:
            raise ParameterError("convoy: use switch_intervals (a list) instead of switch_interval")
        if max(p["cpu_threads"] + p["cpu_processes"]) > 64:
            raise ParameterError("convoy: more than 64 CPU-bound threads or processes is not a meaningful point")
        pinned = "pinned" in p["placements"] and p["pinned_intervals"]
        if pinned and p["affinity"] is not None:
            raise ParameterError("convoy: pinned points choose their own CPUs; unset affinity or pinned_intervals")
        if pinned and len(os.sched_getaffinity(0)) < 2:
            raise ParameterError("convoy: pinned points need at least 2 CPUs (the CPU threads get one of their own); "
                                 "set pinned_intervals=[]")

    def run_sample(self, p, point, cond):
        w = window(p, point)
        sample = echo_sample({**p, "window_s": w}, cond, cpu_threads=point["cpu_threads"],
                             cpu_processes=point["cpu_processes"],
                             switch=point["switch_interval"], server_affinity=p["affinity"],
                             client_affinity=p["affinity"], placement=point.get("placement", "os"),
                             timer_slack_ns=slack_asked(p["timer_slack_ns"]))
        sample.result["window_s_counted"] = w       # the window this point counted (window_s: the least)
        return sample


def waits(p: dict, point: dict) -> float:
    """What a sample waits out: the client's warm-up and its windows at the point's length."""
    return echo_waits({**p, "window_s": window(p, point)}, point)


EXPERIMENT = Convoy()
