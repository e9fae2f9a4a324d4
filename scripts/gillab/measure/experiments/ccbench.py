"""Document 001 (Antoine Pitrou, "Reworking the GIL", python-dev, 2009): his ccbench, re-written
(``workloads/ccbench.py``): throughput of a task over 1-4 threads (and processes, the no-lock
reference), and the latency of a UDP echo thread next to 0-3 threads running a task, under the
old GIL (2.7.18: a check every 100 "ticks"), the new GIL as shipped (3.9.2: a 5 ms switch
interval with forced switching), today's builds and no GIL at all.

A sample is one process: one (test, task, workers, threads, policy).  A latency sample stores
one row per ping (its round trip and one-way time, or none: starved past the bound).  A ``tool``
sample is ccbench's own latency test, step for step (its inputs, its 1 s pause, 20 pings 0.1 s
apart, background threads that compute for 3 s and then stop, the mean one-way time): the
claims that quote the tool's number are judged on it; our bounded echo variant (``latency``)
stands beside it as a finding.  A GIL
policy (``switch:<seconds>`` or ``check:<ticks>``) applies only to the builds that have that
mechanism; elsewhere the point is not measured (:meth:`CCBench.applies`)."""
from __future__ import annotations

from .. import runner
from ..protocol import Experiment
from ..profiles import Param, ParameterError, as_list, choices, one_of, positive_float, positive_ints


TASKS = ("pi", "regex", "bz2", "countdown")


def _counts(value) -> list[int]:
    items = [int(v) for v in as_list(value)]
    if not items or min(items) < 0 or len(set(items)) != len(items):
        raise ValueError(f"needs distinct whole numbers >= 0, got {items}")
    return items


def _policies(value) -> list[str]:
    out = []
    for v in as_list(value):
        kind, _, x = str(v).partition(":")
        if v == "default":
            out.append(v)
        elif kind == "switch" and _positive(x) and float(x) >= 1e-6:
            out.append(f"switch:{float(x):g}")
        elif kind == "check" and x.isdigit() and int(x) > 0:
            out.append(f"check:{int(x)}")
        else:
            raise ValueError(f"{v!r} is not a policy: default, switch:<seconds >= 1e-6> or check:<ticks > 0>")
    return out


def _positive(x: str) -> bool:
    try:
        return float(x) > 0
    except ValueError:
        return False


