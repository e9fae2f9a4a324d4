"""The data race of document 000: a global ``sum += 1`` in several threads.

Each of ``threads`` threads runs ``f()``, which adds 1 to a module-level ``sum``
``iterations`` times (the document's f() does it 1000 times).  Updates are lost when a thread
is interrupted (with the GIL) or runs in parallel (without it) between reading and writing
``sum``.  The result counts them: expected - final.

With ``timer_slack_ns`` the main thread sets its timer slack before it starts the threads (they
inherit it; a waiting thread's timed wait is stretched by it, :mod:`_gil`), and each thread reads
back what it has; where the build keeps the GIL's count of hand-offs it is read around the timed
part, so each run says how often the threads changed hands while they raced.
"""
import sys
import threading

from _common import main, timed_threads
from _gil import set_timer_slack, switch_counter, timer_slack

sum = 0  # noqa: A001 - the document's name


def f(iterations):
    global sum
    for _ in range(iterations):
        sum += 1


def run(params):
    global sum
    threads, iterations = int(params["threads"]), int(params["iterations"])
    if threads <= 0 or iterations <= 0:
        raise ValueError("threads and iterations must be >= 1")
    if params.get("timer_slack_ns") is not None:
        set_timer_slack(params["timer_slack_ns"])
    slacks = []
    lock = threading.Lock()

    def counted(n):
        got = timer_slack()       # before the work, outside the racing loop
        with lock:
            slacks.append(got)
        f(n)

    switches = switch_counter()
    sum = 0
    first = switches() if switches else None
    seconds = timed_threads(counted, [(iterations,)] * threads)
    last = switches() if switches else None
    expected = threads * iterations
    known = [x for x in slacks if x is not None]
    return {"final": sum, "expected": expected, "lost": expected - sum,
            "lost_fraction": (expected - sum) / expected, "seconds": seconds,
            "gil_switches": None if first is None else last - first,
            "timer_slack_ns_asked": params.get("timer_slack_ns"),
            "timer_slack_ns_min": min(known) if known else None,
            "timer_slack_ns_max": max(known) if known else None}


if __name__ == "__main__":
    sys.exit(main(run))
