"""The data race of document 000: ``sum += 1`` from several threads, at the document's smallest
switch interval and at the default.  Counts lost updates; the document published no numbers,
only the setting.  Every thread waits with ``timer_slack_ns`` (1 ns, the smallest, in every
profile: at 1 us the OS's own 50 us would stretch each wait for the GIL fifty times), and each run
records the slack its threads had and the GIL's hand-offs while they raced."""
from __future__ import annotations

from ..profiles import TIMER_SLACK, Param, ParameterError, positive_ints, slack_asked, switch_interval
from ..protocol import Experiment


def _intervals_or_default(value) -> list:
    from ..profiles import as_list

    out = [None if str(v).lower() in ("default", "none") else switch_interval(v) for v in as_list(value)]
    if not out:
        raise ValueError("needs at least one switch interval (a number, or default)")
    return out


class DataRace(Experiment):
    name = "data_race"
    notebook = "06_data_race.md"
    workload = "data_race"
    workloads = ("data_race", "_gil")
    measuring_code = (slack_asked,)
    title = "The data race: sum += 1 in several threads"
    document = "000_7286df4c8fefdbad.txt (Python behind the scenes #13), the GIL's reason to exist"
    params = {
        "threads": Param("threads", positive_ints, "thread counts, e.g. [2, 4, 8]"),
        "iterations": Param("iterations", positive_ints, "increments per thread; the document's f() does 1000"),
        "switch_intervals": Param("switch_intervals", _intervals_or_default,
                                  "switch intervals: numbers in seconds, or default (5 ms, not set)"),
        "timer_slack_ns": TIMER_SLACK,
    }
    point_keys = ("threads", "iterations", "switch_interval")

    def points(self, p):
        return [{"threads": t, "iterations": n, "switch_interval": si}
                for si in p["switch_intervals"] for n in p["iterations"] for t in p["threads"]]

    def workload_params(self, p, point):
        return {"threads": point["threads"], "iterations": point["iterations"],
                "timer_slack_ns": slack_asked(p["timer_slack_ns"])}

    def check(self, p):
        if p["switch_interval"] is not None:
            raise ParameterError("data_race: use switch_intervals (a list) instead of switch_interval")


EXPERIMENT = DataRace()