class CCBench(Experiment):
    name = "ccbench"
    notebook = "07_ccbench.md"
    workload = "ccbench"
    title = "ccbench: throughput and latency, old GIL against new"
    document = "001_7d111dc3ddcecd7e.txt (Reworking the GIL, python-dev 2009), ccbench"
    params = {
        "tests": Param("tests", choices(("throughput", "latency", "tool"), "tests"),
                       "throughput, latency (our bounded echo) and tool (ccbench's own latency protocol)"),
        "tasks": Param("tasks", choices(TASKS, "tasks"), "tasks among pi, regex, bz2, countdown"),
        "threads": Param("threads", positive_ints, "computing threads for throughput, e.g. [1, 2, 3, 4]"),
        "workers": Param("workers", choices(("threads", "processes"), "workers"),
                         "threads, and processes as the reference without a lock"),
        "bg_threads": Param("bg_threads", _counts, "background threads for latency, e.g. [0, 1, 2, 3]"),
        "duration": Param("duration", positive_float, "seconds of one throughput run (ccbench 2.0)"),
        "latency_duration": Param("latency_duration", positive_float, "seconds of pings in one latency run (2.0)"),
        "interval": Param("interval", positive_float, "seconds between pings (ccbench 0.1)"),
        "bound": Param("bound", positive_float, "seconds a ping may wait for its echo before it counts as starved"),
        "policies": Param("policies", _policies,
                          "GIL policies for the policy sweep, e.g. default, switch:0.001, check:1000"),
        "policy_task": Param("policy_task", one_of(TASKS, "policy_task"), "the task of the policy sweep"),
        "tool_tasks": Param("tool_tasks", choices(TASKS, "tool_tasks"), "tasks of ccbench's own latency protocol"),
        "tool_bg_threads": Param("tool_bg_threads", _counts,
                                 "background threads of ccbench's own latency protocol, e.g. [1]"),
    }
    point_keys = ("test", "task", "workers", "threads", "policy")

    def points(self, p):
        pts = []
        if "throughput" in p["tests"]:
            pts += [{"test": "throughput", "task": t, "workers": w, "threads": n, "policy": "default"}
                    for t in p["tasks"] for w in p["workers"] for n in p["threads"] if w == "threads" or n > 1]
        if "latency" in p["tests"]:
            pts += [{"test": "latency", "task": t, "workers": "threads", "threads": n, "policy": "default"}
                    for t in p["tasks"] for n in p["bg_threads"]]
            pts += [{"test": "latency", "task": p["policy_task"], "workers": "threads", "threads": 1, "policy": pol}
                    for pol in p["policies"] if pol != "default"]
        if "tool" in p["tests"]:
            pts += [{"test": "tool", "task": t, "workers": "threads", "threads": n, "policy": "default"}
                    for t in p["tool_tasks"] for n in p["tool_bg_threads"]]
        return pts

    def check(self, p):
        if p["switch_interval"] is not None:
            raise ParameterError("ccbench: set the GIL policy with policies (switch:<s>, check:<ticks>), "
                                 "not switch_interval")
        if p["interval"] >= p["latency_duration"]:
            raise ParameterError("ccbench: the ping interval must be shorter than latency_duration")
        if p["bound"] < p["interval"]:
            raise ParameterError("ccbench: bound (the longest wait for an echo) must be at least one interval")
        if max(p["threads"] + p["bg_threads"] + p["tool_bg_threads"]) > 64:
            raise ParameterError("ccbench: more than 64 threads is not a meaningful point")

    def applies(self, point, ident) -> str | None:
        """None where ``point`` can be measured under the build ``ident``, else why not."""
        kind = point["policy"].partition(":")[0]
        old = ident.version_short.startswith("2.")
        if kind == "switch" and old:
            return "the old GIL has no switch interval"
        if kind == "check" and not old:
            return "the new GIL has no check interval"
        return None

    def run_sample(self, p, point, cond):
        if point["test"] == "tool":     # the tool's own constants: only the safety bound is ours
            return runner.run(cond, self.workload, {"test": "tool", "task": point["task"], "threads": point["threads"],
                                                    "bound": p["bound"], "check_interval": None},
                              timeout=p["timeout"], affinity=p["affinity"])
        kind, _, x = point["policy"].partition(":")
        params = {"test": point["test"], "task": point["task"], "workers": point["workers"],
                  "threads": point["threads"], "interval": p["interval"], "bound": p["bound"],
                  "duration": p["duration"] if point["test"] == "throughput" else p["latency_duration"],
                  "check_interval": int(x) if kind == "check" else None}
        return runner.run(cond, self.workload, params, timeout=p["timeout"],
                          switch_interval=float(x) if kind == "switch" else None, affinity=p["affinity"])


# the tool's test waits its client's pause after the ready datagram and its pings' duration
# (the workload's TOOL_READY_WAIT + TOOL_DURATION; tests/test_budget.py reads them there)
TOOL_WAITS = 3.0


def waits(p, point) -> float:
    """Seconds a sample waits out its protocol (:func:`gillab.measure.experiments.waits`): a
    throughput run computes for ``duration``, a latency run pings for ``latency_duration``, the
    tool's test pauses after its ready datagram and pings for its own fixed time
    (:data:`TOOL_WAITS`)."""
    if point["test"] == "tool":
        return TOOL_WAITS
    return p["duration"] if point["test"] == "throughput" else p["latency_duration"]


EXPERIMENT = CCBench()
