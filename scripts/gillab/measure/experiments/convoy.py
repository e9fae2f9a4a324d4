"""The convoy effect: an echo server's requests/second next to CPU-bound threads (document 000,
pbts13_t3 and the in-text numbers of pbts13_t6), and the variant with the CPU work in processes.

A sample is one server process (under the condition measured) and one client process (always
the same interpreter, the GIL build ``3.13.5`` when it exists, so that only the server
changes); the client counts requests in 1-second windows after a warm-up window, and every
window is stored as a row.  A point's rate is the median over its **runs** (each run's median
window) with its interval over runs: windows of one process are not independent samples."""
from __future__ import annotations

from ..experiment import Experiment
from ..profiles import Param, ParameterError
from .echo import ECHO_PARAMS, SERVER_CODE, SERVER_WORKLOADS, counts, echo_sample, echo_waits, intervals


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
        **ECHO_PARAMS,
    }
    point_keys = ("switch_interval", "cpu_threads", "cpu_processes")
    workloads = SERVER_WORKLOADS
    measuring_code = SERVER_CODE

    def points(self, p):
        pts = [{"switch_interval": si, "cpu_threads": n, "cpu_processes": 0}
               for si in p["switch_intervals"] for n in p["cpu_threads"]]
        pts += [{"switch_interval": 0.005, "cpu_threads": 0, "cpu_processes": m} for m in p["cpu_processes"] if m]
        return pts

    def check(self, p):
        if p["switch_interval"] is not None:
            raise ParameterError("convoy: use switch_intervals (a list) instead of switch_interval")
        if max(p["cpu_threads"] + p["cpu_processes"]) > 64:
            raise ParameterError("convoy: more than 64 CPU-bound threads or processes is not a meaningful point")

    def run_sample(self, p, point, cond):
        return echo_sample(p, cond, cpu_threads=point["cpu_threads"], cpu_processes=point["cpu_processes"],
                           switch=point["switch_interval"], server_affinity=p["affinity"],
                           client_affinity=p["affinity"])


waits = echo_waits      # what a sample waits out: the client's windows


EXPERIMENT = Convoy()
