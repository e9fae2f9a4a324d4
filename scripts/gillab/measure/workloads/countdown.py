"""Countdown over threads (document 000, first table).

``countdown(n)`` decrements ``n`` to zero; ``total`` decrements are split evenly over
``threads`` threads.  The result is the wall time from creating the threads to joining them.

With ``timer_slack_ns`` the main thread sets its timer slack first (:mod:`_gil`: a waiting
thread's timed wait is stretched by it) and every thread it starts inherits it.  What each thread
had in force is read back inside the thread, and the voluntary context switches of the timed part
are counted: each hand-off of the GIL puts the thread that gave it up to sleep at least once, so
they bound the hand-offs the interval asked for from above.  Where the build keeps the GIL's own
count of hand-offs (:func:`_gil.switch_counter`) it is read before and after the timed part: the
switch interval as achieved, in hand-offs a second.
"""
import resource
import sys
import threading

from _common import main, timed_threads
from _gil import set_timer_slack, switch_counter, timer_slack


def countdown(n):
    while n > 0:
        n -= 1


def run(params):
    threads = int(params["threads"])
    total = int(params["total_decrements"])
    if threads <= 0:
        raise ValueError("threads must be >= 1")
    if params.get("timer_slack_ns") is not None:
        set_timer_slack(params["timer_slack_ns"])
    per_thread = total // threads
    slacks = []
    lock = threading.Lock()

    def counted(n):
        got = timer_slack()       # before the work: what this thread waits with
        with lock:
            slacks.append(got)
        countdown(n)

    switches = switch_counter()
    before = resource.getrusage(resource.RUSAGE_SELF)
    first = switches() if switches else None
    seconds = timed_threads(counted, [(per_thread,)] * threads)
    last = switches() if switches else None
    after = resource.getrusage(resource.RUSAGE_SELF)
    known = [s for s in slacks if s is not None]
    return {"seconds": seconds, "decrements_per_thread": per_thread,
            "timer_slack_ns_asked": params.get("timer_slack_ns"),
            "timer_slack_ns_min": min(known) if known else None,
            "timer_slack_ns_max": max(known) if known else None,
            "gil_switches": None if first is None else last - first,
            "ctx_voluntary_timed": after.ru_nvcsw - before.ru_nvcsw,
            "ctx_involuntary_timed": after.ru_nivcsw - before.ru_nivcsw}


if __name__ == "__main__":
    sys.exit(main(run))
